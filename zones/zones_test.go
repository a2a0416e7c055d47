package zones

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

const vault = "/home/u/Notes"

// at normalises p against the test vault: the only way to ask Zone.
func at(p string) Path {
	np, err := Normalize(vault, p)
	if err != nil {
		panic(err)
	}
	return np
}

// sample is the zone set of testdata/vault.toml.
func sample(t testing.TB, opt Options) *Table {
	t.Helper()
	tab, err := New(vault, []Entry{
		{"мета/бобер", Write},
		{"💬 чаты", Create},
		{".", Edit},
		{".obsidian", Protected},
		{"мета", Protected},
		{"секрет", Hidden},
	}, opt)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestAllowsTable is what each built-in kind allows, cell by cell.
func TestAllowsTable(t *testing.T) {
	want := map[Mode]string{
		// read create modify delete move-out move-in link exec
		Write:     "RCMDOIL-",
		Edit:      "RCM-OI--",
		Create:    "RC---I--",
		Protected: "R-------",
		Hidden:    "--------",
		NoZone:    "--------",
	}
	letters := "RCMDOILX"
	for m, row := range want {
		for op := Op(0); op < numOps; op++ {
			got := m.Allows(op)
			exp := row[op] == letters[op]
			if got != exp {
				t.Errorf("%s allows %s = %v, want %v", m, op, got, exp)
			}
		}
	}
}

func TestLaunders(t *testing.T) {
	cases := []struct {
		from, to Mode
		want     bool
	}{
		{Edit, Write, true}, {Write, Edit, false}, {Edit, Edit, false},
		{Write, Write, false}, {Edit, Create, false}, {Create, Write, true},
	}
	for _, c := range cases {
		if got := Launders(c.from, c.to); got != c.want {
			t.Errorf("Launders(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestZone(t *testing.T) {
	tab := sample(t, Options{
		Protect: []string{"/home/u/.config/vaultgate/notes.toml", "vault.toml"},
		Hide:    []string{"/home/u/.local/state/vaultgate", "logs/audit.jsonl"},
	})
	nfd := norm.NFD.String("мета/й.md") // й decomposes
	cases := []struct {
		path string
		want Mode
	}{
		{".", Edit},
		{"notes/x.md", Edit},
		{"мета/x", Protected},
		{"мета", Protected},
		{"мета/бобер/x", Write},
		{"мета/бобер", Write},
		{"мета/бобер/a/b/c/d.md", Write},
		{"💬 чаты/x", Create},
		{".obsidian/app.json", Protected},
		{"секрет/пароли.md", Hidden},
		// component-wise: a sibling with the same prefix is not inside
		{"мета2/x", Edit},
		{"мета_old/x", Edit},
		{"мета/бобер2/x", Protected},
		{".obsidian2", Edit},
		// case folding: the stricter of exact and folded
		{"МЕТА/x", Protected},
		{"Мета/Бобер/x", Edit}, // exact: only "." (edit); folded: мета/бобер (write); the stricter wins
		{".Obsidian/app.json", Protected},
		{".obſidian/app.json", Protected}, // ſ folds to s
		{".OBSIDIAN", Protected},
		{"СЕКРЕТ/x", Hidden},
		// control paths, whatever the config says; .git hidden, since
		// the vault has a hidden zone whose files it may hold copies of
		{".git/hooks/pre-commit", Hidden},
		{".git", Hidden},
		{"sub/.git/config", Hidden},
		{".GIT/config", Hidden},
		{".claude/settings.json", Protected},
		{".mcp.json", Protected},
		{".vscode/tasks.json", Protected},
		{"мета/бобер/.git/x", Hidden},
		{"мета/бобер/.codex/config.toml", Protected},
		{".gemini/settings.json", Protected},
		{"notes/.cursor/hooks.json", Protected},
		{"мета/бобер/.envrc", Protected},
		{"мета/бобер/.ENVRC", Protected},
		{"мета/бобер/.envrc.bak", Write},                  // a name, not a prefix
		{"мета/бобер/.obsidian/plugins/x/main.js", Write}, // Obsidian reads its root's alone
		{"vault.toml", Protected},
		{"logs/audit.jsonl", Hidden},
		{"logs/other.jsonl", Edit},
		// outside the vault: no zone unless an absolute entry covers it
		{"/etc/passwd", NoZone},
		{"/home/u/.local/state/vaultgate/audit.jsonl", NoZone},
	}
	for _, c := range cases {
		if got := tab.Zone(at(c.path)); got != c.want {
			t.Errorf("Zone(%q) = %s, want %s", c.path, got, c.want)
		}
	}
	p, err := Normalize(vault, nfd)
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Zone(p); got != Protected {
		t.Errorf("NFD spelling of мета/й.md: zone %s, want protected", got)
	}
}

func TestFoldOnly(t *testing.T) {
	tab := sample(t, Options{FoldOnly: true})
	for p, want := range map[string]Mode{
		"Мета/Бобер/x": Write, // on a folding file system this IS мета/бобер/x
		"МЕТА/x":       Protected,
		"Notes/x":      Edit,
		".obſidian/x":  Protected,
	} {
		if got := tab.Zone(at(p)); got != want {
			t.Errorf("fold-only Zone(%q) = %s, want %s", p, got, want)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		in, want string
		inside   bool
		err      error
	}{
		{"мета/../мета/x", "мета/x", true, nil},
		{"notes/../../x", "/home/u/x", false, nil},
		{"../Notes2/x", "/home/u/Notes2/x", false, nil},
		{"/home/u/Notes/мета/x", "мета/x", true, nil},
		{"/home/u/Notes", ".", true, nil},
		{"/home/u/Notes/", ".", true, nil},
		{"/home/u/Notes2/x", "/home/u/Notes2/x", false, nil},
		{"./a//b/./c/", "a/b/c", true, nil},
		{".", ".", true, nil},
		{"..", "/home/u", false, nil},
		{"/etc/../etc/passwd", "/etc/passwd", false, nil},
		{norm.NFD.String("мета/й"), "мета/й", true, nil},
		{"", "", false, ErrEmptyPath},
		{"a\x00b", "", false, ErrNULInPath},
	}
	for _, c := range cases {
		got, err := Normalize(vault, c.in)
		if err != c.err || got.String() != c.want || (err == nil && got.Outside() == c.inside) {
			t.Errorf("Normalize(%q) = %q, outside %v, %v; want %q, inside %v, %v", c.in, got, got.Outside(), err, c.want, c.inside, c.err)
		}
	}
}

func TestNewRejects(t *testing.T) {
	bad := [][]Entry{
		{{"a", Edit}, {"a", Write}},
		{{"a", Edit}, {"a/", Edit}},
		{{"Notes", Write}, {"notes", Protected}},
		{{"", Edit}},
		{{"a\x00", Edit}},
		{{"a", NoZone}},
	}
	for _, entries := range bad {
		if _, err := New(vault, entries, Options{}); err == nil {
			t.Errorf("New(%v) accepted", entries)
		}
	}
	if _, err := New("relative", nil, Options{}); err == nil {
		t.Error("New accepted a relative vault")
	}
}

func TestAbsoluteEntries(t *testing.T) {
	tab, err := New(vault, []Entry{{".", Edit}, {"/srv/shared", Write}, {"/srv/shared/ro", Protected}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]Mode{
		"/srv/shared/x":    Write,
		"/srv/shared/ro/x": Protected,
		"/srv/sharedx":     NoZone,
		"/srv":             NoZone,
		"notes":            Edit,
	} {
		if got := tab.Zone(at(p)); got != want {
			t.Errorf("Zone(%q) = %s, want %s", p, got, want)
		}
	}
}

func TestNoRootEntry(t *testing.T) {
	tab, err := New(vault, []Entry{{"notes", Edit}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Zone(at("other/x")); got != NoZone {
		t.Errorf("uncovered path: %s, want none", got)
	}
	if got := tab.Zone(VaultRoot()); got != NoZone {
		t.Errorf("root: %s, want none", got)
	}
}

func TestAnchorsWithinWhere(t *testing.T) {
	tab := sample(t, Options{Hide: []string{"state"}})
	for p, want := range map[string]bool{".": true, "мета": true, "мета/бобер": true, "МЕТА": true, "мета/x": false, "notes": false} {
		if got := tab.IsAnchor(at(p)); got != want {
			t.Errorf("IsAnchor(%q) = %v", p, got)
		}
	}
	within := tab.Within(at("мета"))
	if len(within) != 1 || within[0].Path.String() != "мета/бобер" || within[0].Mode != Write {
		t.Errorf("Within(мета) = %v", within)
	}
	all := tab.Within(VaultRoot())
	if len(all) != 6 { // 5 entries below the root, and the state cap
		t.Errorf("Within(.) = %v", all)
	}
	where := tab.Where(OpDelete)
	if len(where) != 1 || where[0].Path != "мета/бобер" || len(where[0].Except) != 0 {
		t.Errorf("Where(delete) = %v", where)
	}
	if w := tab.Where(OpCreate); len(w) != 3 {
		t.Errorf("Where(create) = %v", w)
	}
}

// TestWhereSaysWhatIsNot: the whole vault, where a change is allowed,
// names the folders inside it where it is not, but never a hidden one, and
// never a folder that is not there; a write zone inside a protected one is
// its own area.
func TestWhereSaysWhatIsNot(t *testing.T) {
	gone := map[string]bool{".obsidian": true}
	tab := sample(t, Options{Exists: func(p Path) bool { return !gone[p.String()] }})
	got := fmt.Sprint(tab.Where(OpModify))
	if want := "[{. [мета 💬 чаты]} {мета/бобер []}]"; got != want {
		t.Errorf("Where(modify) = %s, want %s", got, want)
	}
	gone = map[string]bool{"мета/бобер": true}
	got = fmt.Sprint(tab.Where(OpModify))
	if want := "[{. [.obsidian мета 💬 чаты]}]"; got != want {
		t.Errorf("Where(modify), мета/бобер gone = %s, want %s", got, want)
	}
}

// TestRootOf: what gives a path its zone, for the refusal that names it.
func TestRootOf(t *testing.T) {
	tab, err := New(vault, []Entry{{".", Edit}, {"мета", Protected}, {"секрет", Hidden}, {"**/.env", Hidden}, {"**/*.lock", Protected}},
		Options{Protect: []string{"vault.toml"}, Hide: []string{"state"}})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"мета/x.md":              "мета protected",
		"МЕТА/x.md":              "мета protected",
		"notes/a.md":             ". edit",
		"секрет/a/b":             "секрет hidden",
		"notes/.env":             "**/.env hidden pattern",
		"notes/x.lock":           "**/*.lock protected pattern",
		"notes/.git/config":      "notes/.git hidden control",
		".obsidian/plugins/x/a":  ".obsidian/plugins protected control",
		"notes/.vaultgate-tmp-1": "notes/.vaultgate-tmp-1 protected own",
		"vault.toml":             "vault.toml protected own",
		"state/audit.jsonl":      "state hidden own",
	} {
		r := tab.RootOf(at(p))
		got := r.Path.String() + " " + r.Mode.String()
		switch {
		case r.Pattern:
			got += " pattern"
		case r.Control:
			got += " control"
		case r.Own:
			got += " own"
		}
		if got != want {
			t.Errorf("RootOf(%q) = %s, want %s", p, got, want)
		}
	}
}

func TestNames(t *testing.T) {
	for op := Op(0); op < numOps; op++ {
		back, ok := ParseOp(op.String())
		if !ok || back != op {
			t.Errorf("op %d round trip failed", op)
		}
	}
	for _, m := range Kinds()[1:] {
		back, ok := ParseMode(m.String())
		if !ok || back != m {
			t.Errorf("mode %d round trip failed", m)
		}
	}
	if _, ok := ParseMode("none"); ok {
		t.Error("none parsed as a configurable mode")
	}
	if _, ok := ParseMode("Write"); ok {
		t.Error("mode names are case-sensitive")
	}
}

// TestControls: every control path is at most protected whatever the
// config says (a config may make one hidden), and says why; a path beside
// one is not.
func TestControls(t *testing.T) {
	tab, err := New("/v", []Entry{{Path: ".", Mode: Write}, {Path: ".codex", Mode: Hidden}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) Path { p, _ := Normalize("/v", s); return p }
	for _, c := range []struct {
		path string
		want Mode
	}{
		{".obsidian/plugins/dataview/main.js", Protected},
		{".obsidian/plugins", Protected},
		{".Obsidian/Plugins/x/main.js", Protected},
		{".obsidian/community-plugins.json", Protected},
		{".obsidian/workspace.json", Write},
		{".obsidian/plugins2/x", Write},
		{".obsidian/community-plugins.json.bak", Write},
		{".codex/config.toml", Hidden}, // the config's stricter zone
		{"a/b/.envrc", Protected},
		{"a/b/.vscode/tasks.json", Protected},
		{"notes/x.md", Write},
	} {
		p := at(c.path)
		if got := tab.Zone(p); got != c.want {
			t.Errorf("Zone(%q) = %s, want %s", c.path, got, c.want)
		}
		if control := c.want == Protected || c.path == ".codex/config.toml"; control != (ControlWhy(p) != "") {
			t.Errorf("ControlWhy(%q) = %q", c.path, ControlWhy(p))
		}
	}
	for _, c := range Controls {
		if c.Why == "" || c.Name != Fold(c.Name) {
			t.Errorf("control %q: a reason, and a folded name", c.Name)
		}
	}
}

// TestDocsListTheControls: docs/zones.md's table of control paths names
// every row of Controls.
func TestDocsListTheControls(t *testing.T) {
	readme, err := os.ReadFile("../docs/zones.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Controls {
		if !strings.Contains(string(readme), "| `"+c.Name+"` |") {
			t.Errorf("docs/zones.md's control table lacks %s", c.Name)
		}
	}
}

// TestGitHoldsCopies: .git is protected in a vault with no zone that may
// not be read, and hidden as soon as there is one (a folder or a name
// pattern): its objects hold a copy of every tracked file.
func TestGitHoldsCopies(t *testing.T) {
	for _, c := range []struct {
		entries []Entry
		want    Mode
	}{
		{[]Entry{{Path: ".", Mode: Write}}, Protected},
		{[]Entry{{Path: ".", Mode: Write}, {Path: "мета", Mode: Protected}}, Protected},
		{[]Entry{{Path: ".", Mode: Write}, {Path: "секрет", Mode: Hidden}}, Hidden},
		{[]Entry{{Path: ".", Mode: Write}, {Path: "**/.env", Mode: Hidden}}, Hidden},
	} {
		tab, err := New("/v", c.entries, Options{Hide: []string{"/home/u/state"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{".git/objects/ab/cdef", "notes/repo/.git/index"} {
			at, _ := Normalize("/v", p)
			if got := tab.Zone(at); got != c.want {
				t.Errorf("%v: Zone(%s) = %s, want %s", c.entries, p, got, c.want)
			}
		}
		at, _ := Normalize("/v", ".claude/settings.json")
		if got := tab.Zone(at); got != Protected {
			t.Errorf("%v: .claude is %s, want protected", c.entries, got)
		}
	}
}
