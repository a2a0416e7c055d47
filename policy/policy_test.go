package policy

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

func table(t testing.TB) *zones.Table {
	t.Helper()
	tab, err := zones.New("/v", []zones.Entry{
		{Path: "мета/бобер", Mode: zones.Write},
		{Path: "💬 чаты", Mode: zones.Create},
		{Path: ".", Mode: zones.Edit},
		{Path: ".obsidian", Mode: zones.Protected},
		{Path: "мета", Mode: zones.Protected},
		{Path: "секрет", Mode: zones.Hidden},
		{Path: "w2", Mode: zones.Write},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// at is p normalised in the test vault /v.
func at(p string) zones.Path {
	np, err := zones.Normalize("/v", p)
	if err != nil {
		panic(err)
	}
	return np
}

func judge(t testing.TB, lang say.Lang, tool string, effects ...Effect) *Deny {
	t.Helper()
	tab := table(t)
	Zoned(tab, effects)
	c := &ToolCall{Tool: tool, Effects: effects, Zones: tab, Lang: lang, Session: &Session{ID: "s", State: NewState()}}
	return Builtin(true).Judge(c)
}

// TestEveryCell runs each effect in a file of each zone through the chain.
func TestEveryCell(t *testing.T) {
	paths := map[zones.Mode]string{
		zones.Write: "мета/бобер/f.md", zones.Edit: "notes/f.md", zones.Create: "💬 чаты/f.md",
		zones.Protected: "мета/f.md", zones.Hidden: "секрет/f.md",
	}
	noZone, err := zones.New("/v", []zones.Entry{{Path: "notes", Mode: zones.Edit}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for mode, p := range paths {
		for op := zones.OpRead; op <= zones.OpLink; op++ {
			e := Effect{Op: op, Path: at(p)}
			if op == zones.OpMoveIn || op == zones.OpLink {
				e.Source = at("мета/бобер/src.md") // from a write zone: never laundering
			}
			d := judge(t, "en", "x", e)
			want := mode.Allows(op)
			if op == zones.OpLink {
				want = mode == zones.Write
			}
			if (d == nil) != want {
				t.Errorf("%s in %s: deny=%v, want allowed=%v", op, mode, d, want)
			}
		}
	}
	for op := zones.OpRead; op <= zones.OpLink; op++ {
		e := []Effect{{Op: op, Path: at("other/f.md"), Source: at("notes/a")}}
		Zoned(noZone, e)
		c := &ToolCall{Effects: e, Zones: noZone}
		if d := Builtin(false).Judge(c); d == nil || !strings.Contains(d.Reason, "no zone") {
			t.Errorf("%s in no zone: %v", op, d)
		}
	}
}

func TestMoveInOverExistingIsModify(t *testing.T) {
	if d := judge(t, "en", "move", Effect{Op: zones.OpMoveIn, Path: at("💬 чаты/a.md"), Source: at("мета/бобер/b.md"), Exists: true}); d == nil {
		t.Error("move over an existing file in a create zone was allowed")
	}
	if d := judge(t, "en", "move", Effect{Op: zones.OpMoveIn, Path: at("💬 чаты/new.md"), Source: at("мета/бобер/b.md")}); d != nil {
		t.Errorf("move to a new name in a create zone: %v", d)
	}
}

func TestLaundering(t *testing.T) {
	d := judge(t, "en", "move", Effect{Op: zones.OpMoveIn, Path: at("мета/бобер/a.md"), Source: at("notes/a.md")})
	if d == nil || !strings.Contains(d.Reason, "from zone edit to zone write") {
		t.Errorf("edit → write: %v", d)
	}
	if d := judge(t, "en", "move", Effect{Op: zones.OpMoveIn, Path: at("notes/a.md"), Source: at("мета/бобер/a.md")}); d != nil {
		t.Errorf("write → edit: %v", d)
	}
	if d := judge(t, "en", "x", Effect{Op: zones.OpLink, Path: at("мета/бобер/h"), Source: at("мета/x.md")}); d == nil {
		t.Error("a hard link to a protected file from a write zone was allowed")
	}
	if d := judge(t, "en", "x", Effect{Op: zones.OpLink, Path: at("мета/бобер/h"), Source: at("w2/x.md")}); d != nil {
		t.Errorf("write → write link: %v", d)
	}
}

func TestSubtreeAndAnchors(t *testing.T) {
	cases := []struct {
		e    Effect
		want string // "" = allowed
	}{
		{Effect{Op: zones.OpDelete, Path: at("мета/бобер/sub"), Subtree: true}, ""},
		{Effect{Op: zones.OpDelete, Path: at("мета/бобер")}, "root of a zone"},
		{Effect{Op: zones.OpMoveOut, Path: at("w2")}, "root of a zone"},
		{Effect{Op: zones.OpModify, Path: at("notes"), Subtree: true}, ""},
		{Effect{Op: zones.OpModify, Path: at("."), Subtree: true}, "inside it is in zone"},
		{Effect{Op: zones.OpRead, Path: at("."), Subtree: true}, "some paths inside it are hidden from you"},
		// the OS wall covers the hidden zone: a confined read of the whole vault passes it
		{Effect{Op: zones.OpRead, Path: at("."), Subtree: true, Confined: true}, ""},
		// but confining a write does not let it past what it may not change
		{Effect{Op: zones.OpModify, Path: at("."), Subtree: true, Confined: true}, "inside it is in zone"},
		{Effect{Op: zones.OpMoveOut, Path: at("мета/бобер/a"), Subtree: true}, ""},
	}
	for _, c := range cases {
		d := judge(t, "en", "x", c.e)
		switch {
		case c.want == "" && d != nil:
			t.Errorf("%+v: %v", c.e, d)
		case c.want != "" && (d == nil || !strings.Contains(d.Reason, c.want)):
			t.Errorf("%+v: %v, want %q", c.e, d, c.want)
		}
	}
}

func TestReasons(t *testing.T) {
	d := judge(t, "en", "delete", Effect{Op: zones.OpDelete, Path: at("мета/план.md")})
	want := `delete "мета/план.md": zone protected (read only). It lies in мета. Deleting is allowed in: w2, мета/бобер.`
	if d == nil || d.Reason != want || d.Rule != "zones" {
		t.Errorf("en reason:\n got %v\nwant %s", d, want)
	}
	d = judge(t, "ru", "delete", Effect{Op: zones.OpDelete, Path: at("мета/план.md")})
	want = `удалить «мета/план.md» нельзя: зона protected (только чтение). Путь лежит в мета. Удалять можно в: w2, мета/бобер.`
	if d == nil || d.Reason != want {
		t.Errorf("ru reason:\n got %v\nwant %s", d, want)
	}
	d = judge(t, "en", "write", Effect{Op: zones.OpModify, Path: at("notes/a.md"), SymlinkTo: "notes/b.md"})
	if d == nil || !strings.Contains(d.Reason, `Write to "notes/b.md" itself`) {
		t.Errorf("symlink reason: %v", d)
	}
	d = judge(t, "en", "delete", Effect{Op: zones.OpDelete, Path: at("w2/a.md"), Links: 2})
	if d == nil || !strings.Contains(d.Reason, "2 hard links") {
		t.Errorf("hard link reason: %v", d)
	}
	d = judge(t, "en", "read", Effect{Op: zones.OpRead, Path: at("/etc/passwd")})
	if d == nil || !strings.Contains(d.Reason, "outside the vault") {
		t.Errorf("outside reason: %v", d)
	}
}

func TestPanickingRuleDenies(t *testing.T) {
	chain := append(Builtin(false), Rule{Name: "mine", Check: func(*ToolCall) *Deny { panic("boom") }})
	tab := table(t)
	d := chain.Judge(&ToolCall{Tool: "read", Zones: tab, Effects: []Effect{{Op: zones.OpRead, Path: at("notes/a"), Zone: zones.Edit}}})
	if d == nil || d.Rule != "mine" || !strings.Contains(d.Reason, "boom") {
		t.Errorf("panicking rule: %v", d)
	}
	chain = Chain{{Name: "empty"}}
	if d := chain.Judge(&ToolCall{}); d == nil || d.Rule != "empty" {
		t.Errorf("rule without a check: %v", d)
	}
}

func TestFirstDenyWins(t *testing.T) {
	calls := 0
	chain := Chain{
		{Name: "a", Check: func(*ToolCall) *Deny { calls++; return nil }},
		{Name: "b", Check: func(*ToolCall) *Deny { calls++; return &Deny{Reason: "no"} }},
		{Name: "c", Check: func(*ToolCall) *Deny { calls++; return &Deny{Reason: "never reached"} }},
	}
	d := chain.Judge(&ToolCall{})
	if d == nil || d.Rule != "b" || calls != 2 {
		t.Errorf("got %v after %d rules", d, calls)
	}
}

func TestReadBeforeWrite(t *testing.T) {
	tab := table(t)
	st := NewState()
	mod := time.Unix(1700000000, 5)
	call := func(tool string, size int64, mt time.Time) *Deny {
		e := []Effect{{Op: zones.OpModify, Path: at("notes/a.md"), Exists: true, Size: size, ModTime: mt, NeedsFreshRead: true}}
		Zoned(tab, e)
		return Builtin(true).Judge(&ToolCall{Tool: tool, Effects: e, Zones: tab, Session: &Session{State: st}})
	}
	if d := call("write", 10, mod); d == nil || d.Rule != "read_before_write" || !strings.Contains(d.Reason, "Read it with the read tool first") {
		t.Errorf("unread write: %v", d)
	}
	MarkRead(st, "notes/a.md", 10, mod)
	if d := call("edit", 10, mod); d != nil {
		t.Errorf("read then edit: %v", d)
	}
	if d := call("edit", 11, mod); d == nil {
		t.Error("edit after the file grew was allowed")
	}
	if d := call("edit", 10, mod.Add(time.Nanosecond)); d == nil {
		t.Error("edit after the file's mtime changed was allowed")
	}
	Forget(st, "notes/a.md")
	if d := call("write", 10, mod); d == nil {
		t.Error("write after Forget was allowed")
	}
	// a new file needs no read, nor does a change the planner did not mark
	for _, e := range []Effect{
		{Op: zones.OpCreate, Path: at("notes/new.md"), NeedsFreshRead: true},
		{Op: zones.OpModify, Path: at("notes/b.md"), Exists: true, Size: 3, ModTime: mod},
	} {
		e := []Effect{e}
		Zoned(tab, e)
		if d := Builtin(true).Judge(&ToolCall{Tool: "write", Effects: e, Zones: tab, Session: &Session{State: st}}); d != nil {
			t.Errorf("%+v: %v", e[0], d)
		}
	}
}

func TestStateConcurrent(t *testing.T) {
	st := NewState()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				Count(st, []Effect{{Op: zones.OpRead}}, time.Unix(1, 0))
				MarkRead(st, "p", int64(i), time.Unix(int64(j), 0))
				HasRead(st, "p", 1, time.Unix(1, 0))
			}
		}()
	}
	wg.Wait()
	if n := SessionTally(st).Calls; n != 16*200 {
		t.Errorf("calls = %d", n)
	}
}

// TestUnknownAndExec: what no zone can place beforehand is refused unless
// the planner says the OS wall holds it.
func TestUnknownAndExec(t *testing.T) {
	cases := []struct {
		e    Effect
		want string // "" = allowed
	}{
		{Effect{Op: zones.OpModify, Unknown: true, Cause: "tee"}, `only known when the command runs (in "tee")`},
		{Effect{Op: zones.OpRead, Unknown: true, Cause: "cat"}, "only known when the command runs"},
		{Effect{Op: zones.OpRead, Unknown: true, Cause: "cat", Confined: true}, ""},
		{Effect{Op: zones.OpExec, Cause: "python3"}, `run "python3"`},
		{Effect{Op: zones.OpExec, Cause: "python3", Confined: true}, ""},
	}
	for _, c := range cases {
		d := judge(t, "en", "x", c.e)
		switch {
		case c.want == "" && d != nil:
			t.Errorf("%+v: %v", c.e, d)
		case c.want != "" && (d == nil || !strings.Contains(d.Reason, c.want) || d.Rule != "zones"):
			t.Errorf("%+v: %v, want %q from zones", c.e, d, c.want)
		}
	}
}

// TestTellAll: a call that asks for it hears every refused effect once;
// any other hears the first.
func TestTellAll(t *testing.T) {
	tab := table(t)
	effects := func() []Effect {
		e := []Effect{
			{Op: zones.OpDelete, Path: at("мета/a.md")},
			{Op: zones.OpRead, Path: at("notes/ok.md")},
			{Op: zones.OpDelete, Path: at("мета/b.md")},
			{Op: zones.OpDelete, Path: at("мета/a.md")},
		}
		Zoned(tab, e)
		return e
	}
	d := Builtin(false).Judge(&ToolCall{Effects: effects(), Zones: tab})
	if d == nil || strings.Contains(d.Reason, "\n") || !strings.Contains(d.Reason, "мета/a.md") {
		t.Errorf("first only: %v", d)
	}
	d = Builtin(false).Judge(&ToolCall{Effects: effects(), Zones: tab, TellAll: true})
	if d == nil || strings.Count(d.Reason, "\n") != 1 || !strings.Contains(d.Reason, "мета/b.md") || d.Effect.Path.String() != "мета/a.md" {
		t.Errorf("every part: %v", d)
	}
}

func TestUnknownSourceNeverLaunders(t *testing.T) {
	tab, _ := zones.New("/v", []zones.Entry{{Path: ".", Mode: zones.Write}}, zones.Options{})
	for _, op := range []zones.Op{zones.OpMoveIn, zones.OpLink} {
		e := []Effect{{Op: op, Path: at("a"), SourceUnknown: true}}
		Zoned(tab, e)
		if d := Builtin(false).Judge(&ToolCall{Tool: "bash", Effects: e, Zones: tab}); d == nil {
			t.Errorf("%s from an unknown source into a write zone was allowed", op)
		}
	}
}

// TestHiddenNamesStayHidden: a refusal never names a hidden path the model
// did not name itself.
func TestHiddenNamesStayHidden(t *testing.T) {
	for _, e := range []Effect{
		{Op: zones.OpRead, Path: at("."), Subtree: true},
		{Op: zones.OpRead, Unknown: true, Cause: "cat"},
		{Op: zones.OpModify, Path: at("."), Subtree: true},
	} {
		for _, lang := range say.Langs {
			d := judge(t, lang, "bash", e)
			if d == nil || strings.Contains(d.Reason, "секрет") {
				t.Errorf("%s %+v: %v", lang, e, d)
			}
		}
	}
}

// TestPathsInsideAFolderStayHidden: an effect on a path inside a folder
// effect (Folder) that is, or whose content comes from, a zone that may
// not be read is refused naming only the folder; one in a zone that may be
// read names its path (the positive control).
func TestPathsInsideAFolderStayHidden(t *testing.T) {
	for _, c := range []struct {
		e    Effect
		want string
	}{
		{Effect{Op: zones.OpDelete, Path: at("секрет/имя.md"), Folder: at(".")}, `"."`},
		{Effect{Op: zones.OpMoveOut, Path: at("секрет/имя.md"), Folder: at(".")}, `"."`},
		{Effect{Op: zones.OpMoveIn, Path: at("w2/x/имя.md"), Source: at("секрет/имя.md"), Folder: at("w2/x")}, `"w2/x"`},
		{Effect{Op: zones.OpDelete, Path: at("мета/имя.md"), Folder: at(".")}, `"мета/имя.md"`},
	} {
		for _, lang := range say.Langs {
			d := judge(t, lang, "move", c.e)
			if d == nil || strings.Contains(d.Reason, "секрет") || lang == say.English && !strings.Contains(d.Reason, c.want) {
				t.Errorf("%s %+v: %v", lang, c.e, d)
			}
		}
	}
}

// TestFolderReadMeetsWhatPatternsCover: a read of a whole folder that no
// wall confines is refused by a name pattern only through a path it
// covers that is there now (Effect.Found); with no look at the folder the
// pattern refuses it, as it could match anywhere inside.
func TestFolderReadMeetsWhatPatternsCover(t *testing.T) {
	tab, err := zones.New("/v", []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "**/.env", Mode: zones.Hidden}, {Path: "**/*.lock", Mode: zones.Protected},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(found *Found) *Deny {
		e := []Effect{{Op: zones.OpRead, Path: at("notes"), Subtree: true, Found: found}}
		Zoned(tab, e)
		return Builtin(true).Judge(&ToolCall{Tool: "Grep", Effects: e, Zones: tab, Lang: say.English, Session: &Session{ID: "s", State: NewState()}})
	}
	if d := read(nil); d == nil || !strings.Contains(d.Reason, "hidden from you") {
		t.Errorf("no look inside: %v, want the folder refused", d)
	}
	if d := read(&Found{}); d != nil {
		t.Errorf("nothing a pattern covers is there: %v", d)
	}
	if d := read(&Found{Paths: []zones.Path{at("notes/x.lock")}}); d != nil {
		t.Errorf("a readable pattern's match: %v", d)
	}
	d := read(&Found{Paths: []zones.Path{at("notes/x.lock"), at("notes/deep/.ENV")}})
	if d == nil || !strings.Contains(d.Reason, "hidden from you") || strings.Contains(d.Reason, "deep") {
		t.Errorf("a hidden .env inside: %v, want refused without naming it", d)
	}
	// a folder's delete is judged path by path, never by Found
	e := []Effect{{Op: zones.OpDelete, Path: at("notes"), Subtree: true, Found: &Found{}}}
	Zoned(tab, e)
	if d := Builtin(true).Judge(&ToolCall{Tool: "delete", Effects: e, Zones: tab, Lang: say.English}); d == nil {
		t.Error("a folder's delete in an edit zone was allowed")
	}
}
