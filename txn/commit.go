package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/afero"
)

// CommitOptions says what Commit checks conflicts against.
type CommitOptions struct {
	// Start is when the call began (Begin): a vault entry the commit
	// would change whose ctime is Start or later changed during the call
	// → *ConflictError, and nothing is applied.
	Start Start
}

// IncompleteError says the commit stopped after it had begun to change
// the vault. The journal stays in the layer's folder: keep the layer, and
// Sweep finishes the commit at the next start. It does not unwrap, so
// that a conflict met on the way is never taken for a refusal that left
// the vault untouched.
type IncompleteError struct {
	Done, Total int   // changes that may have reached the vault, of all
	Err         error // why it stopped
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("txn: commit stopped after %d of %d changes, journal kept: %v", e.Done, e.Total, e.Err)
}

// Commit applies judged changes to the vault, in order. vault must be a
// file system that never follows a link (vaultfs.NoFollowFs): every name
// is walked from the vault's root without one.
//
// Conflicts are refused before anything is applied (*ConflictError).
// Then the list is journalled in l.Dir and applied in waves of changes
// that touch unrelated names, each file atomically (a temporary file in
// its folder, fsync, rename, folder fsync); after each wave the journal
// records the progress, so a commit cut by a crash is finished by Sweep.
// An error after the first change reached the vault is an
// *IncompleteError: the layer must then be kept for Sweep.
func Commit(vault afero.Fs, l *Layer, changes []Change, opt CommitOptions) error {
	if opt.Start.IsZero() {
		return errors.New("txn: commit without the call's start (txn.Begin)")
	}
	id := filepath.Base(l.Dir)
	if err := validate(changes, id); err != nil {
		return err
	}
	if err := checkConflicts(vault, changes, opt.Start); err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	up, err := openUpperTree(l.Upper)
	if err != nil {
		return err
	}
	c := newCommitter(vault, l, changes, up)
	defer c.close()
	if err := l.MakeDir(); err != nil {
		return err
	}
	// The journal becomes durable while the first wave is staged: only
	// the first change that reaches the vault has to wait for it. It holds
	// the files' new content too, so a roll forward after a crash needs
	// no upper layer (an in-memory one is gone then; one on disk was
	// mounted volatile, so nothing made it durable).
	written := make(chan error, 1)
	go func() {
		j, err := writeJournal(l.Dir, changes, up)
		c.journal = j
		written <- err
	}()
	c.journalWritten = sync.OnceValue(func() error { return <-written })
	done, err := c.run(0, false)
	c.journalWritten()
	if c.journal != nil {
		defer c.journal.close()
	}
	if err == nil {
		return nil
	}
	if done == 0 && !errors.Is(err, errStopped) {
		// Nothing reached the vault: the journal has no work to finish.
		if c.journal == nil {
			return err
		}
		if derr := c.journal.discard(); derr == nil {
			return err
		}
	}
	return &IncompleteError{Done: done, Total: len(changes), Err: err}
}

// validate fails closed on a list no rule should have let through: a
// special file, a name that is not clean and vault-relative, a change
// whose states don't fit its kind.
func validate(changes []Change, id string) error {
	for i, c := range changes {
		bad := func(why string) error { return fmt.Errorf("txn: change %d (%s): %s", i, c.Path, why) }
		if !cleanName(c.Path) || strings.HasPrefix(path.Base(c.Path), tempPrefix(id)) {
			return bad("not a clean vault-relative name")
		}
		switch c.Op {
		case Create:
			if c.After == nil || c.Before != nil {
				return bad("a create needs the new state only")
			}
			if kind(c.After.Mode) == 0 || c.Dir != c.After.Mode.IsDir() {
				return bad("a create makes a file, a folder or a symlink")
			}
		case Modify:
			if c.After == nil || c.Before == nil || kind(c.After.Mode) == 0 ||
				kind(c.After.Mode) != kind(c.Before.Mode) || c.Dir != c.After.Mode.IsDir() {
				return bad("a modify keeps the kind of file")
			}
		case Delete:
			if c.Before == nil || c.Dir != c.Before.Mode.IsDir() {
				return bad("a delete needs the old state")
			}
		case Move:
			if !cleanName(c.From) || c.Before == nil || c.From == c.Path || strings.HasPrefix(c.Path, c.From+"/") {
				return bad("a move needs a source other than its destination")
			}
		case Link:
			if !cleanName(c.From) || c.Dir || c.From == c.Path {
				return bad("a link needs an existing file to name")
			}
		case Special:
			return bad("a special file is never committed")
		default:
			return bad(fmt.Sprintf("unknown change %d", c.Op))
		}
	}
	return nil
}

// kind is the type bits of m if Commit can make that kind, else 0.
func kind(m fs.FileMode) fs.FileMode {
	switch t := m.Type(); t {
	case 0:
		return 1 // a regular file has no type bit
	case fs.ModeDir, fs.ModeSymlink:
		return t
	}
	return 0
}

// cleanName accepts the names a vault Fs takes for an entry: relative,
// clean, not the root, no "..".
func cleanName(name string) bool {
	return name != "" && name != "." && !path.IsAbs(name) && path.Clean(name) == name &&
		name != ".." && !strings.HasPrefix(name, "../") && !strings.ContainsRune(name, 0)
}

// applyMode is the mode Commit gives: the permission bits, and for a
// folder setgid and sticky; a setuid or setgid file is never made.
func applyMode(m fs.FileMode) fs.FileMode {
	if m.IsDir() {
		return m & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
	}
	return m.Perm()
}

func parentOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return "."
}

func baseOf(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

func tempPrefix(id string) string { return ".vaultgate-txn-" + id + "-" }

// errStopped is what the test hook returns to cut a commit as a crash
// would: nothing is cleaned up.
var errStopped = errors.New("txn: commit stopped by the test hook")

// beforeStep, when set by a test, runs before each change is applied and
// once after the last; an error stops the commit there.
var beforeStep func(done int) error

// osFile is the part of *os.File the committer needs beyond afero.File.
type osFile interface {
	afero.File
	Fd() uintptr
	Chmod(fs.FileMode) error
	Chown(uid, gid int) error
}

var _ osFile = (*os.File)(nil)
