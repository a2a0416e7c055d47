package txn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultgate/vaultgate/txn"
)

// crashScene builds a vault and a layer with a list of several waves (a
// folder and a file in it, a move then a modify of the new name, a
// delete then a create of the same name, a hard link, a folder's delete).
func crashScene(t *testing.T) (*vault, string, *txn.Layer, []txn.Change) {
	t.Helper()
	v := newVault(t)
	put(t, v.dir, "n/a.md", "alpha", 0o644)
	put(t, v.dir, "n/b.md", "bravo", 0o644)
	put(t, v.dir, "n/c.md", "charlie", 0o644)
	put(t, v.dir, "old/x.md", "x", 0o644)
	put(t, v.dir, "old/deep/y.md", "y", 0o644)
	stateDir, l := newLayer(t)
	changes := []txn.Change{
		{Op: txn.Create, Path: "n/sub", Dir: true, After: &txn.State{Mode: fs.ModeDir | 0o755}},
		modifyFile(t, v, l, "n/a.md", "n/a.md", "alpha, edited", 0o600),
		createFile(t, l, "n/sub/x.md", "new in new", 0o644),
		{Op: txn.Move, Path: "n/c2.md", From: "n/c.md", Before: stateOf(t, v.dir, "n/c.md")},
		modifyFile(t, v, l, "n/c2.md", "n/c.md", "charlie, moved and edited", 0o644),
		{Op: txn.Delete, Path: "n/b.md", Before: stateOf(t, v.dir, "n/b.md")},
		createFile(t, l, "n/b.md", "bravo, written anew", 0o640),
		{Op: txn.Link, Path: "n/h.md", From: "n/a.md"},
		{Op: txn.Delete, Path: "old", Dir: true, Before: stateOf(t, v.dir, "old")},
		{Op: txn.Create, Path: "n/ln", After: &txn.State{Mode: fs.ModeSymlink | 0o777, Target: "a.md"}},
	}
	return v, stateDir, l, changes
}

// TestSweepFinishesACutCommit stops a commit before each of its steps,
// as a crash would, and checks that Sweep makes the vault equal to the
// full commit's, with no temporary file left.
func TestSweepFinishesACutCommit(t *testing.T) {
	ref, _, refLayer, refChanges := crashScene(t)
	if err := txn.Commit(ref.fs, refLayer, refChanges, txn.CommitOptions{Start: startCall(t, ref.fs, refLayer)}); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, ref.dir)

	for k := 0; k <= len(refChanges); k++ {
		v, stateDir, l, changes := crashScene(t)
		restore := txn.SetBeforeStep(func(done int) error {
			if done == k {
				return txn.ErrStopped
			}
			return nil
		})
		err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)})
		restore()
		if !stopped(err) {
			t.Fatalf("k=%d: Commit: %v, want it stopped", k, err)
		}
		// The journal alone finishes it: an in-memory upper layer is gone
		// with the process that held it.
		if err := os.RemoveAll(l.Upper); err != nil {
			t.Fatal(err)
		}
		rep, err := txn.Sweep(stateDir, v.fs)
		if err != nil || rep.Finished != 1 || rep.Removed != 0 || len(rep.Failed) != 0 {
			t.Fatalf("k=%d: Sweep: %+v, %v", k, rep, err)
		}
		sameTree(t, snapshot(t, v.dir), want)
		a, _ := os.Lstat(filepath.Join(v.dir, "n/a.md"))
		h, _ := os.Lstat(filepath.Join(v.dir, "n/h.md"))
		if !os.SameFile(a, h) {
			t.Errorf("k=%d: n/h.md is not a hard link of n/a.md", k)
		}
		if exists(l.Dir) {
			t.Errorf("k=%d: the finished layer stayed", k)
		}
	}
}

// TestSweepRemovesAbandonedLayers: a layer without a journal is a call
// cut before its commit; Sweep removes it, and a journal that was only
// being written is no journal.
func TestSweepRemovesAbandonedLayers(t *testing.T) {
	v := newVault(t)
	stateDir := t.TempDir()
	var dirs []string
	for range 2 {
		l, err := txn.NewLayer(stateDir)
		if err != nil {
			t.Fatal(err)
		}
		put(t, l.Upper, "notes/a.md", "never committed", 0o644)
		dirs = append(dirs, l.Dir)
	}
	put(t, dirs[1], "journal.json.tmp", `{"version":1,"chan`, 0o600)
	rep, err := txn.Sweep(stateDir, v.fs)
	if err != nil || rep.Removed != 2 || rep.Finished != 0 || len(rep.Failed) != 0 {
		t.Fatalf("Sweep: %+v, %v", rep, err)
	}
	for _, d := range dirs {
		if exists(d) {
			t.Errorf("%s stayed", d)
		}
	}
	if len(snapshot(t, v.dir)) != 0 {
		t.Error("Sweep touched the vault")
	}
	if rep, err := txn.Sweep(t.TempDir(), v.fs); err != nil || rep.Removed+rep.Finished+len(rep.Failed) != 0 {
		t.Errorf("Sweep of a state folder without layers: %+v, %v", rep, err)
	}
}

