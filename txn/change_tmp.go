package txn

// change_tmp.go holds the seam types of /work/notes/issue11.md verbatim,
// with stand-ins for NewLayer and Remove, until layer.go and change.go
// land on main; it is deleted then.

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
)

// Layer is one call's upper and work folders, in the state folder (never in the vault, never on overlayfs or FUSE).
type Layer struct{ Dir, Upper, Work string }

// NewLayer is a stand-in: stateDir/txn/<random id>/{upper,work}, mode 0700 on Dir.
func NewLayer(stateDir string) (*Layer, error) {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	root := filepath.Join(stateDir, "txn")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, err
	}
	l := &Layer{Dir: filepath.Join(root, hex.EncodeToString(id[:]))}
	l.Upper, l.Work = filepath.Join(l.Dir, "upper"), filepath.Join(l.Dir, "work")
	if err := os.Mkdir(l.Dir, 0o700); err != nil {
		return nil, err
	}
	for _, d := range []string{l.Upper, l.Work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Remove is a stand-in.
func (l *Layer) Remove() error { return os.RemoveAll(l.Dir) }

type Op uint8

const (
	Create Op = iota
	Modify
	Delete
	Move
	Link
	Special
)

type State struct {
	Mode   fs.FileMode
	Size   int64
	SHA256 string
	Target string /* symlink */
}
type Change struct {
	Op     Op
	Path   string // vault-relative, slash-separated, the on-disk name
	From   string // Move: where it was; Link: an existing name of the same inode
	Dir    bool   // a folder (Create: a new folder; Delete: a folder with everything in it; Move: a folder)
	After  *State // nil for Delete
	Before *State // the file as the lower layer (the vault) holds it; nil for Create
}
type DiffOptions struct {
	Privileged bool  // the overlay was mounted by real root: trusted.overlay.* xattrs; else userxattr: user.overlay.*
	MaxFiles   int   // entries in the upper layer; past it Diff returns *LimitError (nothing committed)
	MaxBytes   int64 // bytes in the upper layer; likewise
}

type LimitError struct {
	What       string
	Limit, Got int64
}
