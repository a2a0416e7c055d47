//go:build linux

package txn

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNewLayer(t *testing.T) {
	state := t.TempDir()
	a, err := NewLayer(state)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewLayer(state)
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir == b.Dir {
		t.Fatalf("two layers share %s", a.Dir)
	}
	for _, l := range []*Layer{a, b} {
		if filepath.Dir(l.Dir) != filepath.Join(state, "txn") {
			t.Errorf("layer %s is not in %s", l.Dir, filepath.Join(state, "txn"))
		}
		if l.Upper != filepath.Join(l.Dir, "upper") || l.Work != filepath.Join(l.Dir, "work") {
			t.Errorf("layer %+v: upper and work are not in Dir", l)
		}
		fi, err := os.Stat(l.Dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("layer %s has mode %v, want 0700: it holds the vault's text", l.Dir, fi.Mode())
		}
		for _, d := range []string{l.Upper, l.Work} {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				t.Errorf("%s: %v, want a folder", d, err)
			}
		}
	}
}

func TestLayerRemove(t *testing.T) {
	l, err := NewLayer(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// What overlayfs leaves behind: a mode-000 folder in work, files in upper.
	locked := filepath.Join(l.Work, "work")
	if err := os.MkdirAll(filepath.Join(locked, "inner"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.Upper, "a.md"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(l.Dir); !os.IsNotExist(err) {
		t.Fatalf("after Remove, %s: %v", l.Dir, err)
	}
	if err := l.Remove(); err != nil {
		t.Errorf("a second Remove: %v, want nil", err)
	}
}

// A layer that held a real overlay mount (in a user namespace, as a non-root server
// would) is removed whole.
func TestLayerRemoveAfterOverlay(t *testing.T) {
	for _, mode := range overlayModes {
		t.Run(mode.name, func(t *testing.T) {
			base := testBase(t)
			vault := newTestVault(t, base, baseVault)
			l := newTestLayer(t, base)
			changeThroughOverlay(t, base, vault, l, mode, "rm -r d; echo x > a.md; mkdir n")
			if err := l.Remove(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(l.Dir); !os.IsNotExist(err) {
				t.Fatalf("after Remove, %s: %v", l.Dir, err)
			}
			if data, err := os.ReadFile(filepath.Join(vault, "a.md")); err != nil || string(data) != "alpha\n" {
				t.Errorf("the vault's a.md: %q, %v: the overlay wrote through", data, err)
			}
		})
	}
}
