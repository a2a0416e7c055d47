package say

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

var where = Where{Op: zones.OpDelete, Areas: []zones.Area{{Path: "inbox"}, {Path: "."}}}

// whereBut is a Where whose whole vault has folders where the op is not.
var whereBut = Where{Op: zones.OpModify, Areas: []zones.Area{{Path: ".", Except: []string{"archive", "мета"}}, {Path: "мета/бобер"}}}

// in is the zone root a refused path lies in.
func in(p string, kind string) zones.Root {
	at, err := zones.Normalize("/v", p)
	if err != nil {
		panic(err)
	}
	return zones.Root{Path: at, Pattern: kind == "pattern", Control: kind == "control", Own: kind == "own"}
}

// samples holds every message of the catalogue with each field set to a
// value that can be found again in the text.
var samples = []Message{
	Refused{Op: zones.OpDelete, Path: "notes/a.md", Zone: zones.Edit, Where: where},
	Refused{Op: zones.OpModify, Path: "archive/a.md", Zone: zones.Protected, In: in("archive", ""), Where: whereBut},
	Refused{Op: zones.OpRead, Path: "notes/.env", Zone: zones.Hidden, In: in("**/.env", "pattern"), Where: where},
	Refused{Op: zones.OpCreate, Path: ".git/hooks/x", Zone: zones.Protected, In: in(".git", "control"), Where: where},
	Refused{Op: zones.OpCreate, Path: ".mcp.json", Zone: zones.Protected, In: in(".mcp.json", "control"), Where: where},
	Refused{Op: zones.OpCreate, Path: "n/.vaultgate-x", Zone: zones.Protected, In: in("n/.vaultgate-x", "own"), Where: where},
	NoZoneRefused{Op: zones.OpCreate, Path: "loose/b.md", Where: Where{Op: zones.OpCreate}},
	OutsideRefused{Op: zones.OpRead, Path: "/etc/passwd", Where: Where{Op: zones.OpRead, Areas: []zones.Area{{Path: "notes"}}}},
	SubtreeRefused{Op: zones.OpDelete, Path: "notes", Inside: "notes/keep", Zone: zones.Protected, Where: where},
	SubtreeHidden{Op: zones.OpMoveOut, Path: "notes", Where: Where{Op: zones.OpMoveOut, Areas: []zones.Area{{Path: "inbox"}}}},
	UnknownPath{Op: zones.OpModify, Command: "tee"},
	UnknownRead{Command: "cat"},
	UnconfinedRun{Program: "python3"},
	ZoneRoot{Op: zones.OpDelete, Path: "journal"},
	ZoneRootInside{Op: zones.OpMoveOut, Path: "notes", Inside: "notes/journal"},
	Launder{Source: "archive/x.md", Path: "scratch/x.md", From: zones.Edit, To: zones.Write},
	LinkSource{Source: "notes/x.md", Path: "scratch/x.md", Zone: zones.Edit},
	HardLinks{Op: zones.OpModify, Path: "scratch/l.md", Links: 3},
	Symlink{Op: zones.OpModify, Path: "scratch/ln", Target: "notes/real.md"},
	LinkOutside{Path: "notes/keys", Target: "/home/me/.ssh"},
	LinkUnreadable{Path: "notes/l", Target: "../секреты/x.md"},
	LinkControl{Path: "notes/cfg", Target: "../.git/config"},
	LinkUnplaced{Path: "notes/d", Target: "a/../b"},
	ReadFirst{Op: zones.OpModify, Path: "notes/r.md"},
	RuleFailed{Rule: "mine", Problem: "boom"},
	RuleWithoutCheck{Rule: "empty-rule"},
	RuleEvalFailed{Rule: "cel-rule", Problem: "no such key: path"},
	RuleNotCompiled{Rule: "uncompiled-rule"},
	where,
	whereBut,
	ZoneAllows{Mode: zones.Write},
	ZoneAllows{Mode: zones.Edit},
	ZoneAllows{Mode: zones.Create},
	ZoneAllows{Mode: zones.Protected},
	ZoneAllows{Mode: zones.Hidden},
	ZoneAllows{Mode: zones.NoZone},

	ExecRefused{Program: "python3", Why: WhyInterpreter.Text(English)},
	ExecNotAllowed{Program: "node", Allowed: []string{"rg", "jq"}},
	BashRemove{Path: "notes/a.md", Command: "rm", Zone: zones.Edit, Where: where},
	BashRename{Op: zones.OpMoveOut, Path: "notes/a.md", Command: "mv", Zone: zones.Edit, Tool: "move"},
	BashParse{Problem: "1:5: unclosed quote"},
	GitHidden{},
	BashDynamic{Command: "$cmd"},
	BashPrivilege{Command: "sudo"},
	BashNoCwd{},
	BashAnalysisFailed{Problem: "walker bug"},
	BashTooLarge{MaxKiB: 64},
	BashTooDeep{Detail: "bash -c"},
	BashWallRequired{Problem: "no user namespaces"},
	BashCwdOutside{Dir: "/etc"},
	WhyInterpreter, WhyVersionControl, WhyBuildTool, WhyScript, WhyShellBuiltin, WhyUnknownProgram,
	WhyUnknownOption, WhyProgramOption, WhyDynamicArithmetic, WhyDangerousEnv, WhySedScript,
	WhyDynamicExpansion, WhyDynamicArgument, WhyMachine, WhyCdMayFail, WhyUnexplained,
	BashResult{ExitCode: 7, TimedOut: true, Timeout: 30 * time.Second, Stdout: "out-line", Stderr: "err-line"},
	BashNotApplied{Refusals: []string{"first-refusal", "second-refusal"}},
	BashConflict{Path: "notes/synced.md"},
	BashOverLimit{Key: "max_changed_files", Limit: 1000},
	BashUnfinished{},
	BashChangesUnread{Problem: "upper layer unreadable"},
	BashCommitFailed{Problem: "no space left"},
	BashNotCommitted{Problem: "read-only file system"},
	BashNotKept{Problem: "no space left on device"},
	SpecialFile{Path: "notes/fifo"},
	UnsafeMode{Path: "notes/open", Mode: "3777", Setgid: true, Sticky: true, WorldWritable: true},

	NotFound{Path: "a/missing.md"},
	IsFolder{Path: "a/dir"},
	NotFolder{Path: "a/file"},
	NotRegular{Path: "a/fifo"},
	NotText{Path: "a/bin", Size: 4096},
	TooBig{Path: "a/big", Size: 9999999, Max: 2097152},
	EditNoMatch{Path: "a/e.md"},
	EditManyMatches{Path: "a/e.md", Count: 4},
	DestExists{Path: "a/dst"},
	DestFolder{Path: "a/dstdir"},
	OverwriteFolder{Path: "a/srcdir"},
	FolderNotEmpty{Path: "a/full"},
	MoveIntoSelf{Path: "a/self"},
	SamePath{Path: "a/same"},
	ChangedMeantime{Path: "a/changed"},
	TooManyEntries{Path: "a/huge", Max: 100000},
	OutsideVault{Path: "/tmp/x"},
	NoMatches{},
	EmptyFolder{Path: "a/empty"},
	MoreResults{Max: 50},
	MoreEntries{Max: 5000},
	ReadCut{Path: "a/long.md", From: 1, To: 2000, Next: 2001, Shown: 102400, Size: 1000042, LineCut: true},
	Wrote{Bytes: 12, Path: "a/w.md"},
	Edited{Count: 2, Path: "a/e.md"},
	Moved{From: "a/from", To: "a/to"},
	Deleted{Path: "a/gone"},

	BadArg{Tool: "read", Arg: "path", Problem: ArgRequired{}},
	BadArg{Tool: "read", Problem: ArgsNotObject{}},
	ArgsNotObject{}, ArgUnknown{}, ArgRequired{}, ArgNotString{}, ArgNotBool{}, ArgNotWhole{}, ArgEmpty{},
	ArgEmptyPath{}, ArgNUL{}, ArgBadPath{Problem: "climbs out"}, ArgHomeUnknown{}, ArgNegative{}, ArgRange{Min: 1, Max: 10}, ArgSecondsRange{Min: 1, Max: 600},
	ArgSameAs{Other: "old_string"}, ArgBadRegex{Problem: "missing closing )"}, ArgBadPattern{},

	Instructions{Zones: []ZoneLine{{Path: "notes", Mode: zones.Edit}, {Path: "мета/бобер", Mode: zones.Write}}},
	HookToolRefused{Tool: "WebFetch", Server: "vault"},
	RunBuiltinRefused{Tool: "Write", Instead: "write", Server: "vault"}, RunBuiltinRefused{Tool: "LS", Server: "vault"},
	HookBashOff{},
	HookNoExec{Problem: "no vaultgate beside vaultgate-hook"},
	HookSandboxOn{Settings: "/home/u/.claude/settings.json"},
	HookBuiltinRefused{Tool: "EnterWorktree", Why: WhyWorktree},
	HookBuiltinRefused{Tool: "Monitor", Why: WhyMonitor},
	HookBuiltinRefused{Tool: "Workflow", Why: WhyWorkflow},
	HookBuiltinRefused{Tool: "PowerShell", Why: WhyPowerShell},
	HookBuiltinRefused{Tool: "LSP", Why: WhyUnjudgedRead},
	HookBuiltinRefused{Tool: "ReadMcpResourceTool", Why: WhyOtherServers},
	HookBuiltinRefused{Tool: "CronCreate", Why: WhyDurableCron},
	HookBuiltinRefused{Tool: "Agent", Why: WhyAgentIsolation},
	AuditFailed{Problem: "disk full"},
	InternalError{Tool: "list", Problem: "nil map"},
	UnknownTool{Tool: "teleport"},
	VaultLockFailed{Problem: "read-only file system"},
	HistoryFailed{Path: "a/kept.md", Problem: "no space left on device"},

	PathParamDoc, ReadTitle, ReadDoc, ReadOffsetDoc, ReadLimitDoc, WriteTitle, WriteDoc, WriteContentDoc, EditTitle, EditDoc, EditOldDoc, EditNewDoc, EditReplaceAllDoc, MoveTitle, MoveDoc, MoveSourceDoc, MoveDestDoc, MoveOverwriteDoc, DeleteTitle, DeleteDoc, DeleteRecursiveDoc, ListTitle, ListDoc, ListPathDoc, SearchTitle, SearchDoc, SearchQueryDoc, SearchPathDoc, SearchRegexDoc, SearchGlobDoc, BashTitle, BashDoc, BashTxnDoc, BashCommandDoc,
	ListDepthDoc{Max: 10}, SearchMaxDoc{Default: 100, Max: 1000}, BashTimeoutDoc{Default: 30, Max: 600},
}

