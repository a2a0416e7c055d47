package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/afero"
)

// Temps is a vault's journal of the temporary names vaultgate makes in it
// (a replaced note's new body, named for the moment before its rename; a
// restore's file or folder, built before it is renamed into place). Each
// name is noted in the state folder before it is made, with what it will
// be; once the thing is made, the exact file it is (device and inode);
// and the note is dropped once the name is gone. A stop in between leaves
// the note, and the next server's start-up removes the name only if it
// still holds what was noted (Left): recovery goes by this journal, never
// by a name's pattern, so a file someone else gave such a name stays.
//
// Names are made and dropped by calls holding the vault lock, so what a
// process holding the lock finds noted was left by a stop. A nil *Temps
// notes nothing (a gate without a state folder).
type Temps struct{ dir string }

// NewTemps is the journal kept in dir, a folder of the vault's own in the
// state folder (never the vault); "" is none.
func NewTemps(dir string) *Temps {
	if dir == "" {
		return nil
	}
	return &Temps{dir: dir}
}

// tempNote is one noted name, as the journal keeps it.
type tempNote struct {
	Path string `json:"path"` // vault-relative
	Kind string `json:"kind"` // KindFile, KindDir or KindSymlink
	// Size is the most a noted file will hold (a stop may cut its write
	// short).
	Size int64 `json:"size,omitempty"`
	// Dev and Ino are the thing made, once it is (Made).
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

// TempNote is one name in the journal, from Note to Gone. Its methods do
// nothing on a nil note.
type TempNote struct {
	t    *Temps
	file string // the note's file in the journal
	n    tempNote
}

// Note notes, before it is named, that the vault-relative name rel is to
// be a thing of kind (KindFile, KindDir, KindSymlink), a file of at most
// size bytes; made is the thing itself when it exists already, unnamed
// (an fstat of an O_TMPFILE file), and nil otherwise (then Made follows).
// Nothing is to be made under rel unless this succeeded.
func (t *Temps) Note(rel, kind string, size int64, made os.FileInfo) (*TempNote, error) {
	if t == nil {
		return nil, nil
	}
	if err := os.MkdirAll(t.dir, 0o700); err != nil {
		return nil, fmt.Errorf("temporary names' journal: %w", err)
	}
	n := &TempNote{t: t, file: filepath.Join(t.dir, randomHex()+".json"), n: tempNote{Path: rel, Kind: kind, Size: size}}
	if made != nil {
		n.n.Dev, n.n.Ino, _ = fileID(made)
	}
	b, _ := json.Marshal(n.n)
	// A stop in the middle of this write leaves a torn note, whose name
	// was never made: Left drops it.
	f, err := os.OpenFile(n.file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("temporary names' journal: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(n.file)
		return nil, fmt.Errorf("temporary names' journal: %w", err)
	}
	return n, nil
}

// Made notes the exact thing now under the name: fi is what an lstat (or
// an fstat of the open file) of it says. Until then a stop leaves a note
// that Left judges by kind and size alone. Failing to note it leaves it so.
func (n *TempNote) Made(fi os.FileInfo) {
	if n == nil || fi == nil {
		return
	}
	dev, ino, ok := fileID(fi)
	if !ok {
		return
	}
	n.n.Dev, n.n.Ino = dev, ino
	b, _ := json.Marshal(n.n)
	// By a new name and a rename: a stop leaves the note old or new, never
	// torn, while the name exists.
	tmp := n.file + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, n.file); err != nil {
		os.Remove(tmp)
	}
}

// Gone drops the note: the name is gone (renamed into place, or removed).
func (n *TempNote) Gone() {
	if n == nil {
		return
	}
	os.Remove(n.file)
}

// LeftTemp is a name a stopped process left noted that still exists in the
// vault.
type LeftTemp struct {
	Path string
	Dir  bool // a folder: removing it takes what is in it
	// Ours reports whether it holds what was noted: a thing of the noted
	// kind (a file with one link and no more than the noted size) and,
	// once it was made, the very one (device and inode). What is not is
	// someone else's, and stays.
	Ours bool
	Why  string // why not, when not Ours
	file string
}

// Left returns the noted names that still exist in the vault fsys (links
// never followed), each judged ours or not, and drops the notes whose
// name is gone (or which a stop left torn, before their name was made).
// The caller holds the vault lock: nothing noted is a running call's.
func (t *Temps) Left(fsys afero.Fs) ([]LeftTemp, error) {
	if t == nil {
		return nil, nil
	}
	names, err := readNames(t.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("temporary names' journal: %w", err)
	}
	var out []LeftTemp
	for _, name := range names {
		file := filepath.Join(t.dir, name)
		if !strings.HasSuffix(name, ".json") {
			os.Remove(file) // a Made cut short: the note itself is whole
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("temporary names' journal: %w", err)
		}
		var n tempNote
		if json.Unmarshal(b, &n) != nil || n.Path == "" {
			os.Remove(file) // torn: its name was never made
			continue
		}
		fi, err := lstatIn(fsys, n.Path)
		if notThere(err) {
			os.Remove(file)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Path, err)
		}
		l := LeftTemp{Path: n.Path, Dir: fi.IsDir(), file: file}
		l.Ours, l.Why = n.holds(fi)
		out = append(out, l)
	}
	return out, nil
}

// Drop drops l's note, once its name is removed or known not to be ours.
func (t *Temps) Drop(l LeftTemp) error {
	if t == nil || l.file == "" {
		return nil
	}
	if err := os.Remove(l.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// holds reports whether fi is the thing n noted, and if not, why.
func (n tempNote) holds(fi os.FileInfo) (bool, string) {
	kind := KindFile
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		kind = KindSymlink
	case fi.IsDir():
		kind = KindDir
	case !fi.Mode().IsRegular():
		kind = "special"
	}
	if kind != n.Kind {
		return false, fmt.Sprintf("it is a %s, vaultgate made a %s there", kind, n.Kind)
	}
	if n.Ino != 0 {
		dev, ino, ok := fileID(fi)
		if !ok || dev != n.Dev || ino != n.Ino {
			return false, "it is not the file vaultgate made there"
		}
	}
	if kind == KindFile {
		links, ok := fileLinks(fi)
		if !ok {
			// Unknown is not one: a file that may have another name is
			// someone's, and stays.
			return false, "the file system does not say how many names it has"
		}
		if links != 1 {
			return false, fmt.Sprintf("it has %d names, vaultgate's had one", links)
		}
		if fi.Size() > n.Size {
			return false, fmt.Sprintf("it holds %d bytes, vaultgate wrote at most %d there", fi.Size(), n.Size)
		}
	}
	return true, ""
}

// fileID is the device and inode fi names.
func fileID(fi os.FileInfo) (dev, ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(st.Dev), st.Ino, true
}

// fileLinks is how many names fi has; ok is false when the file system
// does not say.
func fileLinks(fi os.FileInfo) (n uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}

func lstatIn(fsys afero.Fs, name string) (os.FileInfo, error) {
	if l, ok := fsys.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(name)
		return fi, err
	}
	return fsys.Stat(name)
}
