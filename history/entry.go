package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"
)

// Entry states.
const (
	Pending = "pending" // the pre-image is kept; the change has not been confirmed
	Applied = "applied" // the change was made; After is what it left
	Failed  = "failed"  // the change was not made (or not wholly): After is what is there
)

// Kinds of a path's state.
const (
	KindFile    = "file"
	KindDir     = "dir"
	KindSymlink = "symlink"
	KindOther   = "other" // a fifo, a socket, a device: its content is not kept
)

// State is what one path held at one moment.
type State struct {
	Exists bool        `json:"exists"`
	Kind   string      `json:"kind,omitempty"`
	Mode   fs.FileMode `json:"mode,omitempty"` // permission bits
	Size   int64       `json:"size,omitempty"` // a file's bytes; a folder's: the sum of its files'
	SHA256 string      `json:"sha256,omitempty"`
	Target string      `json:"target,omitempty"` // a symlink's
	// Tree is a folder's content, each entry by its path below the
	// folder, parents before children.
	Tree []TreeEntry `json:"tree,omitempty"`
}

// TreeEntry is one path inside a folder's State.
type TreeEntry struct {
	Path   string      `json:"path"`
	Kind   string      `json:"kind"`
	Mode   fs.FileMode `json:"mode"`
	Size   int64       `json:"size,omitempty"`
	SHA256 string      `json:"sha256,omitempty"`
	Target string      `json:"target,omitempty"`
}

// Same reports whether two states hold the same thing: kind, content and
// permissions (not times, which a copy or a restore changes).
func (s State) Same(o State) bool {
	if s.Exists != o.Exists {
		return false
	}
	if !s.Exists {
		return true
	}
	return s.Kind == o.Kind && s.Mode == o.Mode && s.SHA256 == o.SHA256 && s.Target == o.Target &&
		slices.Equal(s.Tree, o.Tree)
}

// blobs lists the content hashes the state refers to.
func (s State) blobs() []string {
	var out []string
	if s.Kind == KindFile && s.SHA256 != "" {
		out = append(out, s.SHA256)
	}
	for _, t := range s.Tree {
		if t.Kind == KindFile && t.SHA256 != "" {
			out = append(out, t.SHA256)
		}
	}
	return out
}

// Entry is one changed path of one call.
type Entry struct {
	Time time.Time `json:"time"`
	ID   string    `json:"id"` // the audit line's
	// Vault is the id of the vault the call changed (package vaultid);
	// absent from entries kept before vaults were named.
	Vault   string `json:"vault,omitempty"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Tool    string `json:"tool"`
	Via     string `json:"via,omitempty"`
	Op      Op     `json:"op"`
	Path    string `json:"path"`
	// From is a move's source, on the entry of its destination; To is a
	// move's destination, on the entry of its source.
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
	Before State  `json:"before"`
	After  State  `json:"after"`
	State  string `json:"state"`
	// Undoes names the call an undo took back, on the undo's entries.
	Undoes string `json:"undoes,omitempty"`
	// Settled is how the change is settled if a kill cuts it short.
	Settled Settled `json:"settled,omitempty"`
	// Intended is what a write-ahead change (Target.New) is to leave,
	// its body kept in the same flushed record as Before's.
	Intended *State `json:"intended,omitempty"`
	// OnDisk says that a write-ahead change's file is flushed in the
	// vault, or was settled by RollForward: nothing is left to recover.
	OnDisk bool `json:"on_disk,omitempty"`
	// Coming names the body a change was about to leave at Path (a bash
	// commit's, from its layer), kept with the pre-image: the after-state
	// then needs no room that a full disk may not have.
	Coming string `json:"coming,omitempty"`
}

// unflushed: a write-ahead change whose file may not be on disk yet.
func (e Entry) unflushed() bool { return e.Intended != nil && !e.OnDisk }

// Meta is who made a call, for its entries.
type Meta struct {
	Time    time.Time
	Agent   string
	Session string
	Tool    string
	Via     string
	Undoes  string
	Vault   string  // the vault's id (Entry.Vault)
	Settled Settled // how a cut-short change is settled (Entry.Settled)
}

// Op is what a change does to a path, as the history keeps it.
type Op string

const (
	OpCreate  Op = "create"
	OpModify  Op = "modify"
	OpDelete  Op = "delete"
	OpMove    Op = "move" // on both of a move's paths (Target.From, Target.To)
	OpLink    Op = "link"
	OpRestore Op = "restore" // an undo's: the path holds again what it held
)

// Settled says how a change's outcome is told if a kill cuts it short
// between its pre-images and its outcome.
type Settled string

const (
	// SettledByCaller: the caller settles it (a write-ahead write, a bash
	// commit's journal, Claude Code's write confirmed by the hook).
	SettledByCaller Settled = ""
	// SettledFromDisk: the disk alone tells what became of it — a delete
	// or a move of the vault's own tools (SettleCut).
	SettledFromDisk Settled = "disk"
)

// Target is one path a call is about to change. A move is two targets,
// the source (To set) and the destination (From set).
type Target struct {
	Op   Op
	Path string
	From string
	To   string
	// New, on a file's target, makes the change write-ahead: what the
	// file is to hold is kept with what it holds now, in one flushed
	// record, so the caller may write the vault's copy without flushing
	// it (see Change.FlushLater); RollForward puts it in place if a crash
	// lost it.
	New *NewFile
	// Coming, on a file's target, is the body the change will leave
	// there, read from elsewhere (a bash commit's layer): kept by Begin
	// with the pre-image, so the change is refused if it can't be, but
	// not write-ahead (the change's maker recovers it, not RollForward).
	Coming *Body
}

// Body is a file's content, named by its hash and read when it must be kept.
type Body struct {
	SHA256 string
	Size   int64
	Open   func() (io.ReadCloser, error)
}

// NewFile is the content and permissions a write-ahead change gives a file.
type NewFile struct {
	Data []byte
	Mode fs.FileMode
}

// treeSum names a folder's content in one hash, so two folders compare by
// one string in listings.
func treeSum(t []TreeEntry) string {
	h := sha256.New()
	for _, e := range t {
		fmt.Fprintf(h, "%s\x00%s\x00%o\x00%s\x00%s\n", e.Path, e.Kind, e.Mode, e.SHA256, e.Target)
	}
	return hex.EncodeToString(h.Sum(nil))
}
