package txn

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"sync"
	"syscall"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"

	"github.com/vaultgate/vaultgate/vaultfs"
)

// committer applies a judged list to the vault, the files' new content
// read from src: the layer's upper folder, or a journal's own bytes.
type committer struct {
	vault   afero.Fs
	changes []Change
	id      string // the layer's, in the names of temporary files
	src     contentSource
	journal *journal
	// journalWritten, when set, waits until the journal is durable; no
	// change may reach the vault before.
	journalWritten func() error
}

// contentSource gives the new content of change i (a regular file).
type contentSource interface {
	open(i int, name string) (io.ReadCloser, error)
	close()
}

func newCommitter(vault afero.Fs, l *Layer, changes []Change, src contentSource) *committer {
	return &committer{vault: vault, changes: changes, id: path.Base(l.Dir), src: src}
}

func (c *committer) close() { c.src.close() }

// upperTree reads the files of an upper folder without following a link
// anywhere in their names.
type upperTree struct{ fd int }

func openUpperTree(upper string) (*upperTree, error) {
	fd, err := unix.Open(upper, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: upper, Err: err}
	}
	return &upperTree{fd: fd}, nil
}

func (u *upperTree) close() { unix.Close(u.fd) }

// prepared is what staging left for one change of a wave.
type prepared struct {
	tmp  string // the staged temporary file
	done bool   // resuming: the vault already holds the change
}

// stageWorkers bounds the files staged at once: fsyncs overlap on the
// disk, and a wave of a thousand notes must not open a thousand files.
const stageWorkers = 8

// run applies changes[from:] wave by wave and records each finished wave
// in the journal. resume (Sweep) means a change may already be in the
// vault: each step then checks what the vault holds and converges, or
// refuses what is neither the old state nor the new one. It returns how
// many changes may have reached the vault.
func (c *committer) run(from int, resume bool) (int, error) {
	done := from
	for done < len(c.changes) {
		end := waveEnd(c.changes, done)
		if n, err := c.applyWave(done, end, resume); err != nil {
			return done + n, err
		}
		if end == len(c.changes) && beforeStep != nil {
			if err := beforeStep(end); err != nil {
				return end, err
			}
		}
		// The last mark need not be durable: redoing the last wave is safe.
		if err := c.journal.mark(end, end < len(c.changes)); err != nil {
			return end, err
		}
		done = end
	}
	return done, nil
}

// waveEnd ends the wave that starts at start before the first change
// whose names equal, hold or lie in a name of the wave: within a wave
// the order does not matter, so one folder fsync and one journal mark
// serve it all, and redoing any of it after a crash is safe.
func waveEnd(changes []Change, start int) int {
	touched, above := map[string]bool{}, map[string]bool{}
	related := func(n string) bool {
		if touched[n] || above[n] {
			return true
		}
		for a := parentOf(n); a != "."; a = parentOf(a) {
			if touched[a] {
				return true
			}
		}
		return false
	}
	for i := start; i < len(changes); i++ {
		names := namesOf(changes[i])
		if i > start && (related(names[0]) || len(names) > 1 && related(names[1])) {
			return i
		}
		for _, n := range names {
			touched[n] = true
			for a := parentOf(n); a != "."; a = parentOf(a) {
				above[a] = true
			}
		}
	}
	return len(changes)
}

func namesOf(c Change) []string {
	if c.Op == Move || c.Op == Link {
		return []string{c.Path, c.From}
	}
	return []string{c.Path}
}

// applyWave stages the wave's file contents (in parallel: nothing in the
// vault changes yet but temporary names), then applies its changes in
// order and fsyncs the folders they touched.
func (c *committer) applyWave(start, end int, resume bool) (int, error) {
	prep := make([]prepared, end-start)
	err := c.stageAll(start, prep, resume)
	if c.journalWritten != nil {
		err = errors.Join(err, c.journalWritten())
	}
	if err != nil {
		c.discard(start, end)
		return 0, err
	}
	dirs := map[string]bool{}
	for i := start; i < end; i++ {
		if beforeStep != nil {
			if err := beforeStep(i); err != nil {
				return i - start, err // a crash: leave everything as it is
			}
		}
		if err := c.apply(i, &prep[i-start], resume, dirs); err != nil {
			c.discard(start, end)
			return i - start + 1, err
		}
	}
	for d := range dirs {
		if err := syncDir(c.vault, d); err != nil {
			return end - start, err
		}
	}
	return end - start, nil
}

