package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// source is one non-test Go file of the module, parsed.
type source struct {
	path string // slash-separated, from the module root
	file *ast.File
	text string
}

// sources parses every non-test Go file of the module.
func sources(t *testing.T) []source {
	t.Helper()
	root := "../.."
	var out []source
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, data, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, source{path: filepath.ToSlash(rel), file: f, text: string(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("only %d source files found: is the test run from its package folder?", len(out))
	}
	return out
}

// literalsOf lists where a composite literal of pkg.name (or of name,
// inside package pkg) is written.
func literalsOf(srcs []source, pkg, name string) []string {
	var at []string
	for _, s := range srcs {
		ast.Inspect(s.file, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch ty := cl.Type.(type) {
			case *ast.SelectorExpr:
				if x, ok := ty.X.(*ast.Ident); ok && x.Name == pkg && ty.Sel.Name == name {
					at = append(at, s.path)
				}
			case *ast.Ident:
				if s.file.Name.Name == pkg && ty.Name == name {
					at = append(at, s.path)
				}
			}
			return true
		})
	}
	return at
}

// callsOf lists the files that call a function or method named name (of
// package pkg only, when given).
func callsOf(srcs []source, name string, pkg ...string) []string {
	var at []string
	for _, s := range srcs {
		ast.Inspect(s.file, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch f := c.Fun.(type) {
			case *ast.Ident:
				if f.Name == name && (len(pkg) == 0 || s.file.Name.Name == pkg[0]) {
					at = append(at, s.path)
				}
			case *ast.SelectorExpr:
				x, isIdent := f.X.(*ast.Ident)
				if f.Sel.Name == name && (len(pkg) == 0 || isIdent && x.Name == pkg[0]) {
					at = append(at, s.path)
				}
			}
			return true
		})
	}
	return at
}

// selectorsNamed lists the files that select a field or method of one
// of these names (x.Ctim).
func selectorsNamed(srcs []source, names ...string) []string {
	var at []string
	for _, s := range srcs {
		ast.Inspect(s.file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && slices.Contains(names, sel.Sel.Name) {
				at = append(at, s.path)
			}
			return true
		})
	}
	return at
}

// outside lists the files of found that are not under the folder dir.
func outside(dir string, found ...[]string) []string {
	var at []string
	for _, f := range found {
		for _, p := range f {
			if !strings.HasPrefix(p, dir) {
				at = append(at, p)
			}
		}
	}
	return at
}

// terminalControls lists the files that name a character a terminal obeys
// or that hides text — a string or rune literal holding ESC, a C1 control
// or a bidi control, a hex literal of one of them — or that ask the
// standard library which characters are printable or quote text with
// escapes: what an escape of their own would need.
func terminalControls(srcs []source) []string {
	named := func(r rune) bool {
		return r == 0x1b || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 ||
			r == 0x200e || r == 0x200f || r == 0x061c
	}
	var at []string
	for _, s := range srcs {
		ast.Inspect(s.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				switch n.Kind {
				case token.STRING, token.CHAR:
					v, err := strconv.Unquote(n.Value)
					if err == nil && strings.ContainsFunc(v, named) {
						at = append(at, s.path)
					}
				case token.INT:
					v, err := strconv.ParseInt(n.Value, 0, 64)
					if err == nil && strings.HasPrefix(strings.ToLower(n.Value), "0x") && named(rune(v)) && v != 0x80 {
						at = append(at, s.path)
					}
				}
			case *ast.SelectorExpr:
				x, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				switch {
				case x.Name == "unicode" && slices.Contains([]string{"IsControl", "IsPrint", "IsGraphic", "Cc", "Cf"}, n.Sel.Name),
					x.Name == "strconv" && (strings.HasPrefix(n.Sel.Name, "Quote") || strings.HasPrefix(n.Sel.Name, "AppendQuote") ||
						n.Sel.Name == "IsPrint" || n.Sel.Name == "IsGraphic"):
					at = append(at, s.path)
				}
			}
			return true
		})
	}
	return at
}

