package history_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/vaultfs"
)

// TestComingBodyNeedsNoRoomAfter: a change that names the bodies it will
// leave (a bash commit, from its layer) has them kept by Begin, with the
// pre-images; once the change is made, recording its after-state needs
// no room, so a disk that filled up meanwhile loses nothing: the entries
// are applied, diff shows the new content, and GC keeps it. One body is
// small enough for the log's record, one is streamed to a blob file.
func TestComingBodyNeedsNoRoomAfter(t *testing.T) {
	dir := t.TempDir()
	vault, state := filepath.Join(dir, "vault"), filepath.Join(dir, "state")
	os.MkdirAll(vault, 0o755)
	kept := history.Dir(state)
	vaulttest.SmallDisk(t, kept, "16m")
	fsys, err := vaultfs.Open(vault)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	s, err := history.Open(kept, fsys, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write(t, vault, "small.md", "before\n")
	bodies := map[string]string{
		"small.md": "after, small\n",
		"huge.md":  strings.Repeat("a line of a huge note\n", 300_000), // 6.6 MB: past what is read whole
	}
	var targets []history.Target
	for _, p := range []string{"small.md", "huge.md"} {
		body := bodies[p]
		sum := sha256.Sum256([]byte(body))
		targets = append(targets, history.Target{Op: "modify", Path: p, Coming: &history.Body{
			SHA256: hex.EncodeToString(sum[:]), Size: int64(len(body)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil },
		}})
	}
	c, err := s.Begin("coming", history.Meta{Session: "s"}, targets)
	if err != nil {
		t.Fatal(err)
	}
	// the disk fills up; the change is made in the vault
	filler := vaulttest.Fill(t, kept, 0)
	for p, body := range bodies {
		write(t, vault, p, body)
	}
	if err := c.Done(); err != nil {
		t.Fatalf("recording the after-state of kept bodies on a full disk: %v", err)
	}
	es, err := s.Call("coming")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.State != history.Applied || e.After.SHA256 != e.Coming {
			t.Errorf("%s: state %s, after %s, coming %s", e.Path, e.State, e.After.SHA256, e.Coming)
		}
	}
	os.Remove(filler)
	if _, err := s.GC(es[0].Time); err != nil {
		t.Fatal(err)
	}
	var diff bytes.Buffer
	if err := s.Diff(&diff, "coming"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff.String(), "+after, small") || !strings.Contains(diff.String(), "+a line of a huge note") {
		t.Errorf("the diff lacks the kept after-bodies:\n%.300s", diff.String())
	}
}

// TestComingBodyMustMatch: a body that is not what its hash says (the
// layer changed after it was judged) is refused by Begin.
func TestComingBodyMustMatch(t *testing.T) {
	_, _, s := vaultStore(t, history.Options{})
	for _, body := range []string{"short", strings.Repeat("x", 5<<20)} {
		_, err := s.Begin("mismatch", history.Meta{}, []history.Target{{Op: "create", Path: "n.md", Coming: &history.Body{
			SHA256: strings.Repeat("0", 64), Size: int64(len(body)),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil },
		}}})
		if err == nil || !strings.Contains(err.Error(), "not the content that was judged") {
			t.Errorf("a %d-byte body that does not match its hash: %v", len(body), err)
		}
	}
}
