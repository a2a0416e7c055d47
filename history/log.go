package history

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// The log is where a call's entries and the bodies it kept go first: one
// file, always open, appended to. A pre-image is durable after one flush
// of it, where a blob file and an entry file of their own cost an inode
// each (on a busy ext4 disk as much as the whole write they guard) and
// four flushes: file, folder, file, folder. Readers read the log as well
// as the packs it is sealed into (pack.go), so nothing is written twice on
// the call's path.
//
// A record is framed: magic, payload length, CRC-32C of the payload, then
// the payload (JSON, then the bodies raw: see encode). Writers append
// whole frames with one write on a file opened O_APPEND, so the frames of
// several processes never interleave; a frame cut short by a crash or a full disk is skipped, and
// reading resumes at the next magic. A later record of a call replaces
// the earlier one (its outcome after its pending entries).

const logName = "log"

var logMagic = [4]byte{'v', 'g', 'h', '1'}

const frameHead = 12 // magic, length, CRC

// logBudget bounds the bodies one record holds: a body that does not fit
// is a blob file of its own (blobs/), synced as such, so a recursive
// delete of a large folder costs what it did without the log.
const logBudget = 1 << 20

// logLimit is the size past which a writer seals the log into a pack when
// no one else is using the store. A var for the tests.
var logLimit int64 = 4 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logRecord is one step of one call: its entries as they stand, and the
// bodies of this step's states that are not blob files.
type logRecord struct {
	ID      string            `json:"id"`
	Entries []Entry           `json:"entries"`
	Bodies  map[string][]byte `json:"bodies,omitempty"` // by sha256
	size    int
}

// fits reserves room for a body of n bytes, if the record has it.
func (r *logRecord) fits(n int) bool {
	if r.size+n > logBudget {
		return false
	}
	r.size += n
	return true
}

func (r *logRecord) add(sum string, body []byte) {
	if r.Bodies == nil {
		r.Bodies = map[string][]byte{}
	}
	r.Bodies[sum] = body
}