// TestOneAnswerEach: each question of the design is answered in one place.
func TestOneAnswerEach(t *testing.T) {
	srcs := sources(t)
	uniq := func(s []string) []string { slices.Sort(s); return slices.Compact(s) }
	within := func(got []string, allowed ...string) []string {
		var extra []string
		for _, p := range uniq(got) {
			if !slices.Contains(allowed, p) {
				extra = append(extra, p)
			}
		}
		return extra
	}
	for _, c := range []struct {
		invariant string
		found     []string
		allowed   []string
	}{
		// The gate is the only builder of an audit record: every line is
		// a call's, through Gate.Call (undo included). The panel's index
		// rebuilds a record from the fields it scanned of a line, to read
		// it; it holds no writer (next row).
		{"an audit.Record is built only by the gate", literalsOf(srcs, "audit", "Record"), []string{"server/gate.go", "admin/index.go"}},
		// Only a gate holds the audit log's writer.
		{"the audit log is opened for writing only by a gate", callsOf(srcs, "Open", "audit"), []string{"server/open.go"}},
		// A gate is opened only by its role's constructor.
		{"a Gate is made only in server/open.go", literalsOf(srcs, "server", "Gate"), []string{"server/open.go"}},
		// Claude Code sessions' state files are read and written in one place.
		{"a session's state file is held only by the session store", callsOf(srcs, "holdSession"), []string{"server/sessions.go", "server/hook.go"}},
		// The tools never judge: the gate judges what they plan and what
		// they really changed.
		{"only the gate and the rules run a chain", append(callsOf(srcs, "JudgeEach"), callsOf(srcs, "Judge")...), []string{"server/gate.go", "policy/policy.go"}},
		// A vault's files are reached through package vaultfs, which never
		// follows a link out of the vault, and only a gate opens it. No
		// other file builds a file system confined to a root (os.Root,
		// openat2 or openat beneath a descriptor) or one over the whole
		// disk (afero's OsFs), save these, none of them an afero.Fs: txn's
		// diff reads the overlay's layers, the vault below included, by
		// O_PATH, file handles and xattrs, which an afero.Fs does not give,
		// and its commit reads the upper layer's new files (it writes the
		// vault through vaultfs); the wall opens the folders it mounts on
		// and probes an overlay in the state folder; the name index
		// (watch) opens folders beneath the vault's descriptor to watch and
		// list them, and never a file's content; readfloor is not
		// vaultgate's but the bare MCP server its read is measured against.
		{"a vault's files are opened only through vaultfs", outside("vaultfs/",
			callsOf(srcs, "OpenRoot", "os"), callsOf(srcs, "OpenInRoot", "os"),
			callsOf(srcs, "Openat2", "unix"), callsOf(srcs, "Openat", "unix"),
			callsOf(srcs, "NewOsFs", "afero"), callsOf(srcs, "NewBasePathFs", "afero")),
			[]string{"txn/tree_linux.go", "txn/apply_linux.go", "sandbox/helper_linux.go", "sandbox/overlay_linux.go", "watch/tree_linux.go", "interop/readfloor/main.go"}},
		{"the vault's file system is opened only by a gate", outside("vaultfs/", callsOf(srcs, "Open", "vaultfs"), callsOf(srcs, "OpenRootFs", "vaultfs")), []string{"server/open.go"}},
		// What a person reads from the CLI goes through one escape,
		// visible.Mode.Escape, which is also the only writer of a
		// terminal control (visible.Paint). No other file names a
		// control or asks which characters print: where one did, a
		// second escape grew, and the two disagreed on what they let
		// through. claude/settings.go quotes a path as a word of the
		// hook's command line, which Claude Code runs and no terminal
		// shows (Go's quoting only for a NUL, which no path holds).
		{"a terminal control is escaped or written only in package visible", outside("visible/", terminalControls(srcs)), []string{"claude/settings.go"}},
		// Whether a vault entry changed during a call is told in one
		// place: txn's conflict check, by the entry's ctime against the
		// call's start, which only txn.Begin takes (on the file system's
		// own clock), once per call, in beginBash. No other file reads a
		// ctime (vaultfs only copies one into the Stat_t it returns).
		{"a call's start is taken only in beginBash", callsOf(srcs, "Begin", "txn"), []string{"tools/bashtxn.go"}},
		{"a ctime is read only by txn", outside("txn/", selectorsNamed(srcs, "Ctim", "Ctimespec")), []string{"vaultfs/nofollow_linux.go"}},
		// Where a symlink the agent leaves may lead is decided in one
		// place, the zones rule's judgeLeads; the planners only find where
		// each leads (tools/links.go), for every route that leaves one.
		{"where a symlink may lead is judged only by the zones rule", append(append(append(
			literalsOf(srcs, "say", "LinkOutside"), literalsOf(srcs, "say", "LinkUnreadable")...),
			literalsOf(srcs, "say", "LinkControl")...), literalsOf(srcs, "say", "LinkUnplaced")...), []string{"policy/rules.go"}},
		{"where a symlink leads is found only in tools/links.go", literalsOf(srcs, "policy", "Lead"), []string{"tools/links.go"}},
		// What a folder effect covers is read in one place, Set.cover: the
		// folder's effect marked with its count, one effect per path inside
		// it marked with its folder, for every entry point (the move and
		// delete tools, bash's predicted and real effects). The gate only
		// copies the count into the audit line.
		{"a folder effect's paths are made only by Set.cover", fieldsSet(srcs, "Covers", "Folder"), []string{"tools/folder.go", "server/gate.go"}},
		{"a folder effect is expanded only in tools/folder.go", append(callsOf(srcs, "cover"), literalsOf(srcs, "say", "TooManyEntries")...), []string{"tools/folder.go"}},
	} {
		if extra := within(c.found, c.allowed...); len(extra) > 0 {
			t.Errorf("%s: also in %s", c.invariant, strings.Join(extra, ", "))
		}
	}
}