// printfLeft finds a verb left unformatted, or fmt's complaint about one.
var printfLeft = regexp.MustCompile(`%!|%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z]`)

func TestEveryMessageRenders(t *testing.T) {
	for _, m := range samples {
		name := reflect.TypeOf(m).Name()
		texts := map[Lang]string{}
		for _, l := range Langs {
			text := m.Text(l)
			texts[l] = text
			if strings.TrimSpace(text) == "" {
				t.Errorf("%s in %s: empty", name, l)
				continue
			}
			if v := printfLeft.FindString(text); v != "" {
				t.Errorf("%s in %s: %q is left in %q", name, l, v, text)
			}
			for _, want := range fieldValues(l, reflect.ValueOf(m)) {
				if !strings.Contains(text, want) {
					t.Errorf("%s in %s: %q does not tell %q", name, l, text, want)
				}
			}
		}
		if texts[English] == texts[Russian] {
			t.Errorf("%s: the same in both languages: %q", name, texts[English])
		}
		if m.Text("") != texts[English] {
			t.Errorf("%s: the zero Lang is not English", name)
		}
	}
}

// fieldValues is what a message must tell of its fields, in l: every
// string, number, zone and op, and the text of every nested message.
func fieldValues(l Lang, v reflect.Value) []string {
	var out []string
	switch x := v.Interface().(type) {
	case zones.Op:
		return []string{verb(x, l)}
	case zones.Mode:
		return []string{x.String()}
	case time.Duration:
		return []string{x.String()}
	case Where:
		// names the op as an activity, and the whole vault in words
		out = append(out, gerund(x.Op, l))
		for _, a := range x.Areas {
			out = append(out, strings.TrimPrefix(a.Path, "."))
			out = append(out, a.Except...)
		}
		return out
	case zones.Root:
		// what the refused path lies in is named by its path alone
		if x.Path.IsZero() {
			return nil
		}
		return []string{x.Path.String()}
	case ZoneAllows:
		return nil // it describes its mode rather than naming it
	}
	switch v.Kind() {
	case reflect.Interface:
		if m, ok := v.Interface().(Message); ok {
			return []string{m.Text(l)}
		}
	case reflect.String:
		if v.String() != "" {
			out = append(out, v.String())
		}
	case reflect.Int, reflect.Int64:
		out = append(out, strconv.FormatInt(v.Int(), 10))
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, fieldValues(l, v.Index(i))...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				out = append(out, fieldValues(l, v.Field(i))...)
			}
		}
	}
	return out
}

