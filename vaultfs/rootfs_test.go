package vaultfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"
)

// TestCannotLeave: neither file system opens anything outside the vault,
// by "..", through a link out, or by an absolute name.
func TestCannotLeave(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "notes/out")); err != nil {
		t.Fatal(err)
	}
	nf, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer nf.Close()
	rf, err := OpenRootFs(root)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	for _, fsys := range []afero.Fs{nf, rf} {
		for _, name := range []string{"../x", "notes/out/passwd", "/etc/passwd"} {
			if f, err := fsys.Open(name); err == nil {
				f.Close()
				t.Errorf("%s opened %q", fsys.Name(), name)
			}
		}
	}
}
