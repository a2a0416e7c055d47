package history_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"
	"github.com/vaultgate/vaultgate/history"
)

// TestTempsLeft: the journal judges each noted name still in the vault by
// what was noted — the very file once it was made, its kind and at most
// its size before — and drops the notes of names gone, and torn ones.
func TestTempsLeft(t *testing.T) {
	vault, fsys, _ := vaultStore(t, history.Options{})
	dir := filepath.Join(t.TempDir(), "temps")
	temps := history.NewTemps(dir)
	note := func(rel, kind string, size int64, made bool) {
		t.Helper()
		n, err := temps.Note(rel, kind, size, nil)
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(vault, rel)
		switch kind {
		case history.KindDir:
			os.MkdirAll(filepath.Join(full, "inner"), 0o755)
		default:
			os.WriteFile(full, []byte("12345"), 0o644)
		}
		if made {
			fi, _ := os.Lstat(full)
			n.Made(fi)
		}
	}
	note(".vaultgate-tmp-made", history.KindFile, 5, true)    // ours
	note(".vaultgate-tmp-cut", history.KindFile, 9, false)    // ours: cut before Made, no bigger
	note(".vaultgate-tmp-big", history.KindFile, 3, false)    // not: bigger than vaultgate wrote
	note(".vaultgate-tmp-dir", history.KindDir, 0, true)      // ours, a folder
	note(".vaultgate-tmp-kind", history.KindDir, 0, false)    // made a folder...
	os.RemoveAll(filepath.Join(vault, ".vaultgate-tmp-kind")) // ...now a file
	os.WriteFile(filepath.Join(vault, ".vaultgate-tmp-kind"), nil, 0o644)
	note(".vaultgate-tmp-swapped", history.KindFile, 5, true) // replaced by another file
	os.WriteFile(filepath.Join(vault, "other"), []byte("12345"), 0o644)
	os.Rename(filepath.Join(vault, "other"), filepath.Join(vault, ".vaultgate-tmp-swapped"))
	note(".vaultgate-tmp-linked", history.KindFile, 5, false) // given a second name
	os.Link(filepath.Join(vault, ".vaultgate-tmp-linked"), filepath.Join(vault, "second"))
	note(".vaultgate-tmp-gone", history.KindFile, 5, true)
	os.Remove(filepath.Join(vault, ".vaultgate-tmp-gone"))
	// a note a stop tore as it was written: its name was never made
	os.WriteFile(filepath.Join(dir, "torn.json"), []byte(`{"path":".vaultgate-tm`), 0o600)
	os.WriteFile(filepath.Join(vault, ".vaultgate-tmp-torn"), nil, 0o644)

	left, err := temps.Left(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		".vaultgate-tmp-made": true, ".vaultgate-tmp-cut": true, ".vaultgate-tmp-dir": true,
		".vaultgate-tmp-big": false, ".vaultgate-tmp-kind": false, ".vaultgate-tmp-swapped": false, ".vaultgate-tmp-linked": false,
	}
	got := map[string]bool{}
	for _, l := range left {
		got[l.Path] = l.Ours
		if !l.Ours && l.Why == "" {
			t.Errorf("%s: not ours, with no why", l.Path)
		}
		if l.Path == ".vaultgate-tmp-dir" && !l.Dir {
			t.Errorf("%s: not a folder", l.Path)
		}
	}
	for p, ours := range want {
		if o, ok := got[p]; !ok || o != ours {
			t.Errorf("%s: left %v ours %v, want ours %v", p, ok, o, ours)
		}
	}
	if len(got) != len(want) {
		t.Errorf("left %v, want %v", got, want)
	}
	for _, l := range left {
		if err := temps.Drop(l); err != nil {
			t.Fatal(err)
		}
	}
	if left, _ := temps.Left(fsys); len(left) != 0 {
		t.Errorf("after dropping: %+v", left)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the journal still holds %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(vault, ".vaultgate-tmp-torn")); err != nil {
		t.Error("an unnoted name was touched")
	}
}

// TestTempsNil: a gate without a state folder notes nothing, and a nil
// journal's notes do nothing.
func TestTempsNil(t *testing.T) {
	var temps *history.Temps = history.NewTemps("")
	n, err := temps.Note("x", history.KindFile, 1, nil)
	if err != nil || n != nil {
		t.Fatalf("%v %v", n, err)
	}
	n.Made(nil)
	n.Gone()
	if left, err := temps.Left(nil); err != nil || left != nil {
		t.Fatalf("%v %v", left, err)
	}
}

// TestTempsUnknownLinksStay: a noted file on a file system that does not
// say how many names it has (no Stat_t) is not taken for vaultgate's: it
// may have another name, so start-up leaves it.
func TestTempsUnknownLinksStay(t *testing.T) {
	fsys := afero.NewMemMapFs()
	temps := history.NewTemps(filepath.Join(t.TempDir(), "temps"))
	if _, err := temps.Note(".vaultgate-tmp-x", history.KindFile, 5, nil); err != nil {
		t.Fatal(err)
	}
	if err := afero.WriteFile(fsys, ".vaultgate-tmp-x", []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	left, err := temps.Left(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Ours || left[0].Why == "" {
		t.Fatalf("left %+v, want one not ours, with why", left)
	}
}