// TestSweepKeepsWhatItCannotFinish: a file that appeared, after the
// crash, where the commit would create one is not overwritten; the layer
// and its journal stay, and the report says why.
func TestSweepKeepsWhatItCannotFinish(t *testing.T) {
	v := newVault(t)
	put(t, v.dir, "a.md", "alpha", 0o644)
	stateDir, l := newLayer(t)
	changes := []txn.Change{
		modifyFile(t, v, l, "a.md", "a.md", "alpha, edited", 0o644),
		createFile(t, l, "new.md", "agent's", 0o644),
	}
	restore := txn.SetBeforeStep(func(done int) error {
		if done == 1 {
			return txn.ErrStopped
		}
		return nil
	})
	err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)})
	restore()
	if !stopped(err) {
		t.Fatalf("Commit: %v", err)
	}
	put(t, v.dir, "new.md", "person's", 0o644)
	abandoned, err := txn.NewLayer(stateDir)
	if err != nil {
		t.Fatal(err)
	}

	rep, err := txn.Sweep(stateDir, v.fs)
	if err != nil || rep.Finished != 0 || rep.Removed != 1 || len(rep.Failed) != 1 || rep.Failed[0].Layer != l.Dir {
		t.Fatalf("Sweep: %+v, %v", rep, err)
	}
	var conflict *txn.ConflictError
	if !errors.As(rep.Failed[0].Err, &conflict) || conflict.Path != "new.md" {
		t.Errorf("the reason: %v, want a conflict on new.md", rep.Failed[0].Err)
	}
	if !exists(filepath.Join(l.Dir, "journal.json")) || exists(abandoned.Dir) {
		t.Error("Sweep kept the wrong layer")
	}
	sameTree(t, snapshot(t, v.dir), map[string]entry{
		"a.md":   {0o644, 0, 0, "alpha, edited"},
		"new.md": {0o644, 0, 0, "person's"},
	})
}

// TestMemoryLayer: a layer whose upper folder is a descriptor (the wall's
// in-memory layer) is read and committed through it, makes its folder in
// the state folder only for a commit's journal, and Remove closes the
// descriptor and leaves nothing behind.
func TestMemoryLayer(t *testing.T) {
	v := newVault(t)
	put(t, v.dir, "n/a.md", "alpha", 0o644)
	up := t.TempDir()
	f, err := os.Open(up)
	if err != nil {
		t.Fatal(err)
	}
	stateDir := t.TempDir()
	l, err := txn.MemoryLayer(stateDir, f)
	if err != nil {
		t.Fatal(err)
	}
	if exists(l.Dir) || filepath.Dir(l.Dir) != filepath.Join(stateDir, "txn") {
		t.Fatalf("an in-memory layer's folder %s: made before a commit needs it, or not in the state folder", l.Dir)
	}
	put(t, up, "n/a.md", "alpha, edited", 0o644)
	put(t, up, "n/new.md", "new", 0o644)
	changes, err := txn.Diff(l, v.dir, txn.DiffOptions{Privileged: os.Geteuid() == 0, MaxFiles: 10, MaxBytes: 1 << 20})
	if err != nil || len(changes) != 2 {
		t.Fatalf("Diff through the descriptor: %v, %v", changes, err)
	}
	if err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, v.dir, "n/a.md") + "|" + read(t, v.dir, "n/new.md"); got != "alpha, edited|new" {
		t.Errorf("the vault holds %q", got)
	}
	if err := l.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(); err == nil {
		t.Error("Remove left the upper folder's descriptor open")
	}
	if exists(l.Dir) {
		t.Errorf("Remove left %s", l.Dir)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Error(err)
	}
	return string(b)
}

// TestSweepFinishesAVersion1Journal: a commit an older vaultgate cut
// (journal version 1: no content of its own, the layer on disk) is
// finished from its upper layer.
func TestSweepFinishesAVersion1Journal(t *testing.T) {
	ref, _, refLayer, refChanges := crashScene(t)
	if err := txn.Commit(ref.fs, refLayer, refChanges, txn.CommitOptions{Start: startCall(t, ref.fs, refLayer)}); err != nil {
		t.Fatal(err)
	}
	want := snapshot(t, ref.dir)
	v, stateDir, l, changes := crashScene(t)
	restore := txn.SetBeforeStep(func(done int) error {
		if done == 3 {
			return txn.ErrStopped
		}
		return nil
	})
	err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: startCall(t, v.fs, l)})
	restore()
	if !stopped(err) {
		t.Fatalf("Commit: %v, want it stopped", err)
	}
	name := filepath.Join(l.Dir, "journal.json")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b[:bytes.IndexByte(b, '\n')], &rec); err != nil {
		t.Fatal(err)
	}
	rec["version"] = 1
	delete(rec, "data")
	v1, _ := json.Marshal(rec)
	if err := os.WriteFile(name, v1, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := txn.Sweep(stateDir, v.fs)
	if err != nil || rep.Finished != 1 || len(rep.Failed) != 0 {
		t.Fatalf("Sweep: %+v, %v", rep, err)
	}
	sameTree(t, snapshot(t, v.dir), want)
}
