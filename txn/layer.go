package txn

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// Layer is one call's upper and work folders: in the state folder (never
// in the vault, never on overlayfs or FUSE), or in memory, the upper
// folder a descriptor of the call's own tmpfs (MemoryLayer). Dir, in the
// state folder, holds a commit's journal.
type Layer struct {
	Dir, Upper, Work string
	// mem is an in-memory layer's upper folder, which Remove closes.
	mem *os.File
}

// MemoryLayer is the layer of a call whose upper folder is on a tmpfs of
// its own (sandbox.Result.Upper): it is read through the descriptor, and
// Dir (stateDir/txn/<random id>) is made only when a commit journals in
// it. The layer takes upper over: Remove closes it, and with it the
// tmpfs goes.
func MemoryLayer(stateDir string, upper *os.File) (*Layer, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("txn: new layer: %w", err)
	}
	return &Layer{
		Dir:   filepath.Join(stateDir, layersDir, hex.EncodeToString(id[:])),
		Upper: "/proc/self/fd/" + strconv.Itoa(int(upper.Fd())),
		mem:   upper,
	}, nil
}

// Open opens the regular file name (vault-relative) of the upper folder,
// as the commit reads it: no link followed anywhere in its name.
func (l *Layer) Open(name string) (io.ReadCloser, error) {
	up, err := openUpperTree(l.Upper)
	if err != nil {
		return nil, err
	}
	defer up.close() // the file keeps its own descriptor
	return up.open(0, name)
}

// MakeDir makes the layer's folder in the state folder if it is not there
// yet (an in-memory layer's, before its commit journals in it).
func (l *Layer) MakeDir() error {
	if err := os.MkdirAll(filepath.Dir(l.Dir), 0o700); err != nil {
		return fmt.Errorf("txn: layer: %w", err)
	}
	if err := os.Mkdir(l.Dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("txn: layer: %w", err)
	}
	return nil
}

// layersDir is the folder of the state folder that holds every call's layer, so that
// Sweep can find the abandoned ones.
const layersDir = "txn"

// NewLayer makes stateDir/txn/<random id>/{upper,work}. Dir is 0700: the layer holds
// the vault's text as the command left it, which no other user may read.
func NewLayer(stateDir string) (*Layer, error) {
	parent := filepath.Join(stateDir, layersDir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("txn: new layer: %w", err)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("txn: new layer: %w", err)
	}
	dir := filepath.Join(parent, hex.EncodeToString(id[:]))
	// Mkdir, not MkdirAll: an id that already exists is refused rather than shared.
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("txn: new layer: %w", err)
	}
	l := &Layer{Dir: dir, Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work")}
	for _, d := range []string{l.Upper, l.Work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("txn: new layer: %w", err)
		}
	}
	return l, nil
}

// Remove deletes the layer and everything in it; a layer already gone is no error.
func (l *Layer) Remove() error {
	if l == nil || l.Dir == "" {
		return nil
	}
	if l.mem != nil {
		l.mem.Close()
		l.mem = nil
		if _, err := os.Lstat(l.Dir); errors.Is(err, fs.ErrNotExist) {
			return nil // nothing on disk: the usual call
		}
	}
	err := os.RemoveAll(l.Dir)
	if err == nil {
		return nil
	}
	// overlayfs leaves work/work with mode 000; a non-root owner must open such folders
	// before it can empty them. WalkDir visits a folder before reading it, and a folder
	// entry is never a symlink, so the chmod cannot reach outside the layer.
	_ = filepath.WalkDir(l.Dir, func(path string, d fs.DirEntry, walkErr error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(l.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("txn: remove layer %s: %w", l.Dir, err)
	}
	return nil
}
