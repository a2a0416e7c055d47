package vaultfs

import (
	"errors"
	"os"

	"github.com/spf13/afero"
)

// Capabilities a file system may have beyond afero.Fs, discovered by type
// assertion. Where the Fs lacks one (afero.MemMapFs in unit tests), the
// tools fall back to checking by name, which is only safe when nothing
// else changes the vault meanwhile.

// LinkFreeChecker is a file system that can tell in one step that a name
// has no symlink in it, as far as it exists. It answers false when it
// can't tell; the caller then walks the name component by component.
type LinkFreeChecker interface {
	LinkFree(name string, last bool) bool
}

// NoReplaceRenamer renames without ever replacing what is at newname: the
// check and the rename are one step (renameat2 RENAME_NOREPLACE), so a
// file that appears meanwhile makes it fail with fs.ErrExist.
type NoReplaceRenamer interface {
	RenameNoReplace(oldname, newname string) error
}

// Pinner holds a folder open: the names given to the Fs it returns are
// taken from that folder's descriptor, so swapping a folder above it for
// a symlink can't redirect them.
type Pinner interface {
	Pin(dir string) (PinnedFs, error)
}

// PinnedFs is a file system rooted at a held folder; Close lets it go.
type PinnedFs interface {
	afero.Fs
	Close() error
}

// UnnamedCreator makes a file with no name in its root folder (O_TMPFILE),
// named only once it is whole: a crash before Link leaves nothing.
type UnnamedCreator interface {
	CreateUnnamed(perm os.FileMode) (UnnamedFile, error)
}

// UnnamedFile is a file not yet named; Link names it in the folder it was
// made in, never replacing what is there.
type UnnamedFile interface {
	afero.File
	Link(name string) error
}

// ErrUnnamedUnsupported is a kernel or file system without O_TMPFILE: the
// caller falls back to a temporary name.
var ErrUnnamedUnsupported = errors.New("unnamed files are not supported here")
