package tools

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/zones"
)

// The real effects of changes, and their judgement, without running
// anything: each row is the changes a command made, the effects they
// become, and what the chain says of them.
func TestRealEffects(t *testing.T) {
	tab, err := zones.New("/v", []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected}, {Path: "write", Mode: zones.Write},
		{Path: "chats", Mode: zones.Create}, {Path: "hidden", Mode: zones.Hidden},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := &config.Bash{}
	mem := afero.NewMemMapFs()
	for _, f := range []string{"write/d/e.md", "write/r/n.md", "write/r/.git/HEAD", "notes/m/x.md", "drafts/x.md"} {
		if err := afero.WriteFile(mem, f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &Set{Vault: &Vault{Root: "/v", Fs: mem}, Zones: tab, Lang: "en", Bash: b}
	chain := txnChain(b)
	file := &txn.State{Mode: 0o644, Size: 2, SHA256: "ab"}
	fifo := &txn.State{Mode: fs.ModeNamedPipe | 0o644}
	for _, c := range []struct {
		name    string
		changes []txn.Change
		effects string // the effects, "op path <- source" joined by "; "
		deny    string // "" allowed
	}{
		{"a new note", []txn.Change{{Op: txn.Create, Path: "notes/n.md", After: file}}, "create notes/n.md", ""},
		{"a note changed", []txn.Change{{Op: txn.Modify, Path: "notes/a.md", Before: file, After: file}}, "modify notes/a.md", ""},
		{"a create zone's file changed", []txn.Change{{Op: txn.Modify, Path: "chats/old.md", Before: file, After: file}},
			"modify chats/old.md", `change "chats/old.md": zone create`},
		{"a rename in an edit zone", []txn.Change{{Op: txn.Move, From: "notes/b.md", Path: "notes/b2.md", Before: file, After: file}},
			"move-out notes/b.md; move-in notes/b2.md <- notes/b.md", ""},
		{"laundering", []txn.Change{{Op: txn.Move, From: "notes/b.md", Path: "write/b.md", Before: file, After: file}},
			"move-out notes/b.md; move-in write/b.md <- notes/b.md", "from zone edit to zone write"},
		{"a rename over a file is a change of it", []txn.Change{
			{Op: txn.Delete, Path: "notes/b.md", Before: file},
			{Op: txn.Move, From: "notes/a.md", Path: "notes/b.md", Before: file, After: file}},
			"move-out notes/a.md; move-in notes/b.md <- notes/a.md", ""},
		{"a folder deleted", []txn.Change{{Op: txn.Delete, Path: "write/d", Dir: true}}, "delete write/d/**; delete write/d/e.md", ""},
		// a folder's effect is judged on every path it holds, as the vault
		// holds it (folder.go): .git is a control path (hidden here, with
		// a hidden zone in the vault), the rest may go
		{"a folder holding .git deleted", []txn.Change{{Op: txn.Delete, Path: "write/r", Dir: true}},
			"delete write/r/**; delete write/r/.git; delete write/r/.git/HEAD; delete write/r/n.md", `delete "write/r`},
		{"a folder holding .git moved", []txn.Change{{Op: txn.Move, From: "write/r", Path: "write/r2", Dir: true}},
			"move-out write/r/**; move-out write/r/.git; move-out write/r/.git/HEAD; move-out write/r/n.md; " +
				"move-in write/r2/** <- write/r; move-in write/r2/.git <- write/r/.git; move-in write/r2/.git/HEAD <- write/r/.git/HEAD; move-in write/r2/n.md <- write/r/n.md",
			`move "write/r`},
		{"a folder moved, then deleted", []txn.Change{
			{Op: txn.Move, From: "notes", Path: "n2", Dir: true}, {Op: txn.Delete, Path: "n2/m", Dir: true}},
			"move-out notes/**; move-out notes/m; move-out notes/m/x.md; move-in n2/** <- notes; move-in n2/m <- notes/m; move-in n2/m/x.md <- notes/m/x.md; " +
				"delete n2/m/**; delete n2/m/x.md", `delete "n2/m": zone edit`},
		{"a folder's mode changed", []txn.Change{{Op: txn.Modify, Path: "notes/m", Dir: true,
			Before: &txn.State{Mode: fs.ModeDir | 0o755}, After: &txn.State{Mode: fs.ModeDir | 0o700}}},
			"modify notes/m/**; modify notes/m/x.md", ""},
		{"a delete in an edit zone", []txn.Change{{Op: txn.Delete, Path: "notes/a.md", Before: file}}, "delete notes/a.md", `delete "notes/a.md": zone edit`},
		{"a hard link out of an edit zone", []txn.Change{{Op: txn.Link, From: "notes/a.md", Path: "write/a.md", After: file}},
			"link write/a.md <- notes/a.md", `hard-link "notes/a.md" as "write/a.md"`},
		{"a control name below the top", []txn.Change{{Op: txn.Create, Path: "notes/p/.git", Dir: true, After: &txn.State{Mode: fs.ModeDir | 0o755}}},
			"create notes/p/.git", `create "notes/p/.git": zone hidden`}, // hidden: the vault has a hidden zone
		{"a FIFO", []txn.Change{{Op: txn.Special, Path: "notes/f", After: fifo}}, "create notes/f", `create "notes/f": it is a FIFO`},
		{"a hidden file", []txn.Change{{Op: txn.Create, Path: "hidden/x", After: file}}, "create hidden/x", `create "hidden/x": zone hidden`},
		{"a protected file", []txn.Change{{Op: txn.Modify, Path: "мета/p.md", Before: file, After: file}}, "modify мета/p.md", `zone protected`},
	} {
		t.Run(c.name, func(t *testing.T) {
			real, err := s.realEffects(c.changes, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			effects := make([]policy.Effect, len(real))
			for i, e := range real {
				got = append(got, e.String())
				effects[i] = e.Effect
			}
			if strings.Join(got, "; ") != c.effects {
				t.Errorf("effects %q, want %q", strings.Join(got, "; "), c.effects)
			}
			d, _, _ := chain.JudgeEach(&policy.ToolCall{Tool: "bash", Effects: effects, Zones: tab, Lang: "en", TellAll: true, Facts: BashCall{Real: true}})
			switch {
			case c.deny == "" && d != nil:
				t.Errorf("refused: %s", d.Reason)
			case c.deny != "" && (d == nil || !strings.Contains(d.Reason, c.deny)):
				t.Errorf("deny %v, want one saying %q", d, c.deny)
			}
		})
	}
}

// A real effect is marked when the analysis did not predict it.
func TestRealEffectsUnpredicted(t *testing.T) {
	tab, err := zones.New("/v", []zones.Entry{{Path: ".", Mode: zones.Edit}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Set{Vault: &Vault{Root: "/v"}, Zones: tab}
	p := func(s string) zones.Path { z, _ := zones.Normalize("/v", s); return z }
	predicted := []policy.Effect{
		{Op: zones.OpModify, Path: p("notes/a.md")},
		{Op: zones.OpCreate, Path: p("out"), Subtree: true},
		{Op: zones.OpModify, Path: p("notes/s.md"), Fact: BashPart{Command: "sed", ByRename: true}},
	}
	real, err := s.realEffects([]txn.Change{
		{Op: txn.Modify, Path: "notes/a.md"},
		{Op: txn.Create, Path: "out/x/y.md"},
		{Op: txn.Create, Path: "notes/surprise.md"},
		{Op: txn.Move, From: "notes/s.md", Path: "notes/s.md.bak"},
	}, predicted)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"modify notes/a.md": false, "create out/x/y.md": false, "create notes/surprise.md": true,
		"move-out notes/s.md": false, "move-in notes/s.md.bak <- notes/s.md": true}
	for _, e := range real {
		if w, ok := want[e.String()]; !ok || w != e.Unpredicted {
			t.Errorf("%s: unpredicted %v, want %v", e, e.Unpredicted, w)
		}
	}
}