// TestHistoryKnowsNoTool: the history keeps what a change did, in its own
// words (history.Op, history.Settled), and decides nothing by the name of
// the tool that made it.
func TestHistoryKnowsNoTool(t *testing.T) {
	for _, s := range sources(t) {
		if !strings.HasPrefix(s.path, "history/") {
			continue
		}
		ast.Inspect(s.file, func(n ast.Node) bool {
			b, ok := n.(*ast.BinaryExpr)
			if !ok || (b.Op != token.EQL && b.Op != token.NEQ) {
				return true
			}
			for _, side := range []ast.Expr{b.X, b.Y} {
				if sel, ok := side.(*ast.SelectorExpr); ok && sel.Sel.Name == "Tool" {
					t.Errorf("%s decides by a tool's name", s.path)
				}
			}
			return true
		})
	}
}

// TestOneQuoter: one shell quoter, the shell parser's own
// (syntax.Quote): no file quotes for a shell by hand, which shows as a
// string holding the close-escape-reopen of a single quote.
func TestOneQuoter(t *testing.T) {
	for _, s := range sources(t) {
		ast.Inspect(s.file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(v, `'\''`) {
				t.Errorf("%s quotes for a shell by hand: use mvdan.cc/sh/v3/syntax.Quote", s.path)
			}
			return true
		})
	}
}

// fieldsSet lists the files that set a field of one of these names: in a
// composite literal (Name: v) or by assignment (x.Name = v).
func fieldsSet(srcs []source, names ...string) []string {
	var at []string
	for _, s := range srcs {
		ast.Inspect(s.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && slices.Contains(names, k.Name) {
					at = append(at, s.path)
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && slices.Contains(names, sel.Sel.Name) {
						at = append(at, s.path)
					}
				}
			}
			return true
		})
	}
	return at
}