// Each zone kind is described in its own words, in every language.
func TestZoneAllowsDiffer(t *testing.T) {
	for _, l := range Langs {
		seen := map[string]zones.Mode{}
		for _, m := range zones.Kinds() {
			text := ZoneAllows{m}.Text(l)
			if text == "" || (l == Russian && text == ZoneAllows{m}.Text(English)) {
				t.Errorf("%s: %s is described %q", l, m, text)
			}
			if other, dup := seen[text]; dup {
				t.Errorf("%s: %s and %s are both described %q", l, other, m, text)
			}
			seen[text] = m
		}
	}
}

// TestSamplesCoverCatalogue fails when a message type, an ExecWhy or a Doc is
// added to the package without a sample above: it would go untested.
func TestSamplesCoverCatalogue(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var types, whys, docs []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && d.Name.Name == "Text" {
					types = append(types, recvName(d.Recv.List[0].Type))
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if vs, ok := s.(*ast.ValueSpec); ok {
						for i, val := range vs.Values {
							if lit, ok := val.(*ast.CompositeLit); ok {
								switch exprName(lit.Type) {
								case "ExecWhy":
									whys = append(whys, vs.Names[i].Name)
								case "Doc":
									docs = append(docs, vs.Names[i].Name)
								}
							}
						}
					}
				}
			}
		}
	}
	sampled := map[string]bool{}
	for _, m := range samples {
		sampled[reflect.TypeOf(m).Name()] = true
	}
	for _, name := range types {
		if !sampled[name] {
			t.Errorf("message %s has no sample in say_test.go", name)
		}
	}
	if len(types) < 60 {
		t.Errorf("found only %d message types: the source scan is broken", len(types))
	}
	var sampledWhys []ExecWhy
	for _, m := range samples {
		if w, ok := m.(ExecWhy); ok {
			sampledWhys = append(sampledWhys, w)
		}
	}
	if len(sampledWhys) != len(whys) {
		t.Errorf("%d ExecWhy values (%v), %d sampled", len(whys), whys, len(sampledWhys))
	}
	var sampledDocs []Doc
	for _, m := range samples {
		if d, ok := m.(Doc); ok {
			sampledDocs = append(sampledDocs, d)
		}
	}
	if len(sampledDocs) != len(docs) {
		t.Errorf("%d Doc values (%v), %d sampled", len(docs), docs, len(sampledDocs))
	}
	for i, d := range sampledDocs {
		if slices.Index(sampledDocs, d) != i {
			t.Errorf("Doc %q is sampled twice, or two share its words", d.en)
		}
	}
	for i, w := range sampledWhys {
		if slices.Index(sampledWhys, w) != i {
			t.Errorf("ExecWhy %q is sampled twice, or two share its words", w.en)
		}
	}
}

