package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"
)

// ConflictError refuses a commit because the vault's file at Path changed
// while the command ran (a sync client, the person's editor): it is never
// overwritten, and nothing of the commit is applied.
type ConflictError struct{ Path string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("txn: %s changed in the vault while the command ran", e.Path)
}

// origin is where a name of the change list stands before the commit.
type origin uint8

const (
	inVault origin = iota // the vault's own entry, under the name returned
	planned               // made by an earlier change of the list
	gone                  // removed or moved away by an earlier change
	fresh                 // below a folder an earlier change made: nothing there yet
)

// locate follows name back through the earlier changes of the list to
// the vault entry it comes from: a Move followed by a Modify of the new
// name checks the old one, and a Create after a Delete of the same name
// does not need the vault to lack it.
func locate(earlier []Change, name string) (origin, string) {
	for j := len(earlier) - 1; j >= 0; j-- {
		c := earlier[j]
		switch c.Op {
		case Move:
			if rest, ok := within(name, c.Path, c.Dir); ok {
				name = c.From + rest
				continue
			}
			if _, ok := within(name, c.From, c.Dir); ok {
				return gone, name
			}
		case Create, Link:
			if name == c.Path {
				return planned, name
			}
			if _, ok := within(name, c.Path, c.Dir); ok {
				return fresh, name
			}
		case Delete:
			if _, ok := within(name, c.Path, c.Dir); ok {
				return gone, name
			}
		}
	}
	return inVault, name
}

// within tells whether name is p or, for a folder, below it, and gives
// the rest of name after p ("" or "/...").
func within(name, p string, folder bool) (string, bool) {
	if name == p {
		return "", true
	}
	if folder && strings.HasPrefix(name, p+"/") {
		return name[len(p):], true
	}
	return "", false
}

// checkConflicts refuses the list, before anything is applied, if the
// vault changed under it: a source (a Modify, a Delete, a Move's or a
// Link's From) must still be there, unchanged since before the start, and
// a destination (a Create, a Move's or a Link's Path) must not exist.
// This is the one place that tells whether the vault changed during a
// call (Start.during).
func checkConflicts(vault afero.Fs, changes []Change, start Start) error {
	for i, c := range changes {
		earlier := changes[:i]
		if src, ok := sourceOf(c); ok {
			switch where, name := locate(earlier, src); where {
			case gone, fresh:
				return fmt.Errorf("txn: change %d uses %s, which the earlier changes leave absent", i, src)
			case inVault:
				if err := checkSource(vault, name, c, start); err != nil {
					return err
				}
			}
		}
		if dst, ok := destinationOf(c); ok {
			switch where, name := locate(earlier, dst); where {
			case planned:
				return fmt.Errorf("txn: change %d makes %s, which an earlier change made", i, dst)
			case inVault:
				_, err := lstat(vault, name)
				if err == nil || isMissing(err) && !errors.Is(err, fs.ErrNotExist) {
					return &ConflictError{Path: name}
				}
				if !errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("txn: checking %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

// sourceOf is the existing name a change reads or removes.
func sourceOf(c Change) (string, bool) {
	switch c.Op {
	case Modify, Delete:
		return c.Path, true
	case Move, Link:
		return c.From, true
	}
	return "", false
}

// destinationOf is the name a change makes, which must be free.
func destinationOf(c Change) (string, bool) {
	switch c.Op {
	case Create, Move, Link:
		return c.Path, true
	}
	return "", false
}

func checkSource(vault afero.Fs, name string, c Change, start Start) error {
	fi, err := lstat(vault, name)
	if isMissing(err) {
		return &ConflictError{Path: name}
	}
	if err != nil {
		return fmt.Errorf("txn: checking %s: %w", name, err)
	}
	if err := changedSince(fi, name, start); err != nil {
		return err
	}
	if c.Op != Link && !matchesBefore(fi, c.Before) {
		return &ConflictError{Path: name}
	}
	if c.Op == Delete && c.Dir {
		return checkTree(vault, name, start)
	}
	return nil
}

// checkTree checks everything a folder's Delete would take with it: a
// note edited deep inside during the call must not be lost.
func checkTree(vault afero.Fs, dir string, start Start) error {
	names, err := readDirNames(vault, dir)
	if err != nil {
		return fmt.Errorf("txn: checking %s: %w", dir, err)
	}
	for _, n := range names {
		name := path.Join(dir, n)
		fi, err := lstat(vault, name)
		if err != nil {
			return fmt.Errorf("txn: checking %s: %w", name, err)
		}
		if err := changedSince(fi, name, start); err != nil {
			return err
		}
		if fi.IsDir() {
			if err := checkTree(vault, name, start); err != nil {
				return err
			}
		}
	}
	return nil
}

// changedSince refuses an entry whose ctime is the call's start or
// later; a file system that can't tell (no Stat_t) is refused too.
func changedSince(fi fs.FileInfo, name string, start Start) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("txn: %s: the file system gives no ctime to check conflicts by", name)
	}
	if start.during(ctime(st)) {
		return &ConflictError{Path: name}
	}
	return nil
}

// matchesBefore compares the vault entry with the record the change was
// judged on: the same type and mode, and for a non-folder the same size.
func matchesBefore(fi fs.FileInfo, before *State) bool {
	if before == nil {
		return true
	}
	if fi.Mode() != before.Mode {
		return false
	}
	return fi.IsDir() || fi.Size() == before.Size
}

// isMissing tells whether err says the name does not lead to an entry:
// absent, or a link or a file where a folder was on the way.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
}

// lstat never follows a link at the end of name; the vault Fs follows
// none on the way.
func lstat(vault afero.Fs, name string) (fs.FileInfo, error) {
	if l, ok := vault.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(name)
		return fi, err
	}
	return nil, &fs.PathError{Op: "lstat", Path: name, Err: errors.ErrUnsupported}
}

func readDirNames(vault afero.Fs, dir string) ([]string, error) {
	f, err := vault.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
