package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/history"
)

// TestWriteIsWriteAhead: write and edit keep the new content with the
// pre-image, and what they wrote is recorded as flushed by the time the
// server closes.
func TestWriteIsWriteAhead(t *testing.T) {
	g, vault, state := historyGate(t)
	w := call(t, g, "s", toolCall{"write", map[string]any{"path": "a.md", "content": "written\n"}})
	e := call(t, g, "s", toolCall{"edit", map[string]any{"path": "b.md", "old_string": "bee", "new_string": "wasp"}})
	st := g.keep.(*history.Store)
	st.Close() // waits for the queued flushes
	ro, err := history.OpenReadOnly(history.Dir(state))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, path, body string }{{w.ID, "a.md", "written\n"}, {e.ID, "b.md", "wasp\n"}} {
		es, err := ro.Call(c.id)
		if err != nil || len(es) != 1 {
			t.Fatalf("%s: %+v %v", c.path, es, err)
		}
		en := es[0]
		if en.Intended == nil || !en.After.Same(*en.Intended) || en.State != history.Applied || !en.OnDisk {
			t.Errorf("%s: entry %+v, want applied, on disk, after as intended", c.path, en)
		}
		if body, _ := os.ReadFile(filepath.Join(vault, c.path)); string(body) != c.body {
			t.Errorf("%s holds %q", c.path, body)
		}
	}
}

// TestStartUpRollsForward: a write whose copy in the vault a crash lost
// (begun write-ahead, never placed) is given its content when a server
// starts, and one the person changed since is left and named.
func TestStartUpRollsForward(t *testing.T) {
	g, vault, _ := historyGate(t)
	st := g.keep.(*history.Store)
	for _, c := range []struct{ id, path, body string }{{"lost-write", "a.md", "the agent's\n"}, {"overtaken", "b.md", "the agent's\n"}} {
		if _, err := st.Begin(c.id, history.Meta{Tool: "write"}, []history.Target{
			{Op: "modify", Path: c.path, New: &history.NewFile{Data: []byte(c.body), Mode: 0o644}}}); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(vault, "b.md"), []byte("the person's\n"), 0o644)
	var log bytes.Buffer
	g2, err := OpenServer(g.cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	g2.Close()
	if body, _ := os.ReadFile(filepath.Join(vault, "a.md")); string(body) != "the agent's\n" {
		t.Errorf("a.md holds %q, want the lost write rolled forward", body)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "b.md")); string(body) != "the person's\n" {
		t.Errorf("b.md holds %q, want the person's change left", body)
	}
	if !strings.Contains(log.String(), "1 file(s)") || !strings.Contains(log.String(), "b.md holds neither") {
		t.Errorf("start-up said:\n%s", log.String())
	}
}

// TestStartUpSettlesCutDelete: a delete a kill cut short after its
// pre-image (the note gone, the outcome never recorded) is recorded as
// applied when a server starts, and says so; undo then brings the note
// back without calling it changed since.
func TestStartUpSettlesCutDelete(t *testing.T) {
	g, vault, _ := historyGate(t)
	if _, err := g.keep.(*history.Store).Begin("cut-delete", history.Meta{Tool: "delete", Session: "s", Settled: history.SettledFromDisk}, []history.Target{{Op: "delete", Path: "other/keep.md"}}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(vault, "other/keep.md"))
	var log bytes.Buffer
	g2, err := OpenServer(g.cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	g2.Close()
	if !strings.Contains(log.String(), "1 delete(s) or move(s)") {
		t.Errorf("start-up said:\n%s", log.String())
	}
	u, err := undo(t, g2, UndoRequest{IDs: []string{"cut-delete"}})
	if err != nil || len(u.Conflicts) != 0 {
		t.Fatalf("undo: %+v %v", u, err)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "other/keep.md")); string(body) != "kept\n" {
		t.Errorf("other/keep.md holds %q after undo", body)
	}
}