func (c *committer) stageAll(start int, prep []prepared, resume bool) error {
	errs := make([]error, len(prep))
	var wg sync.WaitGroup
	slots := make(chan struct{}, stageWorkers)
	for k := range prep {
		if ch := c.changes[start+k]; ch.Op != Create && ch.Op != Modify || !ch.After.Mode.IsRegular() {
			continue
		}
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[k] = c.stage(start+k, &prep[k], resume)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// stage writes the new content of change i to a temporary file in its
// folder, with its owner (a changed file keeps its own, a new one takes
// its folder's) and mode, and fsyncs it.
func (c *committer) stage(i int, p *prepared, resume bool) error {
	ch := c.changes[i]
	var owner fs.FileInfo
	switch ch.Op {
	case Modify:
		fi, err := c.existing(ch.Path)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return &ConflictError{Path: ch.Path}
		}
		if resume {
			if p.done, err = c.holdsAfter(i, fi, ch); err != nil || p.done {
				return err
			}
			if ok, err := c.holdsBefore(fi, ch); err != nil || !ok {
				return errors.Join(err, &ConflictError{Path: ch.Path})
			}
		}
		owner = fi
	case Create:
		if resume {
			if fi, err := lstat(c.vault, ch.Path); err == nil {
				if p.done, err = c.holdsAfter(i, fi, ch); err != nil || p.done {
					return err
				}
				return &ConflictError{Path: ch.Path}
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		fi, err := c.existing(parentOf(ch.Path))
		if err != nil {
			return err
		}
		owner = fi
	}
	uid, gid, err := ownerOf(owner)
	if err != nil {
		return err
	}
	tmp := path.Join(parentOf(ch.Path), tempPrefix(c.id)+strconv.Itoa(i))
	f, err := c.vault.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Left by a crash: made anew, never written through.
		if err = c.vault.Remove(tmp); err == nil {
			f, err = c.vault.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return err
	}
	p.tmp = tmp
	err = c.fill(i, f, tmp, ch, uid, gid)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *committer) fill(i int, f afero.File, tmp string, ch Change, uid, gid int) error {
	src, err := c.src.open(i, ch.Path)
	if err != nil {
		return err
	}
	defer src.Close()
	h := sha256.New()
	n, err := io.Copy(f, io.TeeReader(src, h))
	if err != nil {
		return fmt.Errorf("txn: copying %s: %w", ch.Path, err)
	}
	// What is committed is what was judged and audited, or nothing.
	if n != ch.After.Size || ch.After.SHA256 != "" && hex.EncodeToString(h.Sum(nil)) != ch.After.SHA256 {
		return fmt.Errorf("txn: %s in the upper layer is not the file that was judged", ch.Path)
	}
	mode := applyMode(ch.After.Mode)
	if of, ok := f.(osFile); ok {
		fi, err := of.Stat()
		if err != nil {
			return err
		}
		if u, g, _ := ownerOf(fi); u != uid || g != gid {
			err = of.Chown(uid, gid)
		}
		if err == nil {
			err = of.Chmod(mode) // after chown, which may clear bits
		}
		if err != nil {
			return fmt.Errorf("txn: %s: %w", tmp, err)
		}
	} else if err := errors.Join(c.vault.Chown(tmp, uid, gid), c.vault.Chmod(tmp, mode)); err != nil {
		return err
	}
	return f.Sync()
}

// apply makes change i in the vault; staging has prepared its content.
func (c *committer) apply(i int, p *prepared, resume bool, dirs map[string]bool) error {
	ch := c.changes[i]
	dirs[parentOf(ch.Path)] = true
	var err error
	switch {
	case p.done:
	case ch.Op == Create && ch.Dir:
		err = c.makeDir(ch, resume)
	case ch.Op == Create && ch.After.Mode.Type() == fs.ModeSymlink:
		err = c.makeSymlink(ch, resume)
	case ch.Op == Create:
		err = c.renameNoReplace(p.tmp, ch.Path)
	case ch.Op == Modify && ch.Dir:
		err = c.chmodDir(ch)
	case ch.Op == Modify && ch.After.Mode.Type() == fs.ModeSymlink:
		err = c.replaceSymlink(i, ch)
	case ch.Op == Modify:
		// The vault Fs replaces only a regular file, which the check saw.
		err = c.vault.Rename(p.tmp, ch.Path)
	case ch.Op == Delete:
		err = c.remove(ch, resume)
	case ch.Op == Move:
		dirs[parentOf(ch.From)] = true
		err = c.move(ch, resume)
	case ch.Op == Link:
		err = c.link(ch, resume)
	default:
		err = fmt.Errorf("txn: change %d can't be applied", i)
	}
	if err != nil && !errors.As(err, new(*ConflictError)) {
		err = fmt.Errorf("txn: applying change %d (%s): %w", i, ch.Path, err)
	}
	return err
}

func (c *committer) makeDir(ch Change, resume bool) error {
	uid, gid, err := c.ownerOfName(parentOf(ch.Path))
	if err != nil {
		return err
	}
	if err := c.vault.Mkdir(ch.Path, 0o700); errors.Is(err, fs.ErrExist) {
		if fi, lerr := lstat(c.vault, ch.Path); !resume || lerr != nil || !fi.IsDir() {
			return &ConflictError{Path: ch.Path}
		}
	} else if err != nil {
		return err
	}
	if err := c.vault.Chown(ch.Path, uid, gid); err != nil {
		return err
	}
	return c.vault.Chmod(ch.Path, applyMode(ch.After.Mode))
}

func (c *committer) makeSymlink(ch Change, resume bool) error {
	linker, ok := c.vault.(afero.Linker)
	if !ok {
		return errors.New("the vault's file system can't make symlinks")
	}
	uid, gid, err := c.ownerOfName(parentOf(ch.Path))
	if err != nil {
		return err
	}
	if err := linker.SymlinkIfPossible(ch.After.Target, ch.Path); errors.Is(err, fs.ErrExist) {
		if t, lerr := readlink(c.vault, ch.Path); !resume || lerr != nil || t != ch.After.Target {
			return &ConflictError{Path: ch.Path}
		}
	} else if err != nil {
		return err
	}
	return c.inDir(parentOf(ch.Path), func(dfd int) error {
		return unix.Fchownat(dfd, baseOf(ch.Path), uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	})
}

// replaceSymlink swaps a link for one with the new target in one rename,
// keeping the old link's owner.
func (c *committer) replaceSymlink(i int, ch Change) error {
	fi, err := c.existing(ch.Path)
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSymlink {
		return &ConflictError{Path: ch.Path}
	}
	if t, err := readlink(c.vault, ch.Path); err != nil || t == ch.After.Target {
		return err
	}
	uid, gid, err := ownerOf(fi)
	if err != nil {
		return err
	}
	tmp := tempPrefix(c.id) + strconv.Itoa(i)
	return c.inDir(parentOf(ch.Path), func(dfd int) error {
		if err := unix.Unlinkat(dfd, tmp, 0); err != nil && err != unix.ENOENT {
			return err
		}
		if err := unix.Symlinkat(ch.After.Target, dfd, tmp); err != nil {
			return err
		}
		if err := unix.Fchownat(dfd, tmp, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			unix.Unlinkat(dfd, tmp, 0)
			return err
		}
		return unix.Renameat(dfd, tmp, dfd, baseOf(ch.Path))
	})
}

func (c *committer) chmodDir(ch Change) error {
	fi, err := c.existing(ch.Path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &ConflictError{Path: ch.Path}
	}
	return c.vault.Chmod(ch.Path, applyMode(ch.After.Mode))
}

// remove deletes a file, or a folder with everything in it; a name
// already gone is done.
func (c *committer) remove(ch Change, resume bool) error {
	fi, err := lstat(c.vault, ch.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() != ch.Dir || resume && !ch.Dir && !matchesBefore(fi, ch.Before) {
		return &ConflictError{Path: ch.Path}
	}
	if ch.Dir {
		return c.vault.RemoveAll(ch.Path)
	}
	return c.vault.Remove(ch.Path)
}

func (c *committer) move(ch Change, resume bool) error {
	if resume {
		_, fromErr := lstat(c.vault, ch.From)
		_, toErr := lstat(c.vault, ch.Path)
		switch {
		case errors.Is(fromErr, fs.ErrNotExist) && toErr == nil:
			return nil // moved before the crash
		case fromErr != nil || !errors.Is(toErr, fs.ErrNotExist):
			return &ConflictError{Path: ch.Path}
		}
	}
	return c.renameNoReplace(ch.From, ch.Path)
}

// link makes Path a hard link to the regular file From, by the folders'
// descriptors: linkat without AT_SYMLINK_FOLLOW follows nothing.
func (c *committer) link(ch Change, resume bool) error {
	from, err := c.existing(ch.From)
	if err != nil {
		return err
	}
	if !from.Mode().IsRegular() {
		return &ConflictError{Path: ch.From}
	}
	if resume {
		if to, err := lstat(c.vault, ch.Path); err == nil {
			if !sameInode(from, to) {
				return &ConflictError{Path: ch.Path}
			}
			return nil
		}
	}
	return c.inDir(parentOf(ch.From), func(ofd int) error {
		return c.inDir(parentOf(ch.Path), func(nfd int) error {
			err := unix.Linkat(ofd, baseOf(ch.From), nfd, baseOf(ch.Path), 0)
			if err == unix.EEXIST {
				return &ConflictError{Path: ch.Path}
			}
			return err
		})
	})
}

// renameNoReplace never replaces what is at newname; a file system
// without RENAME_NOREPLACE is checked by name, which holds only because
// the vault's lock is held.
func (c *committer) renameNoReplace(oldname, newname string) error {
	var err error
	if r, ok := c.vault.(vaultfs.NoReplaceRenamer); ok {
		err = r.RenameNoReplace(oldname, newname)
	} else if _, err = lstat(c.vault, newname); err == nil {
		err = fs.ErrExist
	} else if errors.Is(err, fs.ErrNotExist) {
		err = c.vault.Rename(oldname, newname)
	}
	if errors.Is(err, fs.ErrExist) {
		return &ConflictError{Path: newname}
	}
	return err
}

// inDir runs fn on a descriptor of dir, opened by the vault Fs (so
// reached without following a link) for the calls it has no method for.
func (c *committer) inDir(dir string, fn func(fd int) error) error {
	f, err := c.vault.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	d, ok := f.(interface{ Fd() uintptr })
	if !ok {
		return errors.New("the vault's file system gives no descriptors")
	}
	if err := fn(int(d.Fd())); err != nil {
		return &fs.PathError{Op: "at", Path: dir, Err: err}
	}
	return nil
}

// existing is lstat for a name the change needs: its absence (or a link
// on the way) is a conflict.
func (c *committer) existing(name string) (fs.FileInfo, error) {
	fi, err := lstat(c.vault, name)
	if isMissing(err) {
		return nil, &ConflictError{Path: name}
	}
	return fi, err
}

func (c *committer) ownerOfName(name string) (int, int, error) {
	fi, err := c.existing(name)
	if err != nil {
		return 0, 0, err
	}
	return ownerOf(fi)
}

func sameInode(a, b fs.FileInfo) bool {
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

func ownerOf(fi fs.FileInfo) (uid, gid int, err error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, fmt.Errorf("txn: %s: the file system gives no owner", fi.Name())
	}
	return int(st.Uid), int(st.Gid), nil
}

// holdsAfter tells whether the vault's entry is already the change's
// new file: same mode and size, and the upper layer's bytes.
func (c *committer) holdsAfter(i int, fi fs.FileInfo, ch Change) (bool, error) {
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != applyMode(ch.After.Mode) || fi.Size() != ch.After.Size {
		return false, nil
	}
	v, err := c.vault.Open(ch.Path)
	if err != nil {
		return false, err
	}
	defer v.Close()
	u, err := c.src.open(i, ch.Path)
	if err != nil {
		return false, err
	}
	defer u.Close()
	return sameBytes(v, u)
}

// holdsBefore tells whether the vault's file is still the one the change
// was judged against (by hash when the record has one).
func (c *committer) holdsBefore(fi fs.FileInfo, ch Change) (bool, error) {
	if !matchesBefore(fi, ch.Before) {
		return false, nil
	}
	if ch.Before.SHA256 == "" {
		return true, nil
	}
	f, err := c.vault.Open(ch.Path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return hex.EncodeToString(h.Sum(nil)) == ch.Before.SHA256, nil
}

func sameBytes(a, b io.Reader) (bool, error) {
	bufA, bufB := make([]byte, 32<<10), make([]byte, 32<<10)
	for {
		na, errA := io.ReadFull(a, bufA)
		nb, errB := io.ReadFull(b, bufB)
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		endA := errA == io.EOF || errA == io.ErrUnexpectedEOF
		endB := errB == io.EOF || errB == io.ErrUnexpectedEOF
		switch {
		case errA != nil && !endA:
			return false, errA
		case errB != nil && !endB:
			return false, errB
		case endA || endB:
			return endA == endB, nil
		}
	}
}

// discard removes the wave's temporary files, this run's and those a
// crash left, once the wave has failed.
func (c *committer) discard(start, end int) {
	for i := start; i < end; i++ {
		c.vault.Remove(path.Join(parentOf(c.changes[i].Path), tempPrefix(c.id)+strconv.Itoa(i)))
	}
}

func readlink(vault afero.Fs, name string) (string, error) {
	r, ok := vault.(afero.LinkReader)
	if !ok {
		return "", errors.ErrUnsupported
	}
	return r.ReadlinkIfPossible(name)
}

func syncDir(vault afero.Fs, dir string) error {
	f, err := vault.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
