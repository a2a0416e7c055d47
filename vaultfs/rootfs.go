package vaultfs

import (
	"os"
	"time"

	"github.com/spf13/afero"
)

// RootFs is an afero.Fs over an *os.Root: no name, however spelt and
// whatever symlinks it meets, can open anything outside the vault. It is
// the production file system; the gate's cell tests use afero.MemMapFs.
type RootFs struct {
	root *os.Root
}

// OpenRootFs opens dir as the root of a RootFs.
func OpenRootFs(dir string) (*RootFs, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &RootFs{root: r}, nil
}

// Close releases the root's descriptor.
func (f *RootFs) Close() error { return f.root.Close() }

var (
	_ afero.Fs         = (*RootFs)(nil)
	_ afero.Lstater    = (*RootFs)(nil)
	_ afero.LinkReader = (*RootFs)(nil)
)

func (f *RootFs) Name() string { return "RootFs(" + f.root.Name() + ")" }

func (f *RootFs) Create(name string) (afero.File, error) { return wrap(f.root.Create(name)) }

func (f *RootFs) Mkdir(name string, perm os.FileMode) error { return f.root.Mkdir(name, perm) }

func (f *RootFs) MkdirAll(name string, perm os.FileMode) error { return f.root.MkdirAll(name, perm) }

func (f *RootFs) Open(name string) (afero.File, error) { return wrap(f.root.Open(name)) }

func (f *RootFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	return wrap(f.root.OpenFile(name, flag, perm))
}

func (f *RootFs) Remove(name string) error { return f.root.Remove(name) }

func (f *RootFs) RemoveAll(name string) error { return f.root.RemoveAll(name) }

func (f *RootFs) Rename(oldname, newname string) error { return f.root.Rename(oldname, newname) }

func (f *RootFs) Stat(name string) (os.FileInfo, error) { return f.root.Stat(name) }

func (f *RootFs) Chmod(name string, mode os.FileMode) error { return f.root.Chmod(name, mode) }

func (f *RootFs) Chown(name string, uid, gid int) error { return f.root.Chown(name, uid, gid) }

func (f *RootFs) Chtimes(name string, atime, mtime time.Time) error {
	return f.root.Chtimes(name, atime, mtime)
}

func (f *RootFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	fi, err := f.root.Lstat(name)
	return fi, true, err
}

func (f *RootFs) ReadlinkIfPossible(name string) (string, error) { return f.root.Readlink(name) }

// SymlinkIfPossible and Link exist for tests that build vaults; the tools
// themselves never make links.
func (f *RootFs) SymlinkIfPossible(oldname, newname string) error {
	return f.root.Symlink(oldname, newname)
}

func wrap(file *os.File, err error) (afero.File, error) {
	if err != nil {
		return nil, err
	}
	return file, nil
}
