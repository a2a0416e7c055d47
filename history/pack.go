package history

import (
	"bytes"
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
	"strings"
	"time"
)

// A pack is the log sealed: packs/<name>.pack holds bodies back to back,
// each once, and packs/<name>.idx (JSON) the calls' entries and where each
// body lies in the pack. Names sort by age. A pack is written whole and
// synced before its index, and the index before the log is started anew, so a
// crash leaves either the log or the pack (a pack without an index is
// removed at the next open); sealing the same records twice is harmless.

const packsDir = "packs"

type span struct {
	Off int64 `json:"off"`
	Len int64 `json:"len"`
}

type packIndex struct {
	Calls  map[string][]Entry `json:"calls"`
	Bodies map[string]span    `json:"bodies"`
	name   string
}

func (s *Store) packPath(name, ext string) string {
	return filepath.Join(s.dir, packsDir, name+ext)
}

// packs returns the store's pack indexes, oldest first. An index never
// changes once named (a GC writes a new pack instead), so each is parsed
// once per process; only the folder is listed each time.
func (s *Store) packs() ([]*packIndex, error) {
	names, err := readNames(filepath.Join(s.dir, packsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	slices.Sort(names)
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if s.packCache == nil {
		s.packCache = map[string]*packIndex{}
	}
	var out []*packIndex
	seen := map[string]bool{}
	for _, n := range names {
		name, ok := strings.CutSuffix(n, ".idx")
		if !ok {
			continue
		}
		seen[name] = true
		if p, ok := s.packCache[name]; ok {
			out = append(out, p)
			continue
		}
		data, err := os.ReadFile(s.packPath(name, ".idx"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by a GC meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		p := &packIndex{name: name}
		if err := json.Unmarshal(data, p); err != nil {
			return nil, fmt.Errorf("history: pack index %s: %w", n, err)
		}
		s.packCache[name] = p
		out = append(out, p)
	}
	for name := range s.packCache {
		if !seen[name] {
			delete(s.packCache, name)
		}
	}
	return out, nil
}

// logged returns the log's records as they stand. A generation of the
// log only grows, so what was parsed of it stands: only what its head
// says was written since is read and parsed.
func (s *Store) logged() ([]logRecord, error) {
	f, done, err := s.logReader()
	if err != nil || f == nil {
		return nil, err
	}
	defer done()
	h, err := readHead(f)
	if err != nil {
		return nil, err
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if !h.ok {
		s.logCache = logCache{}
		return readRecords(f, h, 0)
	}
	c := s.logCache
	if c.valid && c.gen == h.gen && c.end == h.end {
		return c.recs, nil
	}
	from, recs := int64(headSize), []logRecord(nil)
	if c.valid && c.gen == h.gen && c.end < h.end {
		from, recs = c.end, slices.Clip(c.recs)
	}
	more, err := readRecords(f, h, from)
	if err != nil {
		return nil, err
	}
	recs = append(recs, more...)
	s.logCache = logCache{valid: true, gen: h.gen, end: h.end, recs: recs}
	return recs, nil
}

// loggedCall is the entries of id's latest record in the log. It parses
// only the records that can be id's, not the whole log (unless a parse
// of this generation is in the cache to build on): a hook process, which
// confirms one call and exits, would otherwise parse up to logLimit of
// JSON for it.
func (s *Store) loggedCall(id string) ([]Entry, bool, error) {
	f, done, err := s.logReader()
	if err != nil || f == nil {
		return nil, false, err
	}
	defer done()
	h, err := readHead(f)
	if err != nil {
		return nil, false, err
	}
	s.cacheMu.Lock()
	c := s.logCache
	s.cacheMu.Unlock()
	if !h.ok || (c.valid && c.gen == h.gen) {
		// A parse to build on (logged parses only what came since): a
		// reader of many calls, such as undo, while a server appends.
		recs, err := s.logged()
		if err != nil {
			return nil, false, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].ID == id {
				return slices.Clone(recs[i].Entries), true, nil // the cache's own stays as read
			}
		}
		return nil, false, nil
	}
	data := make([]byte, h.end-headSize)
	if _, err := f.ReadAt(data, headSize); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fileErr("read", f.Name(), err)
	}
	r, found := readLogCall(data, viewOf(h), id)
	return r.Entries, found, nil
}

// logCache is the log as last parsed: its generation and end then.
type logCache struct {
	valid bool
	gen   uint32
	end   int64
	recs  []logRecord
}

// readPackBody reads one body out of a pack and checks it against its
// name: a body that does not match is reported, never restored.
func (s *Store) readPackBody(pack string, sp span, sum string) ([]byte, error) {
	f, err := os.Open(s.packPath(pack, ".pack"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	body := make([]byte, sp.Len)
	if _, err := f.ReadAt(body, sp.Off); err != nil {
		return nil, fmt.Errorf("history: pack %s: %w", pack, err)
	}
	if sha(body) != sum {
		return nil, fmt.Errorf("history: pack %s: the body of %s does not match its name", pack, sum)
	}
	return body, nil
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// seal moves the log's records into a new pack and starts the log's
// next generation. The store's lock must be held exclusively: no writer
// is mid-record. A crash before the new head is flushed leaves the log as
// it was, sealed again at the next open (sealing twice is harmless).
func (s *Store) seal() error {
	if s.log == nil {
		return nil
	}
	h, err := s.readHead()
	if err != nil {
		return err
	}
	if h.ok && h.end == headSize {
		return nil
	}
	recs, err := s.logged()
	if err != nil {
		return err
	}
	if len(recs) > 0 {
		if err := s.writePack(recs); err != nil {
			return err
		}
	}
	next := h.gen + 1
	if !h.ok {
		next = 1
		if h.magic { // damaged: past every generation in the file
			data, err := os.ReadFile(s.log.Name())
			if err != nil {
				return fmt.Errorf("history: %w", err)
			}
			next = latestGen(data[min(len(data), headSize):]) + 1
		}
	}
	return s.startLog(next)
}

// writePack writes recs as one pack: the latest entries of each call,
// and each body no pack or blob file holds yet.
func (s *Store) writePack(recs []logRecord) error {
	have := map[string]bool{}
	old, err := s.packs()
	if err != nil {
		return err
	}
	for _, p := range old {
		for sum := range p.Bodies {
			have[sum] = true
		}
	}
	idx := packIndex{Calls: map[string][]Entry{}, Bodies: map[string]span{}}
	var data bytes.Buffer
	for _, r := range recs {
		idx.Calls[r.ID] = r.Entries
		for sum, body := range r.Bodies {
			if have[sum] || s.haveBlob(sum, int64(len(body))) {
				continue
			}
			have[sum] = true
			idx.Bodies[sum] = span{Off: int64(data.Len()), Len: int64(len(body))}
			data.Write(body)
		}
	}
	name := fmt.Sprintf("%020d-%s", time.Now().UnixNano(), randomHex()[:8])
	return s.placePack(name, &idx, data.Bytes())
}

// placePack writes a pack and then its index, each synced, then their
// folder.
func (s *Store) placePack(name string, idx *packIndex, data []byte) error {
	if err := os.MkdirAll(filepath.Join(s.dir, packsDir), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	meta, err := json.Marshal(idx)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if err := s.writeSynced(s.packPath(name, ".pack"), data); err != nil {
		return err
	}
	if err := s.writeSynced(s.packPath(name, ".idx"), meta); err != nil {
		return err
	}
	return syncDir(filepath.Join(s.dir, packsDir))
}

// writeSynced puts data at name by way of a temporary file, synced
// before it is named.
func (s *Store) writeSynced(name string, data []byte) error {
	tmp, err := s.tempFile()
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_, _, _, err = s.dropTemp(tmp, err)
		return err
	}
	if err := tmp.Sync(); err != nil {
		_, _, _, err = s.dropTemp(tmp, err)
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("history: %w", err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// sweepPacks removes a pack a crash left without its index (run with the
// lock held exclusively).
func (s *Store) sweepPacks() error {
	names, err := readNames(filepath.Join(s.dir, packsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	for _, n := range names {
		if name, ok := strings.CutSuffix(n, ".pack"); ok {
			if _, err := os.Stat(s.packPath(name, ".idx")); errors.Is(err, fs.ErrNotExist) {
				os.Remove(s.packPath(name, ".pack"))
			}
		}
	}
	return nil
}
