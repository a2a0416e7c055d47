package txn

import (
	"fmt"
	"io/fs"
)

// Op is what a change does to one path of the vault.
type Op uint8

const (
	Create  Op = iota // a new file, folder or symlink
	Modify            // an existing file whose content or mode changed (a folder: its mode)
	Delete            // a file, or a folder with everything in it, is gone
	Move              // renamed from From to Path
	Link              // a new hard link at Path to the file already named From
	Special           // a FIFO, socket or device: never committed, refused by the rules
)

var opNames = [...]string{Create: "create", Modify: "modify", Delete: "delete", Move: "move", Link: "link", Special: "special"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// State is what one side of a change holds at its path.
type State struct {
	Mode   fs.FileMode // type and permission bits
	Size   int64       // bytes of a file; length of a symlink's target
	SHA256 string      // hex digest of a file's content; empty for folders, symlinks and special files
	Target string      // symlink: where it points, as stored (never followed)
}

// Change is one real effect of a command on the vault.
type Change struct {
	Op     Op
	Path   string // vault-relative, slash-separated, the on-disk name
	From   string // Move: where it was; Link: an existing name of the same inode
	Dir    bool   // a folder (Create: a new folder; Delete: a folder with everything in it; Move: a folder)
	After  *State // nil for Delete
	Before *State // the file as the lower layer (the vault) holds it; nil for Create
}

func (c Change) String() string {
	switch c.Op {
	case Move, Link:
		return fmt.Sprintf("%s %q -> %q", c.Op, c.From, c.Path)
	default:
		return fmt.Sprintf("%s %q", c.Op, c.Path)
	}
}

// DiffOptions says how the overlay was mounted and how much one call may change.
type DiffOptions struct {
	Privileged bool  // the overlay was mounted by real root: trusted.overlay.* xattrs; else userxattr: user.overlay.*
	MaxFiles   int   // entries in the upper layer; past it Diff returns *LimitError (nothing committed); 0: no cap
	MaxBytes   int64 // bytes in the upper layer; likewise
}

// LimitError says that a call changed more than it may: What is "files" or "bytes", Got
// is how far Diff had counted when it stopped (at least Limit+1, not the whole total).
type LimitError struct {
	What       string
	Limit, Got int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("txn: the command changed more %s than allowed: over %d (counted %d)", e.What, e.Limit, e.Got)
}
