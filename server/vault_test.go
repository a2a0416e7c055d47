package server

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/vaultid"
)

// sharedVault is one of two vaults whose configs share one state folder,
// as configs written by an older `vaultgate init` did: one audit log, one
// history.
type sharedVault struct {
	root string
	cfg  *config.Config
	gate *Gate // the server's gate over it
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sharedVaults makes vaults a and b over one state folder, each with its
// files and served by a gate whose lines and entries name it.
func sharedVaults(t *testing.T, a, b map[string]string) (va, vb *sharedVault, state string) {
	t.Helper()
	dir := t.TempDir()
	state = filepath.Join(dir, "state")
	open := func(name string, files map[string]string) *sharedVault {
		root := filepath.Join(dir, name)
		writeFiles(t, root, files)
		cfg := loadConfig(t, `vault = "`+root+`"
[audit]
path = "`+filepath.Join(state, "audit.jsonl")+`"
[rules]
read_before_write = false
[zones]
write = ["."]
`)
		g := serverGate(t, cfg)
		nameVault(t, g)
		return &sharedVault{root: cfg.Vault, cfg: cfg, gate: g}
	}
	return open("a", a), open("b", b), state
}

// nameVault gives g its vault's id, as Open is to (vaultID).
func nameVault(t *testing.T, g *Gate) {
	t.Helper()
	id, err := vaultID(g.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if g.vault.ID != "" && g.vault.ID != id {
		t.Fatalf("the gate names vault %s, the registry %s", g.vault.ID, id)
	}
	g.vault.ID = id
}

// TestUndoNeverCrossesVaults: vault b's changes (a note changed, one
// deleted), made through b's gate in a state folder a shares, are never
// undone into a, whether undo selects by time, by session or by id: a
// stays byte for byte as it was, and b's deleted note never appears in
// it. a's own change, beside them, is undone by the same --since.
func TestUndoNeverCrossesVaults(t *testing.T) {
	// a holds what b's change leaves in shared.md: an undo of b's change
	// in a would find a's file "as the call left it" and put b's old
	// text there.
	va, vb, state := sharedVaults(t,
		map[string]string{"notes/shared.md": "b's new text\n", "notes/a-only.md": "a\n"},
		map[string]string{"notes/shared.md": "b's old text\n", "notes/gone.md": "b's deleted note\n"})
	since := time.Now().Add(-time.Minute)
	changed := call(t, vb.gate, "sess-1", toolCall{"write", map[string]any{"path": "notes/shared.md", "content": "b's new text\n"}})
	deleted := call(t, vb.gate, "sess-1", toolCall{"delete", map[string]any{"path": "notes/gone.md"}})

	// Every line and entry names its vault.
	err := audit.Read(va.cfg.AuditPath, func(r audit.Record) error {
		if r.Vault != vb.gate.vault.ID {
			t.Errorf("line %s (%s) names vault %q, want b's %s", r.ID, r.Tool, r.Vault, vb.gate.vault.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := history.OpenReadOnly(history.Dir(state))
	if err != nil {
		t.Fatal(err)
	}
	all, err := store.All()
	if err != nil || len(all) == 0 {
		t.Fatalf("history: %v, %v", all, err)
	}
	for _, e := range all {
		if e.Vault != vb.gate.vault.ID {
			t.Errorf("entry %s %s names vault %q", e.ID, e.Path, e.Vault)
		}
	}

	before := tree(t, va.root)
	for _, req := range []UndoRequest{
		{Since: since},
		{Session: "sess-1"},
		{Since: since, Session: "sess-1"},
	} {
		u, err := undo(t, va.gate, req)
		if err != nil || u.Calls != 0 || len(u.Restored) != 0 || len(u.Unnamed) != 0 {
			t.Errorf("a's undo %+v: %+v, %v; want nothing to undo", req, u, err)
		}
		sameTree(t, "a after its undo by time or session", tree(t, va.root), before)
	}
	for _, id := range []string{changed.ID, deleted.ID} {
		u, err := undo(t, va.gate, UndoRequest{IDs: []string{id}})
		if !errors.Is(err, vaultid.ErrOtherVault) || u != nil {
			t.Fatalf("a's undo of b's call %s: %+v, %v; want ErrOtherVault", id, u, err)
		}
		for _, want := range []string{id, vb.gate.vault.ID, vb.root, "run undo with that vault's config"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal %q does not say %q", err, want)
			}
		}
		// Not even with its own call beside it: nothing is done.
		if _, err := undo(t, va.gate, UndoRequest{IDs: []string{id}, Since: since}); !errors.Is(err, vaultid.ErrOtherVault) {
			t.Errorf("a's undo of b's call %s with --since: %v", id, err)
		}
		sameTree(t, "a after its undo of b's call by id", tree(t, va.root), before)
	}
	if _, err := os.Lstat(filepath.Join(va.root, "notes/gone.md")); err == nil {
		t.Fatal("b's deleted note appeared in a")
	}

	// a's own change is undone by the same --since; b is left as b's
	// calls left it.
	bBefore := tree(t, vb.root)
	call(t, va.gate, "sess-1", toolCall{"write", map[string]any{"path": "notes/a-new.md", "content": "a's\n"}})
	u, err := undo(t, va.gate, UndoRequest{Since: since})
	if err != nil || !slices.Equal(u.Restored, []string{"notes/a-new.md"}) {
		t.Fatalf("a's undo of its own change: %+v, %v", u, err)
	}
	sameTree(t, "a after undoing its own change", tree(t, va.root), before)
	sameTree(t, "b after a's undo", tree(t, vb.root), bBefore)

	// b's undo of the same calls works, for b.
	if u, err := undo(t, vb.gate, UndoRequest{Since: since}); err != nil || len(u.Restored) != 2 {
		t.Fatalf("b's undo: %+v, %v", u, err)
	}
	if got, _ := os.ReadFile(filepath.Join(vb.root, "notes/gone.md")); string(got) != "b's deleted note\n" {
		t.Errorf("b's deleted note after b's undo: %q", got)
	}
}

// TestUndoOfUnnamedCalls: a change kept before vaults were named (its
// gate named none) is its vault's while the state folder serves that
// vault alone, and undone; once the folder serves two, it is no one's:
// left out of --since and --session with a reason, and refused by id.
func TestUndoOfUnnamedCalls(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		g, vault, _ := historyGate(t)
		g.vault.ID = "" // as before vaults were named
		before := tree(t, vault)
		o := call(t, g, "sess-old", toolCall{"write", map[string]any{"path": "a.md", "content": "new\n"}})
		u, err := undo(t, g, UndoRequest{IDs: []string{o.ID}})
		if err != nil || !slices.Equal(u.Restored, []string{"a.md"}) {
			t.Fatalf("undo of an unnamed call, one vault: %+v, %v", u, err)
		}
		sameTree(t, "after the undo", tree(t, vault), before)
	})
	t.Run("shared", func(t *testing.T) {
		va, vb, _ := sharedVaults(t, map[string]string{"x.md": "a's x\n"}, map[string]string{"x.md": "b's x\n"})
		since := time.Now().Add(-time.Minute)
		vb.gate.vault.ID = "" // as before vaults were named
		o := call(t, vb.gate, "sess-old", toolCall{"write", map[string]any{"path": "x.md", "content": "a's x\n"}})
		for _, v := range []*sharedVault{va, vb} {
			before := tree(t, v.root)
			u, err := undo(t, v.gate, UndoRequest{Since: since, Session: "sess-old"})
			if err != nil || u.Calls != 0 || len(u.Restored) != 0 || !slices.Equal(u.Unnamed, []string{o.ID}) {
				t.Errorf("undo --since of an unnamed call in %s: %+v, %v", v.root, u, err)
			}
			_, err = undo(t, v.gate, UndoRequest{IDs: []string{o.ID}})
			if !errors.Is(err, vaultid.ErrOtherVault) || !strings.Contains(err.Error(), "names no vault") {
				t.Errorf("undo by id of an unnamed call in %s: %v", v.root, err)
			}
			sameTree(t, "after the refused undos", tree(t, v.root), before)
		}
	})
}
