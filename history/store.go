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
	"slices"
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
	// Recover seals the log into a pack at Open and at Close (when no one
	// else is using the store then). A server's start and the CLI do; a
	// hook call, which lives for one change, leaves it to them.
	Recover bool
	// Temps is the vault's journal of temporary names (NewTemps), in
	// which a restore notes the name it builds by; nil notes none.
	Temps *Temps
}

// Store is the history of one vault: its entries and the blobs they name.
type Store struct {
	dir   string
	vault afero.Fs // the vault, vault-relative names, links never followed
	opt   Options
	lock  *os.File // shared by writers, exclusive for GC and checkpoints
	log   *os.File // the pre-images' log (log.go); nil when read-only
	// mu is the lock within this process, where one flock would be shared
	// by every goroutine: writers hold it for reading, as they hold the
	// flock shared, counted by holders.
	mu      sync.RWMutex
	holdMu  sync.Mutex
	holders int
	// cacheMu guards what the readers parsed of the log and the packs.
	cacheMu   sync.Mutex
	logCache  logCache
	packCache map[string]*packIndex
	// synced are the blobs this process knows are on disk, name and all:
	// a blob kept unsynced (an after-state) is synced once it becomes a
	// pre-image.
	synced sync.Map
	// flushQ flushes write-ahead changes' files (writeahead.go).
	flushMu     sync.Mutex
	flushQ      *flushQueue
	flushClosed bool
	// logMu is the log's writer within this process (holdLog).
	logMu sync.Mutex
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
	for _, d := range []string{dir, filepath.Join(dir, "blobs"), filepath.Join(dir, "entries"), filepath.Join(dir, packsDir), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	log, err := openLog(dir)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s := &Store{dir: dir, vault: vault, opt: opt, lock: lock, log: log}
	err = s.exclusive(func() error {
		if err := errors.Join(s.sweepTemp(), s.sweepPacks()); err != nil {
			return err
		}
		h, err := s.readHead()
		if err != nil {
			return err
		}
		if !h.ok || opt.Recover {
			// A log without a head (new, of the first format, or damaged by
			// a crash) is sealed and started anew: writers need its head.
			return s.seal()
		}
		return nil
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the store; with Options.Recover it first seals the log
// if no one else is using the store.
func (s *Store) Close() error {
	s.stopFlushing()
	if s.opt.Recover && s.log != nil && s.logSize() > 0 {
		s.tryExclusive(s.seal)
	}
	var logErr error
	if s.log != nil {
		logErr = s.log.Close()
	}
	return errors.Join(s.lock.Close(), logErr)
}

// Dir is the store's folder.
func (s *Store) Dir() string { return s.dir }

// shared runs fn as a writer: beside other writers, never beside a GC
// or a checkpoint, in this process or another.
func (s *Store) shared(fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	s.holdMu.Lock()
	if s.holders == 0 {
		if err := syscall.Flock(int(s.lock.Fd()), syscall.LOCK_SH); err != nil {
			s.holdMu.Unlock()
			return fileErr("lock", s.lock.Name(), err)
		}
	}
	s.holders++
	s.holdMu.Unlock()
	defer func() {
		s.holdMu.Lock()
		if s.holders--; s.holders == 0 {
			syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
		}
		s.holdMu.Unlock()
	}()
	return fn()
}

// exclusive runs fn alone: no writer in this process or another.
func (s *Store) exclusive(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := syscall.Flock(int(s.lock.Fd()), syscall.LOCK_EX); err != nil {
		return fileErr("lock", s.lock.Name(), err)
	}
	defer syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
	return fn()
}

// tryExclusive runs fn alone if it can without waiting, and reports
// whether it did.
func (s *Store) tryExclusive(fn func() error) (bool, error) {
	if !s.mu.TryLock() {
		return false, nil
	}
	defer s.mu.Unlock()
	if err := syscall.Flock(int(s.lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil
	}
	defer syscall.Flock(int(s.lock.Fd()), syscall.LOCK_UN)
	return true, fn()
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

// readBody reads the vault file at rel whole and names it, if it is at
// most inMemory bytes; a bigger one comes back with a nil body and no name.
func (s *Store) readBody(rel string) (sum string, size int64, body []byte, err error) {
	f, err := s.vault.Open(rel)
	if err != nil {
		return "", 0, nil, err
	}
	defer f.Close()
	body, err = readAtMost(f, inMemory+1)
	if err != nil {
		return "", 0, nil, fmt.Errorf("history: read %s: %w", rel, err)
	}
	if len(body) > inMemory {
		return "", 0, nil, nil
	}
	return sha(body), int64(len(body)), body, nil
}

// readAtMost reads f whole, up to n bytes, in one read where its size is
// known (io.ReadAll would grow its buffer read by read).
func readAtMost(f afero.File, n int64) ([]byte, error) {
	buf := make([]byte, 0, 512)
	if fi, err := f.Stat(); err == nil && fi.Size() < n {
		buf = make([]byte, 0, fi.Size()+1) // +1: the read that finds the end
	}
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := f.Read(buf[len(buf):min(int64(cap(buf)), n)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// hashFile names a vault file too big to hold, reading it once.
func hashFile(vault afero.Fs, rel string) (string, int64, error) {
	f, err := vault.Open(rel)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("history: read %s: %w", rel, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
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
		return false, fileErr("sync", f.Name(), err)
	}
	return true, nil
}

// fileErr is an error of op on the file name, naming the file once: an
// *os.File's own errors name it already.
func fileErr(op, name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("history: %w", err)
	}
	return fmt.Errorf("history: %s %s: %w", op, name, err)
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
	return "", 0, false, fileErr("write", f.Name(), err)
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
		return "", 0, false, fileErr("write", f.Name(), err)
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

// Blob opens a kept body by its sha256: in the log, in a pack (checked
// against its name as it is read), or a blob file.
func (s *Store) Blob(sum string) (io.ReadCloser, error) {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("history: bad blob name %q", sum)
	}
	recs, err := s.logged()
	if err != nil {
		return nil, err
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if body, ok := recs[i].Bodies[sum]; ok && sha(body) == sum {
			return io.NopCloser(bytes.NewReader(body)), nil
		}
	}
	packs, err := s.packs()
	if err != nil {
		return nil, err
	}
	for i := len(packs) - 1; i >= 0; i-- {
		if sp, ok := packs[i].Bodies[sum]; ok {
			body, err := s.readPackBody(packs[i].name, sp, sum)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(bytes.NewReader(body)), nil
		}
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

// Stats is how much the store holds.
type Stats struct {
	Calls  int   // calls with entries
	Bodies int   // distinct bodies kept (each once, wherever it lies)
	Bytes  int64 // their size
}

// Stats counts what the store holds: the log's records, the packs and
// the blob files.
func (s *Store) Stats() (Stats, error) {
	var st Stats
	recs, err := s.logged()
	if err != nil {
		return st, err
	}
	packs, err := s.packs()
	if err != nil {
		return st, err
	}
	sizes := map[string]int64{}
	for _, r := range recs {
		for sum, b := range r.Bodies {
			sizes[sum] = int64(len(b))
		}
	}
	for _, p := range packs {
		for sum, sp := range p.Bodies {
			sizes[sum] = sp.Len
		}
	}
	names, err := readNames(filepath.Join(s.dir, "blobs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("history: %w", err)
	}
	for _, n := range names {
		if fi, err := os.Stat(s.blobPath(n)); err == nil && len(n) == 64 {
			sizes[n] = fi.Size()
		}
	}
	all, err := s.calls()
	if err != nil {
		return st, err
	}
	st.Calls, st.Bodies = len(all), len(sizes)
	for _, n := range sizes {
		st.Bytes += n
	}
	return st, nil
}

// ErrUnknownID is a call id the store has no entries for.
var ErrUnknownID = errors.New("no history for this id")

// Call returns the entries of one call: its latest record in the log,
// else in the newest pack that has it, else its entry file (a store
// written before the log). The log is read before the packs, so a seal
// between the two reads loses nothing.
func (s *Store) Call(id string) ([]Entry, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrUnknownID)
	}
	es, found, err := s.loggedCall(id)
	if err != nil {
		return nil, err
	}
	if found {
		return es, nil
	}
	packs, err := s.packs()
	if err != nil {
		return nil, err
	}
	for i := len(packs) - 1; i >= 0; i-- {
		if es, ok := packs[i].Calls[id]; ok {
			return slices.Clone(es), nil
		}
	}
	return s.entryFile(id)
}

func (s *Store) entryFile(id string) ([]Entry, error) {
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

// calls reads every call's latest entries from the log, the packs and the
// entry files, each source once.
func (s *Store) calls() (map[string][]Entry, error) {
	recs, err := s.logged()
	if err != nil {
		return nil, err
	}
	packs, err := s.packs()
	if err != nil {
		return nil, err
	}
	out := map[string][]Entry{}
	names, err := readNames(filepath.Join(s.dir, "entries"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("history: %w", err)
	}
	for _, n := range names {
		if id, ok := strings.CutSuffix(n, ".json"); ok && validID(id) {
			es, err := s.entryFile(id)
			if errors.Is(err, ErrUnknownID) {
				continue // pruned meanwhile
			}
			if err != nil {
				return nil, err
			}
			out[id] = es
		}
	}
	for _, p := range packs {
		for id, es := range p.Calls {
			out[id] = es
		}
	}
	for _, r := range recs {
		out[r.ID] = r.Entries
	}
	return out, nil
}

// Calls returns the ids of every call kept, oldest first (ids are UUID v7,
// which sort by time; entry times break no ties the ids don't).
func (s *Store) Calls() ([]string, error) {
	all, err := s.calls()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// All returns every entry, oldest call first, each call's in its order.
func (s *Store) All() ([]Entry, error) {
	all, err := s.calls()
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []Entry
	for _, id := range ids {
		out = append(out, all[id]...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}