func frame(payload []byte) []byte {
	out := make([]byte, frameHead, frameHead+len(payload))
	copy(out, logMagic[:])
	binary.LittleEndian.PutUint32(out[4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(out[8:], crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// appendLog writes r as one frame; durable flushes it, so that when it
// returns nil the record survives a power cut.
func (s *Store) appendLog(r *logRecord, durable bool) error {
	payload, err := r.encode()
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if _, err := s.log.Write(frame(payload)); err != nil {
		return fmt.Errorf("history: write %s: %w", s.log.Name(), err)
	}
	if durable {
		s.reserveLog()
		if err := dataSync(s.log); err != nil {
			return fmt.Errorf("history: sync %s: %w", s.log.Name(), err)
		}
	}
	return nil
}

// logReserve is how far ahead of the log's end its blocks are allocated:
// past logLimit, where the log is sealed, and a whole record more.
const logReserve = 4<<20 + 2*logBudget

// reserveLog allocates the log's blocks ahead of its end (see reserve)
// when this process last did so for less than a record ahead, or the log
// has shrunk since: a seal, in any process, empties it and frees them.
func (s *Store) reserveLog() {
	end := s.logSize()
	s.reserveMu.Lock()
	defer s.reserveMu.Unlock()
	if end >= s.lastEnd && end+2*logBudget <= s.reserved {
		s.lastEnd = end
		return
	}
	reserve(s.log, end, logReserve)
	s.reserved, s.lastEnd = end+logReserve, end
}

// encode is the record's payload: its id and entries as JSON, then each
// body raw (sha256, 32 bytes; length, 4 bytes; the body), which spares the
// base64 of JSON and its escaping on every call's path.
func (r *logRecord) encode() ([]byte, error) {
	head, err := json.Marshal(struct {
		ID      string  `json:"id"`
		Entries []Entry `json:"entries"`
	}{r.ID, r.Entries})
	if err != nil {
		return nil, err
	}
	n := len(head)
	for _, b := range r.Bodies {
		n += sha256.Size + 4 + len(b)
	}
	out := make([]byte, 0, n)
	out = append(out, head...)
	sums := make([]string, 0, len(r.Bodies))
	for sum := range r.Bodies {
		sums = append(sums, sum)
	}
	sort.Strings(sums)
	for _, sum := range sums {
		raw, err := hex.DecodeString(sum)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("bad body name %q", sum)
		}
		out = append(out, raw...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(r.Bodies[sum])))
		out = append(out, r.Bodies[sum]...)
	}
	return out, nil
}

// decodeRecord reads a payload as encode writes it, or as JSON whole with
// the bodies in base64 (the log's first format, still read).
func decodeRecord(payload []byte) (logRecord, bool) {
	var r logRecord
	d := json.NewDecoder(bytes.NewReader(payload))
	if d.Decode(&r) != nil || !validID(r.ID) {
		return logRecord{}, false
	}
	rest := payload[d.InputOffset():]
	for len(rest) > 0 {
		if len(rest) < sha256.Size+4 {
			return logRecord{}, false
		}
		n := binary.LittleEndian.Uint32(rest[sha256.Size:])
		if uint64(n) > uint64(len(rest)-sha256.Size-4) {
			return logRecord{}, false
		}
		// A copy, as json.Unmarshal makes: the caller's buffer may not last.
		body := bytes.Clone(rest[sha256.Size+4 : sha256.Size+4+int(n)])
		r.add(hex.EncodeToString(rest[:sha256.Size]), body)
		rest = rest[sha256.Size+4+int(n):]
	}
	return r, true
}

// eachFrame calls fn with the payload of every whole frame in data, in
// order, skipping what is not one (a torn or damaged frame, or junk) by
// looking for the next magic. It returns where the last whole frame ends.
func eachFrame(data []byte, fn func(payload []byte)) (end int) {
	all := len(data)
	for len(data) >= frameHead {
		if !bytes.Equal(data[:4], logMagic[:]) {
			data = nextFrame(data)
			continue
		}
		n := int(binary.LittleEndian.Uint32(data[4:]))
		sum := binary.LittleEndian.Uint32(data[8:])
		if n > len(data)-frameHead || crc32.Checksum(data[frameHead:frameHead+n], castagnoli) != sum {
			data = nextFrame(data)
			continue
		}
		fn(data[frameHead : frameHead+n])
		data = data[frameHead+n:]
		end = all - len(data)
	}
	return end
}

// readLog returns every whole record in data, skipping what is not one,
// and where the last whole frame ends.
func readLog(data []byte) ([]logRecord, int) {
	var out []logRecord
	end := eachFrame(data, func(payload []byte) {
		if r, ok := decodeRecord(payload); ok {
			out = append(out, r)
		}
	})
	return out, end
}

// readLogCall is the last whole record of id in data, as readLog would
// find it. json.Marshal writes a record's id first, so a record that
// starts with another id is skipped unparsed; one that starts any other
// way is parsed, to be sure.
func readLogCall(data []byte, id string) (logRecord, bool) {
	quoted, _ := json.Marshal(id)
	mine := append(append([]byte(`{"id":`), quoted...), ',')
	anyID := []byte(`{"id":"`)
	var last logRecord
	found := false
	eachFrame(data, func(payload []byte) {
		if !bytes.HasPrefix(payload, mine) && bytes.HasPrefix(payload, anyID) {
			return
		}
		if r, ok := decodeRecord(payload); ok && r.ID == id {
			last, found = r, true
		}
	})
	return last, found
}

func nextFrame(data []byte) []byte {
	i := bytes.Index(data[1:], logMagic[:])
	if i < 0 {
		return nil
	}
	return data[1+i:]
}

// openLog opens the store's log for appending, creating it durably.
func openLog(dir string) (*os.File, error) {
	name := filepath.Join(dir, logName)
	_, statErr := os.Lstat(name)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := syncDir(dir); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// logSize is how long the log has grown; 0 if unknown.
func (s *Store) logSize() int64 {
	if s.log == nil {
		return 0
	}
	fi, err := s.log.Stat()
	if err != nil {
		return 0
	}
	return fi.Size()
}
