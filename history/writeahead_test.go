package history_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/history"
)

// writeAhead begins a write-ahead change of rel to body, as the write
// tool does: the new content kept with the pre-image, the file not yet
// written.
func writeAhead(t *testing.T, s *history.Store, id, rel, body string) *history.Change {
	t.Helper()
	c, err := s.Begin(id, history.Meta{Session: "s", Tool: "write"},
		[]history.Target{{Op: "modify", Path: rel, New: &history.NewFile{Data: []byte(body), Mode: 0o644}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func read(t *testing.T, vault, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vault, rel))
	if os.IsNotExist(err) {
		return "(missing)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRollForward: what a crash can leave of a write-ahead change, and
// what RollForward makes of it, each case in a vault of its own. A second
// RollForward finds nothing left to do.
func TestRollForward(t *testing.T) {
	cases := []struct {
		name string
		// crash makes the change, as far as the crash let it, in vault.
		crash    func(t *testing.T, vault string, s *history.Store)
		want     string // n.md afterwards
		restored int
		flushed  int
		left     int
	}{
		{"the write was lost", func(t *testing.T, vault string, s *history.Store) {
			writeAhead(t, s, "c1", "n.md", "new\n")
		}, "new\n", 1, 0, 0},
		{"the write was lost after Done", func(t *testing.T, vault string, s *history.Store) {
			c := writeAhead(t, s, "c1", "n.md", "new\n")
			write(t, vault, "n.md", "new\n")
			if err := c.Done(); err != nil {
				t.Fatal(err)
			}
			write(t, vault, "n.md", "old\n") // the power cut took the unflushed copy
		}, "new\n", 1, 0, 0},
		{"the write was made, not flushed", func(t *testing.T, vault string, s *history.Store) {
			c := writeAhead(t, s, "c1", "n.md", "new\n")
			write(t, vault, "n.md", "new\n")
			c.Done()
		}, "new\n", 0, 1, 0},
		{"someone changed the file since", func(t *testing.T, vault string, s *history.Store) {
			c := writeAhead(t, s, "c1", "n.md", "new\n")
			write(t, vault, "n.md", "new\n")
			c.Done()
			write(t, vault, "n.md", "the person's own\n")
		}, "the person's own\n", 0, 0, 1},
		{"the change failed", func(t *testing.T, vault string, s *history.Store) {
			c := writeAhead(t, s, "c1", "n.md", "new\n")
			if err := c.Failed(); err != nil {
				t.Fatal(err)
			}
		}, "old\n", 0, 0, 0},
		{"a later change owns the path", func(t *testing.T, vault string, s *history.Store) {
			writeAhead(t, s, "c1", "n.md", "new\n")
			c, err := s.Begin("c2", history.Meta{}, []history.Target{{Op: "delete", Path: "n.md"}})
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(vault, "n.md"))
			c.Done()
		}, "(missing)", 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vault, fsys, s := vaultStore(t, history.Options{})
			write(t, vault, "n.md", "old\n")
			tc.crash(t, vault, s)
			// the server is gone: a new one starts over the same store
			s2, err := history.Open(s.Dir(), fsys, history.Options{Recover: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			got, err := s2.RollForward(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if got.Restored != tc.restored || got.Flushed != tc.flushed || len(got.Left) != tc.left {
				t.Errorf("rolled %+v, want %d restored, %d flushed, %d left", got, tc.restored, tc.flushed, tc.left)
			}
			if body := read(t, vault, "n.md"); body != tc.want {
				t.Errorf("n.md holds %q, want %q", body, tc.want)
			}
			for _, l := range got.Left {
				if !strings.Contains(l, "n.md") || !strings.Contains(l, "vaultgate diff c1") {
					t.Errorf("left without saying where and how to see it: %s", l)
				}
			}
			again, err := s2.RollForward(fsys)
			if err != nil || again.Restored+again.Flushed+len(again.Left) != 0 {
				t.Errorf("a second RollForward did %+v, %v", again, err)
			}
			es, err := s2.Call("c1")
			if err != nil || !es[0].OnDisk {
				t.Errorf("c1 not recorded as settled: %+v %v", es, err)
			}
		})
	}
}

// TestRollForwardMakesTheFolder: a lost create in a new folder comes back
// with its folder, and the write's body is kept once, in the record that
// was flushed.
func TestRollForwardMakesTheFolder(t *testing.T) {
	vault, fsys, s := vaultStore(t, history.Options{})
	_, err := s.Begin("c1", history.Meta{}, []history.Target{
		{Op: "create", Path: "new"},
		{Op: "create", Path: "new/n.md", New: &history.NewFile{Data: []byte("fresh\n"), Mode: 0o600}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.RollForward(fsys)
	if err != nil || got.Restored != 1 {
		t.Fatalf("rolled %+v, %v", got, err)
	}
	if body := read(t, vault, "new/n.md"); body != "fresh\n" {
		t.Errorf("new/n.md holds %q", body)
	}
	if fi, err := os.Stat(filepath.Join(vault, "new/n.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new/n.md: %v %v, want mode 0600", fi, err)
	}
	if n := blobCount(t, s); n != 1 {
		t.Errorf("%d bodies kept, want the new one alone", n)
	}
}

// TestFlushLater: a write-ahead change flushed by the store's queue is
// recorded on disk by the time Close returns, and its new body is not
// kept twice by Done.
func TestFlushLater(t *testing.T) {
	vault, fsys, s := vaultStore(t, history.Options{})
	write(t, vault, "n.md", "old\n")
	c := writeAhead(t, s, "c1", "n.md", "new\n")
	write(t, vault, "n.md", "new\n")
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	c.FlushLater()
	if n := blobCount(t, s); n != 2 {
		t.Errorf("%d bodies kept, want 2 (old and new)", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := history.Open(s.Dir(), fsys, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	es, err := s2.Call("c1")
	if err != nil || len(es) != 1 || !es[0].OnDisk || es[0].State != history.Applied {
		t.Fatalf("after Close: %+v %v", es, err)
	}
	if got, err := s2.RollForward(fsys); err != nil || got.Restored+got.Flushed+len(got.Left) != 0 {
		t.Errorf("RollForward after a flush did %+v, %v", got, err)
	}
}
