package txn_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vaultgate/vaultgate/txn"
)

// TestDiffThenCommit runs ordinary commands in an overlay of the vault,
// commits what Diff found, and compares the vault with a copy on which
// the same command ran directly: the transaction changes the vault as
// the command would have, byte by byte.
func TestDiffThenCommit(t *testing.T) {
	const setup = `mkdir -p notes old/deep
printf 'alpha\nzulu\nmike\n' > notes/a.md
printf 'bravo\n' > notes/b.md
printf 'charlie\nable\n' > notes/c.md
printf 'x\n' > old/x.md
printf 'y\n' > old/deep/y.md
chmod 640 notes/c.md`
	scripts := []struct{ name, script string }{
		{"sed -i", `sed -i 's/alpha/ALPHA/' notes/a.md`},
		{"sort -o onto itself", `sort -o notes/a.md notes/a.md`},
		{"an editor's save", `printf 'saved\n' > notes/.a.md.swp && mv notes/.a.md.swp notes/a.md`},
		{"a rename", `mv notes/b.md notes/b2.md`},
		{"a rename, then an edit", `mv notes/b.md notes/b2.md && echo more >> notes/b2.md`},
		{"a rename over a file", `mv notes/b.md notes/a.md`},
		{"new folders", `mkdir -p notes/new/deep && echo x > notes/new/deep/x.md`},
		{"a folder removed", `rm -r old`},
		{"a folder replaced by a file", `rm -r old && echo f > old`},
		{"a folder renamed", `mv old old2`},
		{"a hard link", `ln notes/a.md notes/a-link.md`},
		{"a symlink", `ln -s a.md notes/ln`},
		{"a mode", `chmod 600 notes/a.md && chmod 700 old`},
		{"a file removed and made anew", `rm notes/c.md && echo anew > notes/c.md`},
		{"many at once", `sed -i s/alpha/A/ notes/a.md && mv notes/b.md notes/b2.md && echo more >> notes/b2.md &&
rm -r old && mkdir old && echo n > old/n.md && ln -s b2.md notes/ln && ln notes/c.md notes/c-link.md &&
mkdir -p notes/sub && mv notes/a.md notes/sub/a.md`},
	}
	for _, privileged := range []bool{true, false} {
		mount := map[bool]string{true: "root", false: "userns"}[privileged]
		for _, s := range scripts {
			t.Run(mount+"/"+s.name, func(t *testing.T) {
				want := filepath.Join(t.TempDir(), "vault")
				runSh(t, filepath.Dir(want), "mkdir vault && cd vault && "+setup+" && "+s.script)

				base := txn.TestBase(t)
				vdir := filepath.Join(base, "vault")
				runSh(t, base, "mkdir vault && cd vault && "+setup)
				l, err := txn.NewLayer(filepath.Join(base, "state"))
				if err != nil {
					t.Fatal(err)
				}
				defer l.Remove()
				v := &vault{dir: vdir}
				v.fs = newVaultFs(t, vdir)
				start := startCall(t, v.fs, l)
				txn.ThroughOverlay(t, base, vdir, l, privileged, s.script)
				changes, err := txn.Diff(l, vdir, txn.DiffOptions{Privileged: privileged})
				if err != nil {
					t.Fatal(err)
				}
				if err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: start}); err != nil {
					t.Fatalf("Commit %v: %v", changes, err)
				}
				sameTree(t, snapshot(t, vdir), snapshot(t, want))
			})
		}
	}
}

func runSh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}
