package history

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/afero"
)

// Defaults of [history].
const (
	DefaultMaxSize = 1 << 30
	DefaultKeep    = 30 * 24 * time.Hour
)

// Options bound what the store keeps.
type Options struct {
	MaxSize int64         // bytes of blobs; 0: DefaultMaxSize
	Keep    time.Duration // age of entries; 0: DefaultKeep
}

// Store is the history of one vault: its entries and the blobs they name.
type Store struct {
	dir   string
	vault afero.Fs // the vault, vault-relative names, links never followed
	opt   Options
	lock  *os.File // shared by writers, exclusive for GC
	// synced are the blobs this process knows are on disk, name and all:
	// a blob kept unsynced (an after-state) is synced once it becomes a
	// pre-image.
	synced sync.Map
}

// Dir is where the store of a state folder lives.
func Dir(stateDir string) string { return filepath.Join(stateDir, "history") }

// Open opens (creating it) the store in dir over the vault's file system,
// and clears the temporary files a crash left in it.
func Open(dir string, vault afero.Fs, opt Options) (*Store, error) {
	if opt.MaxSize <= 0 {
		opt.MaxSize = DefaultMaxSize
	}
	if opt.Keep <= 0 {
		opt.Keep = DefaultKeep
	}
	for _, d := range []string{dir, filepath.Join(dir, "blobs"), filepath.Join(dir, "entries"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	s := &Store{dir: dir, vault: vault, opt: opt, lock: lock}
	if err := s.withLock(syscall.LOCK_EX, s.sweepTemp); err != nil {
		lock.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the store.
func (s *Store) Close() error { return s.lock.Close() }

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

func (s *Store) withLock(how int, fn func() error) error {
	if err := syscall.Flock(int(s.lock.Fd()), how); err != nil {
		return fmt.Errorf("history: lock %s: %w", s.lock.Name(), err)
	}
	defer syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
	return fn()
}

// sweepTemp removes what a write cut short left in tmp/ (run with the lock
// held exclusively, so no writer is using them).
func (s *Store) sweepTemp() error {
	tmp := filepath.Join(s.dir, "tmp")
	names, err := readNames(tmp)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	for _, n := range names {
		os.Remove(filepath.Join(tmp, n))
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

func (s *Store) blobPath(sum string) string { return filepath.Join(s.dir, "blobs", sum) }

func (s *Store) entryPath(id string) string { return filepath.Join(s.dir, "entries", id+".json") }

// validID keeps an id a single file name.
func validID(id string) bool {
	return id != "" && len(id) <= 100 && !strings.ContainsAny(id, "/\\\x00") && id != "." && id != ".."
}

// inMemory is the largest body hashed before it is written: most notes,
// so that a body already kept costs no write at all.
const inMemory = 4 << 20

// putFile keeps the vault file at rel as a blob and returns its sha256 and
// size. durable syncs a new blob's file; the caller syncs the folder.
func (s *Store) putFile(rel string, durable bool) (sum string, size int64, added bool, err error) {
	f, err := s.vault.Open(rel)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, inMemory+1))
	if err != nil {
		return "", 0, false, fmt.Errorf("history: read %s: %w", rel, err)
	}
	if len(head) <= inMemory {
		return s.putBytes(head, durable)
	}
	return s.putStream(io.MultiReader(bytes.NewReader(head), f), durable)
}

// putBytes keeps data as a blob.
func (s *Store) putBytes(data []byte, durable bool) (string, int64, bool, error) {
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	if s.haveBlob(sum, int64(len(data))) {
		added, err := s.syncKept(sum, durable)
		return sum, int64(len(data)), added, err
	}
	tmp, err := s.tempFile()
	if err != nil {
		return "", 0, false, err
	}
	if _, err := tmp.Write(data); err != nil {
		return s.dropTemp(tmp, err)
	}
	return s.settle(tmp, sum, int64(len(data)), durable)
}

// putStream keeps a body too big to hold, hashing while it is written.
func (s *Store) putStream(r io.Reader, durable bool) (string, int64, bool, error) {
	tmp, err := s.tempFile()
	if err != nil {
		return "", 0, false, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		return s.dropTemp(tmp, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if s.haveBlob(sum, n) {
		tmp.Close()
		os.Remove(tmp.Name())
		added, err := s.syncKept(sum, durable)
		return sum, n, added, err
	}
	return s.settle(tmp, sum, n, durable)
}

// haveBlob: a blob of that name and size is kept. The size check catches
// the empty file an unsynced blob can be after a power cut.
func (s *Store) haveBlob(sum string, size int64) bool {
	fi, err := os.Stat(s.blobPath(sum))
	return err == nil && fi.Mode().IsRegular() && fi.Size() == size
}

// syncKept makes a blob already there durable if it must be and this
// process has not synced it; added then says its folder needs a sync too.
func (s *Store) syncKept(sum string, durable bool) (bool, error) {
	if _, ok := s.synced.Load(sum); !durable || ok {
		return false, nil
	}
	f, err := os.Open(s.blobPath(sum))
	if err != nil {
		return false, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("history: sync %s: %w", f.Name(), err)
	}
	return true, nil
}

func (s *Store) tempFile() (*os.File, error) {
	var b [8]byte
	rand.Read(b[:])
	f, err := os.OpenFile(filepath.Join(s.dir, "tmp", hex.EncodeToString(b[:])), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return f, nil
}

func (s *Store) dropTemp(f *os.File, err error) (string, int64, bool, error) {
	f.Close()
	os.Remove(f.Name())
	return "", 0, false, fmt.Errorf("history: write %s: %w", f.Name(), err)
}

// settle syncs (if durable) and names a written temporary blob.
func (s *Store) settle(f *os.File, sum string, size int64, durable bool) (string, int64, bool, error) {
	if durable {
		if err := f.Sync(); err != nil {
			return s.dropTemp(f, err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", 0, false, fmt.Errorf("history: write %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), s.blobPath(sum)); err != nil {
		os.Remove(f.Name())
		return "", 0, false, fmt.Errorf("history: %w", err)
	}
	if !durable {
		// kept anew unsynced (a GC elsewhere had removed it): not durable
		s.synced.Delete(sum)
	}
	return sum, size, true, nil
}

// Blob opens a kept body by its sha256.
func (s *Store) Blob(sum string) (*os.File, error) {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("history: bad blob name %q", sum)
	}
	return os.Open(s.blobPath(sum))
}

// syncDir makes the names in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("history: sync %s: %w", dir, err)
	}
	return nil
}

// writeEntries writes a call's entries whole, by way of a temporary file.
func (s *Store) writeEntries(id string, es []Entry, durable bool) error {
	data, err := json.Marshal(es)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	f, err := s.tempFile()
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_, _, _, err = s.dropTemp(f, err)
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			_, _, _, err = s.dropTemp(f, err)
			return err
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("history: %w", err)
	}
	if err := os.Rename(f.Name(), s.entryPath(id)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("history: %w", err)
	}
	if durable {
		return syncDir(filepath.Join(s.dir, "entries"))
	}
	return nil
}

// ErrUnknownID is a call id the store has no entries for.
var ErrUnknownID = errors.New("no history for this id")

// Call returns the entries of one call.
func (s *Store) Call(id string) ([]Entry, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrUnknownID)
	}
	data, err := os.ReadFile(s.entryPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", id, ErrUnknownID)
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	var es []Entry
	if err := json.Unmarshal(data, &es); err != nil {
		return nil, fmt.Errorf("history: %s: %w", id, err)
	}
	return es, nil
}

// Calls returns the ids of every call kept, oldest first (ids are UUID v7,
// which sort by time; entry times break no ties the ids don't).
func (s *Store) Calls() ([]string, error) {
	names, err := readNames(filepath.Join(s.dir, "entries"))
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	ids := make([]string, 0, len(names))
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// All returns every entry, oldest call first, each call's in its order.
func (s *Store) All() ([]Entry, error) {
	ids, err := s.Calls()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, id := range ids {
		es, err := s.Call(id)
		if errors.Is(err, ErrUnknownID) {
			continue // pruned meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}