func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	return exprName(e)
}

func exprName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

func TestParseLang(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Lang
		ok   bool
	}{{"en", English, true}, {"ru", Russian, true}, {"", "", false}, {"RU", "", false}, {"de", "", false}} {
		got, err := ParseLang(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ParseLang(%q) = %q, %v", c.in, got, err)
		}
	}
}

// The wordings that tests elsewhere and the README quote stay as they are.
func TestQuotedWordings(t *testing.T) {
	for _, c := range []struct {
		m    Message
		l    Lang
		want string
	}{
		{Refused{Op: zones.OpDelete, Path: "notes/a.md", Zone: zones.Edit, Where: Where{Op: zones.OpDelete, Areas: []zones.Area{{Path: "inbox"}}}}, English,
			`delete "notes/a.md": zone edit (create, change and move, but never delete). Deleting is allowed in: inbox.`},
		{Refused{Op: zones.OpDelete, Path: "notes/a.md", Zone: zones.Edit, Where: Where{Op: zones.OpDelete}}, Russian,
			`удалить «notes/a.md» нельзя: зона edit (создавать, менять и перемещать, но не удалять). Удалять нельзя нигде в этом хранилище.`},
		{Where{Op: zones.OpCreate, Areas: []zones.Area{{Path: "."}}}, English, `Creating is allowed in: the whole vault (.).`},
		{whereBut, English, `Changing existing files is allowed in: the vault (.) outside archive, мета; мета/бобер.`},
		{whereBut, Russian, `Менять существующие файлы можно в: хранилище (.) вне archive, мета; мета/бобер.`},
		{Refused{Op: zones.OpModify, Path: "archive/a.md", Zone: zones.Protected, In: in("archive", ""), Where: whereBut}, English,
			`change "archive/a.md": zone protected (read only). It lies in archive. Changing existing files is allowed in: the vault (.) outside archive, мета; мета/бобер.`},
		{BadArg{Tool: "read", Arg: "path", Problem: ArgRequired{}}, English, `read: argument "path" is required`},
		{BadArg{Tool: "read", Problem: ArgsNotObject{}}, English, `read: arguments must be a JSON object`},
		{BashResult{ExitCode: 0, Stdout: "hi"}, English, "exit code: 0\nstdout:\nhi\n"},
		{Instructions{Zones: []ZoneLine{{Path: "мета/бобер", Mode: zones.Write}}}, Russian, "- мета/бобер: write (всё, включая удаление)\n"},
	} {
		if got := c.m.Text(c.l); !strings.HasSuffix(got, c.want) {
			t.Errorf("%T in %s = %q, want it to end %q", c.m, c.l, got, c.want)
		}
	}
}
