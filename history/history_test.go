package history_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/vaultfs"
)

// vaultStore is a vault folder and a store over it, the vault reached as
// the server reaches it.
func vaultStore(t *testing.T, opt history.Options) (vault string, fsys *vaultfs.NoFollowFs, s *history.Store) {
	t.Helper()
	dir := t.TempDir()
	vault = filepath.Join(dir, "vault")
	if err := os.MkdirAll(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	fsys, err := vaultfs.Open(vault)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	s, err = history.Open(history.Dir(filepath.Join(dir, "state")), fsys, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return vault, fsys, s
}

func write(t *testing.T, vault, rel, body string) {
	t.Helper()
	p := filepath.Join(vault, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func blobCount(t *testing.T, s *history.Store) int {
	t.Helper()
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return st.Bodies
}

// TestIdenticalContentKeptOnce: two files of one body, kept by two calls,
// are one blob.
func TestIdenticalContentKeptOnce(t *testing.T) {
	vault, _, s := vaultStore(t, history.Options{})
	write(t, vault, "a.md", "same body\n")
	write(t, vault, "b/c.md", "same body\n")
	for i, p := range []string{"a.md", "b"} {
		c, err := s.Begin("id-"+string(rune('0'+i)), history.Meta{}, []history.Target{{Op: "delete", Path: p}})
		if err != nil {
			t.Fatal(err)
		}
		c.Done()
	}
	if n := blobCount(t, s); n != 1 {
		t.Errorf("%d blobs, want 1", n)
	}
}

// TestCrashBetweenPreImageAndChange: Begin returned (the pre-image is on
// disk, the entry pending) and the server died, before or after the change.
// A new store finds the entry; undo sees nothing to do when the file is
// old, and a change of unknown outcome when it is new, which --force
// takes back.
func TestCrashBetweenPreImageAndChange(t *testing.T) {
	for _, changed := range []bool{false, true} {
		vault, fsys, s := vaultStore(t, history.Options{})
		write(t, vault, "n.md", "old\n")
		if _, err := s.Begin("crash", history.Meta{Session: "s"}, []history.Target{{Op: "modify", Path: "n.md"}}); err != nil {
			t.Fatal(err)
		}
		if changed {
			write(t, vault, "n.md", "new\n")
		}
		// the server is gone: a fresh store over the same folder
		s2, err := history.Open(s.Dir(), fsys, history.Options{})
		if err != nil {
			t.Fatal(err)
		}
		es, err := s2.Call("crash")
		if err != nil || len(es) != 1 || es[0].State != history.Pending {
			t.Fatalf("entries after the crash: %+v %v", es, err)
		}
		b, err := s2.Blob(es[0].Before.SHA256)
		if err != nil {
			t.Fatalf("the pre-image is not there: %v", err)
		}
		b.Close()
		p, err := s2.PlanUndo([]string{"crash"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !changed {
			if len(p.Nothing) != 1 || len(p.Conflicts) != 0 {
				t.Errorf("file old: plan %+v, want nothing to do", p.Undone)
			}
			continue
		}
		if len(p.Conflicts) != 1 {
			t.Errorf("file new: plan %+v, want the path named", p.Undone)
		}
		p, _ = s2.PlanUndo([]string{"crash"}, true)
		if err := s2.Apply(p, "undo-crash", history.Meta{}, fsys); err != nil {
			t.Fatal(err)
		}
		if body, _ := os.ReadFile(filepath.Join(vault, "n.md")); string(body) != "old\n" {
			t.Errorf("forced undo left %q", body)
		}
		s2.Close()
	}
}

// TestRetention: calls older than keep go; then the oldest while the
// bodies exceed max_size; a body only pruned calls named goes with them,
// one a kept call names stays.
func TestRetention(t *testing.T) {
	vault, _, s := vaultStore(t, history.Options{MaxSize: 1500, Keep: 24 * time.Hour})
	now := time.Now()
	keep := func(id string, age time.Duration, body string) {
		t.Helper()
		write(t, vault, "n.md", body)
		c, err := s.Begin(id, history.Meta{Time: now.Add(-age)}, []history.Target{{Op: "modify", Path: "n.md"}})
		if err != nil {
			t.Fatal(err)
		}
		c.Done()
	}
	keep("01-old", 48*time.Hour, strings.Repeat("a", 1000))
	keep("02-mid", 3*time.Hour, strings.Repeat("b", 1000))
	keep("03-new", 2*time.Hour, strings.Repeat("c", 1000))
	keep("04-now", time.Hour, strings.Repeat("c", 1000))
	p, err := s.GC(now)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := s.Calls()
	// 01 is too old, taking a; then b and c are 2000 bytes > 1500: 02 goes, taking b
	if strings.Join(ids, " ") != "03-new 04-now" {
		t.Errorf("kept %v (pruned %+v)", ids, p)
	}
	if p.Calls != 2 || p.Blobs != 2 || p.Bytes != 2000 {
		t.Errorf("pruned %+v, want 2 calls, 2 bodies, 2000 bytes", p)
	}
	if n := blobCount(t, s); n != 1 {
		t.Errorf("%d blobs left, want the one 03 and 04 share", n)
	}
	if _, err := s.Call("01-old"); !errors.Is(err, history.ErrUnknownID) {
		t.Errorf("01-old: %v", err)
	}
}

// TestBeginRefusesWhatItCantKeep: a pre-image that can't be read fails
// Begin, and no entry is left.
func TestBeginRefusesWhatItCantKeep(t *testing.T) {
	vault, _, s := vaultStore(t, history.Options{})
	if err := os.Mkdir(filepath.Join(vault, "loop"), 0o755); err != nil {
		t.Fatal(err)
	}
	// a path through a link the no-follow file system won't walk
	os.Symlink("loop", filepath.Join(vault, "via"))
	write(t, vault, "loop/n.md", "x")
	if _, err := s.Begin("bad", history.Meta{}, []history.Target{{Op: "modify", Path: "via/n.md"}}); err == nil {
		t.Fatal("Begin kept a pre-image through a link")
	}
	if _, err := s.Call("bad"); !errors.Is(err, history.ErrUnknownID) {
		t.Errorf("an entry was left: %v", err)
	}
	if _, err := s.Begin("../escape", history.Meta{}, nil); err == nil {
		t.Error("an id that is not a file name was taken")
	}
}

// TestSettleFinishedElsewhere: a change finished by someone else (a bash
// commit Sweep rolled forward) is settled as applied, and undo then puts
// it back without --force.
func TestSettleFinishedElsewhere(t *testing.T) {
	vault, fsys, s := vaultStore(t, history.Options{})
	write(t, vault, "n.md", "old\n")
	if _, err := s.Begin("swept", history.Meta{}, []history.Target{{Op: "modify", Path: "n.md"}}); err != nil {
		t.Fatal(err)
	}
	write(t, vault, "n.md", "new\n")
	if err := s.Settle("swept"); err != nil {
		t.Fatal(err)
	}
	es, err := s.Call("swept")
	if err != nil || len(es) != 1 || es[0].State != history.Applied {
		t.Fatalf("entries after settling: %+v %v", es, err)
	}
	p, err := s.PlanUndo([]string{"swept"}, false)
	if err != nil || len(p.Conflicts) != 0 {
		t.Fatalf("plan %+v, err %v: want no conflict", p, err)
	}
	if err := s.Apply(p, "undo-swept", history.Meta{}, fsys); err != nil {
		t.Fatal(err)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "n.md")); string(body) != "old\n" {
		t.Errorf("undo left %q", body)
	}
}

// TestSettleCut: deletes and moves a kill cut short after their
// pre-images are recorded as they came out, so undo sees no conflict: a
// delete made is applied (and undo brings the note back), one never made
// is failed (undo: nothing to do), a move made into a new folder is
// applied; a call whose path another tool or the bash changed later, or
// that holds neither state, stays pending, as do the tools that are
// settled elsewhere.
func TestSettleCut(t *testing.T) {
	vault, fsys, s := vaultStore(t, history.Options{})
	for _, n := range []string{"gone.md", "kept.md", "moved.md", "later.md", "other.md", "bash.md"} {
		write(t, vault, n, n+" body\n")
	}
	begin := func(id, tool string, targets ...history.Target) {
		t.Helper()
		m := history.Meta{Tool: tool}
		if tool != "bash" { // the vault's delete and move: told from the disk
			m.Settled = history.SettledFromDisk
		}
		if _, err := s.Begin(id, m, targets); err != nil {
			t.Fatal(err)
		}
	}
	begin("made", "delete", history.Target{Op: "delete", Path: "gone.md"})
	os.Remove(filepath.Join(vault, "gone.md"))
	begin("never", "delete", history.Target{Op: "delete", Path: "kept.md"})
	begin("move", "move", history.Target{Op: "create", Path: "into"},
		history.Target{Op: "move", Path: "moved.md", To: "into/moved.md"}, history.Target{Op: "move", Path: "into/moved.md", From: "moved.md"})
	os.Mkdir(filepath.Join(vault, "into"), 0o755)
	os.Rename(filepath.Join(vault, "moved.md"), filepath.Join(vault, "into/moved.md"))
	begin("touched", "delete", history.Target{Op: "delete", Path: "later.md"})
	os.Remove(filepath.Join(vault, "later.md"))
	c, _ := s.Begin("later", history.Meta{Tool: "write"}, []history.Target{{Op: "create", Path: "later.md"}})
	write(t, vault, "later.md", "again\n")
	c.Done()
	begin("neither", "delete", history.Target{Op: "delete", Path: "other.md"})
	write(t, vault, "other.md", "the person's\n")
	begin("bash", "bash", history.Target{Op: "delete", Path: "bash.md"})
	os.Remove(filepath.Join(vault, "bash.md"))

	n, err := s.SettleCut()
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("settled %d calls, want 3", n)
	}
	for id, want := range map[string]string{"made": history.Applied, "never": history.Failed, "move": history.Applied,
		"touched": history.Pending, "neither": history.Pending, "bash": history.Pending} {
		es, err := s.Call(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.State != want {
				t.Errorf("%s: %s is %s, want %s", id, e.Path, e.State, want)
			}
		}
	}
	p, err := s.PlanUndo([]string{"made", "never", "move"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Conflicts) != 0 || len(p.Nothing) != 1 || p.Nothing[0] != "never" {
		t.Errorf("undo of the settled calls: %+v", p.Undone)
	}
	if err := s.Apply(p, "undo-settled", history.Meta{}, fsys); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"gone.md", "kept.md", "moved.md"} {
		if body, err := os.ReadFile(filepath.Join(vault, n)); err != nil || string(body) != n+" body\n" {
			t.Errorf("after undo, %s holds %q (%v)", n, body, err)
		}
	}
	if _, err := os.Stat(filepath.Join(vault, "into")); err == nil {
		t.Error("the move's new folder is still there after undo")
	}
}
