package txn_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/spf13/afero"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/vaultfs"
)

// vault is a vault folder on real files and the server's no-follow file
// system over it, which is what Commit gets in production.
type vault struct {
	dir string
	fs  *vaultfs.NoFollowFs
}

func newVault(t testing.TB) *vault {
	t.Helper()
	dir := t.TempDir()
	return &vault{dir: dir, fs: newVaultFs(t, dir)}
}

func newVaultFs(t testing.TB, dir string) *vaultfs.NoFollowFs {
	t.Helper()
	nf, err := vaultfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nf.Close() })
	return nf
}

// put writes a file of the vault (or of an upper layer), folders and all.
func put(t testing.TB, root, name, content string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, root, name string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(p, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func chown(t testing.TB, root, name string, uid, gid int) {
	t.Helper()
	if err := os.Lchown(filepath.Join(root, filepath.FromSlash(name)), uid, gid); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, root, name, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}

func newLayer(t testing.TB) (stateDir string, l *txn.Layer) {
	t.Helper()
	stateDir = t.TempDir()
	l, err := txn.NewLayer(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	return stateDir, l
}

// stateOf records a vault entry as the diff would (the Before state).
func stateOf(t testing.TB, root, name string) *txn.State {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	s := &txn.State{Mode: fi.Mode(), Size: fi.Size()}
	switch {
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s.SHA256 = sum(string(data))
	case fi.Mode()&fs.ModeSymlink != 0:
		s.Target, _ = os.Readlink(p)
	}
	return s
}

func sum(content string) string {
	h := sha256.Sum256([]byte(content))
	return hex.EncodeToString(h[:])
}

// createFile puts a new file in the upper layer and describes it.
func createFile(t testing.TB, l *txn.Layer, name, content string, mode fs.FileMode) txn.Change {
	t.Helper()
	put(t, l.Upper, name, content, mode)
	return txn.Change{Op: txn.Create, Path: name,
		After: &txn.State{Mode: mode, Size: int64(len(content)), SHA256: sum(content)}}
}

// modifyFile puts a file's new content in the upper layer; from is the
// vault name it had before (itself, or a Move's source).
func modifyFile(t testing.TB, v *vault, l *txn.Layer, name, from, content string, mode fs.FileMode) txn.Change {
	t.Helper()
	before := stateOf(t, v.dir, from)
	c := createFile(t, l, name, content, mode)
	c.Op, c.Before = txn.Modify, before
	return c
}

// entry is what the tests compare of a vault entry, byte by byte.
type entry struct {
	Mode     fs.FileMode
	Uid, Gid uint32
	Data     string // content, or a link's target
}

// snapshot reads a tree without following links.
func snapshot(t testing.TB, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		e := entry{Mode: fi.Mode(), Uid: st.Uid, Gid: st.Gid}
		switch {
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Data = string(data)
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Data, _ = os.Readlink(p)
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t testing.TB, got, want map[string]entry) {
	t.Helper()
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: missing, want %+v", name, w)
		} else if g != w {
			t.Errorf("%s: got %+v, want %+v", name, g, w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected %+v", name, g)
		}
	}
}

// startCall takes a call's start as a server does (txn.Begin), on the
// vault vfs, with l's state folder.
func startCall(t testing.TB, vfs afero.Fs, l *txn.Layer) txn.Start {
	t.Helper()
	start, err := txn.Begin(vfs, filepath.Dir(filepath.Dir(l.Dir)))
	if err != nil {
		t.Fatal(err)
	}
	return start
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("owners are set with chown, which needs root")
	}
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

// stopped tells whether err is a commit cut by the test hook.
func stopped(err error) bool {
	var inc *txn.IncompleteError
	return errors.As(err, &inc) && errors.Is(inc.Err, txn.ErrStopped)
}
