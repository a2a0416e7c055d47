package history

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/afero"
)

// maxTree bounds the entries one folder's snapshot may hold, as the tools
// bound the folders they check.
const maxTree = 200_000

// snapshot is a pass over vault paths that keeps their bodies: in the
// log's record, as far as it has room, else as blob files. durable syncs
// the blob files (added then says their folder must be synced too).
// Without a record it keeps nothing and only names what is there.
type snapshot struct {
	s       *Store
	durable bool
	log     *logRecord
	added   bool
	kept    []string // the blobs this pass synced
	// known are bodies an earlier record of the same change kept durably
	// (a write-ahead change's new content): not kept again.
	known map[string]bool
}

func (s *Store) lstat(rel string) (os.FileInfo, error) {
	if l, ok := s.vault.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(rel)
		return fi, err
	}
	return s.vault.Stat(rel)
}

func notThere(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// state is what rel holds now, its bodies kept.
func (sn *snapshot) state(rel string) (State, error) {
	fi, err := sn.s.lstat(rel)
	if notThere(err) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("history: %s: %w", rel, err)
	}
	st := State{Exists: true, Mode: fi.Mode().Perm()}
	switch {
	case fi.Mode().IsRegular():
		st.Kind = KindFile
		st.SHA256, st.Size, err = sn.file(rel)
	case fi.Mode()&fs.ModeSymlink != 0:
		st.Kind = KindSymlink
		st.Target, err = sn.link(rel)
	case fi.IsDir():
		st.Kind = KindDir
		st.Tree, st.Size, err = sn.tree(rel)
		st.SHA256 = treeSum(st.Tree)
	default:
		st.Kind = KindOther
	}
	if err != nil {
		return State{}, err
	}
	return st, nil
}

// keepError is a body of rel that could not be kept: said once as the
// history's, though the cause is the history's own error too.
type keepError struct {
	rel string
	err error
}

func (e keepError) Error() string {
	return "history: keep " + e.rel + ": " + strings.TrimPrefix(e.err.Error(), "history: ")
}

func (e keepError) Unwrap() error { return e.err }

// file keeps a body in the log's record when it fits, else as a blob.
func (sn *snapshot) file(rel string) (string, int64, error) {
	sum, size, body, err := sn.s.readBody(rel)
	if err != nil {
		return "", 0, keepError{rel, err}
	}
	if sn.log == nil {
		if body == nil {
			sum, size, err = hashFile(sn.s.vault, rel)
		}
		return sum, size, err
	}
	if body != nil {
		return sum, size, sn.keep(rel, sum, body)
	}
	if len(sn.known) > 0 {
		// A body this change kept already (a bash commit's, from its
		// layer) is named, not kept again: the disk may have no room.
		sum, size, err := hashFile(sn.s.vault, rel)
		if err != nil || sn.known[sum] {
			return sum, size, err
		}
	}
	sum, size, added, err := sn.s.putFile(rel, sn.durable)
	if err != nil {
		return "", 0, keepError{rel, err}
	}
	sn.kept1(sum, added)
	return sum, size, nil
}

// keep keeps a body read whole (of rel): in the record if it fits, else
// as a blob; not again if the change kept it already.
func (sn *snapshot) keep(rel, sum string, body []byte) error {
	if _, dup := sn.log.Bodies[sum]; dup || sn.known[sum] {
		return nil
	}
	if sn.log.fits(len(body)) {
		sn.log.add(sum, body)
		return nil
	}
	_, _, added, err := sn.s.putBytes(body, sn.durable)
	if err != nil {
		return keepError{rel, err}
	}
	sn.kept1(sum, added)
	return nil
}

// keepComing keeps a body the change is about to leave at rel, read from
// where b says; one the store holds already is only made durable. A body
// that does not match its hash is refused: what was judged is what is kept.
func (sn *snapshot) keepComing(rel string, b *Body) error {
	if _, dup := sn.log.Bodies[b.SHA256]; dup || sn.known[b.SHA256] {
		return nil
	}
	if sn.s.haveBlob(b.SHA256, b.Size) {
		added, err := sn.s.syncKept(b.SHA256, sn.durable)
		if err != nil {
			return keepError{rel, err}
		}
		sn.kept1(b.SHA256, added)
		return nil
	}
	r, err := b.Open()
	if err != nil {
		return keepError{rel, err}
	}
	defer r.Close()
	if b.Size <= inMemory {
		data, err := io.ReadAll(io.LimitReader(r, inMemory+1))
		if err != nil {
			return keepError{rel, err}
		}
		if sha(data) != b.SHA256 {
			return keepError{rel, errComingChanged}
		}
		return sn.keep(rel, b.SHA256, data)
	}
	sum, _, added, err := sn.s.putStream(r, sn.durable)
	if err != nil {
		return keepError{rel, err}
	}
	if sum != b.SHA256 {
		return keepError{rel, errComingChanged}
	}
	sn.kept1(sum, added)
	return nil
}

var errComingChanged = errors.New("the content to be kept is not the content that was judged")

func (sn *snapshot) kept1(sum string, added bool) {
	sn.added = sn.added || added
	if sn.durable {
		sn.kept = append(sn.kept, sum)
	}
}

func (sn *snapshot) link(rel string) (string, error) {
	r, ok := sn.s.vault.(afero.LinkReader)
	if !ok {
		return "", fmt.Errorf("history: %s: the file system can't read links", rel)
	}
	return r.ReadlinkIfPossible(rel)
}

// tree walks a folder, never following links, parents before children.
func (sn *snapshot) tree(root string) ([]TreeEntry, int64, error) {
	var out []TreeEntry
	var total int64
	var walk func(dir, below string) error
	walk = func(dir, below string) error {
		d, err := sn.s.vault.Open(dir)
		if err != nil {
			return fmt.Errorf("history: %s: %w", dir, err)
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return fmt.Errorf("history: %s: %w", dir, err)
		}
		sort.Strings(names)
		for _, n := range names {
			if len(out) >= maxTree {
				return fmt.Errorf("history: %s holds more than %d entries", root, maxTree)
			}
			p, b := path.Join(dir, n), path.Join(below, n)
			fi, err := sn.s.lstat(p)
			if err != nil {
				return fmt.Errorf("history: %s: %w", p, err)
			}
			e := TreeEntry{Path: b, Mode: fi.Mode().Perm()}
			switch {
			case fi.Mode().IsRegular():
				e.Kind = KindFile
				if e.SHA256, e.Size, err = sn.file(p); err != nil {
					return err
				}
				total += e.Size
			case fi.Mode()&fs.ModeSymlink != 0:
				e.Kind = KindSymlink
				if e.Target, err = sn.link(p); err != nil {
					return err
				}
			case fi.IsDir():
				e.Kind = KindDir
			default:
				e.Kind = KindOther
			}
			out = append(out, e)
			if e.Kind == KindDir {
				if err := walk(p, b); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return out, total, walk(root, "")
}
