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
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// The log is where a call's entries and the bodies it kept go first: one
// file, always open. A pre-image is durable after one flush of it, where a
// blob file and an entry file of their own cost an inode each (on a busy
// ext4 disk as much as the whole write they guard) and four flushes: file,
// folder, file, folder. Readers read the log as well as the packs it is
// sealed into (pack.go), so nothing is written twice on the call's path.
//
// The log is written in place, never appended to: its blocks are written
// (with zeros) ahead of use, and a record overwrites some of them. So the
// flush of a record changes neither the file's size nor its blocks, and
// on ext4 it is a write of data alone, with no commit of the journal; an
// append's flush commits the journal, and with it whatever else is
// waiting in it (the last write's rename and data), which doubled the
// cost of the flush a pre-image needs.
//
// The head, at the start of the file, says where the records end and the
// log's generation: magic, generation, end, CRC-32C of those. Records
// follow from headSize, each a frame: magic, generation, payload length,
// CRC-32C of the generation and payload, then the payload (JSON, then the
// bodies raw: see encode). A writer holds the log (a mutex in its process,
// an flock across processes) while it writes a frame at the end and then
// the head past it, and flushes after letting go, so writers' flushes can
// overlap. A reader reads the head, then the frames up to its end.
//
// A seal (pack.go) moves the records into a pack and then starts the
// next generation at headSize: the old frames stay in the file as junk,
// and a frame of another generation is never read. A power cut may keep a
// head whose end covers a frame that was not written whole: that frame is
// skipped, and reading resumes at the next magic. A later record of a
// call replaces the earlier one (its outcome after its pending entries).
//
// A log of the first format (frames appended from the file's start, with
// no head) is still read; the first Open sealed it into a pack and starts
// the file anew.

const logName = "log"

var (
	headMagic  = [4]byte{'v', 'g', 'h', 'L'}
	frameMagic = [4]byte{'v', 'g', 'h', '2'}
	firstMagic = [4]byte{'v', 'g', 'h', '1'} // frames of the first format
)

const (
	headSize  = 4096 // the head's block; records start after it
	headLen   = 20   // magic, generation, end, CRC
	frameHead = 16   // magic, generation, length, CRC
	firstHead = 12   // the first format's: magic, length, CRC
	// growBy is how much zeroed room a writer adds when the log runs out
	// of it: a write of this many zeros and one journal commit, paid
	// once for many records, and not again after a seal.
	growBy = 1 << 20
)

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

// framing is how frames are laid out: the log's own, or the first
// format's, which had no generation.
type framing struct {
	magic [4]byte
	head  int
	gen   bool
}

var (
	logFraming   = framing{frameMagic, frameHead, true}
	firstFraming = framing{firstMagic, firstHead, false}
)

// frame is payload framed for generation gen of the log.
func frame(gen uint32, payload []byte) []byte {
	out := make([]byte, frameHead, frameHead+len(payload))
	copy(out, frameMagic[:])
	binary.LittleEndian.PutUint32(out[4:], gen)
	binary.LittleEndian.PutUint32(out[8:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(out[12:], frameSum(gen, payload))
	return append(out, payload...)
}

func frameSum(gen uint32, payload []byte) uint32 {
	var g [4]byte
	binary.LittleEndian.PutUint32(g[:], gen)
	return crc32.Update(crc32.Checksum(g[:], castagnoli), castagnoli, payload)
}

// logHead is what the head says. ok is false for a file with no head (of
// the first format, or empty) or one whose head is damaged; then magic
// tells which.
type logHead struct {
	gen   uint32
	end   int64
	ok    bool
	magic bool // the head's magic is there (so its damage is damage)
}

func (h logHead) encode() []byte {
	b := make([]byte, headLen)
	copy(b, headMagic[:])
	binary.LittleEndian.PutUint32(b[4:], h.gen)
	binary.LittleEndian.PutUint64(b[8:], uint64(h.end))
	binary.LittleEndian.PutUint32(b[16:], crc32.Checksum(b[:16], castagnoli))
	return b
}

func decodeHead(b []byte) logHead {
	if len(b) < headLen || !bytes.Equal(b[:4], headMagic[:]) {
		return logHead{}
	}
	h := logHead{magic: true}
	if crc32.Checksum(b[:16], castagnoli) != binary.LittleEndian.Uint32(b[16:]) {
		return h
	}
	h.gen = binary.LittleEndian.Uint32(b[4:])
	h.end = int64(binary.LittleEndian.Uint64(b[8:]))
	h.ok = h.end >= headSize
	return h
}

// readHead reads the head of the log open as f.
func readHead(f *os.File) (logHead, error) {
	b := make([]byte, headLen)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return logHead{}, fileErr("read", f.Name(), err)
	}
	return decodeHead(b[:n]), nil
}

// readHead reads the head of the store's log (a writer's).
func (s *Store) readHead() (logHead, error) { return readHead(s.log) }

// logReader is the log to read: the store's own, or for a store opened
// read-only the file opened now, which done closes (nil if there is
// none yet).
func (s *Store) logReader() (f *os.File, done func(), err error) {
	if s.log != nil {
		return s.log, func() {}, nil
	}
	f, err = os.Open(filepath.Join(s.dir, logName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, func() {}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("history: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// errHeadDamaged refuses a record: the log's head did not survive a
// crash, and only an Open (which holds the store alone) may start the log
// anew. Every process opens the store before it writes, so this is met
// only by a process that was running through the crash's damage.
var errHeadDamaged = errors.New("history: the log's head is damaged; the next start of vaultgate repairs it")

// holdLog runs fn as the log's only writer, in this process and others.
func (s *Store) holdLog(fn func() error) error {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if err := syscall.Flock(int(s.log.Fd()), syscall.LOCK_EX); err != nil {
		return fileErr("lock", s.log.Name(), err)
	}
	defer syscall.Flock(int(s.log.Fd()), syscall.LOCK_UN)
	return fn()
}

// appendLog writes r as one frame at the log's end; durable flushes it,
// so that when it returns nil the record survives a power cut.
func (s *Store) appendLog(r *logRecord, durable bool) error {
	payload, err := r.encode()
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	err = s.holdLog(func() error {
		h, err := s.readHead()
		if err != nil {
			return err
		}
		if !h.ok {
			return errHeadDamaged
		}
		fr := frame(h.gen, payload)
		if err := s.makeRoom(h.end + int64(len(fr))); err != nil {
			return err
		}
		// The frame first, then the head that covers it: a reader that
		// reads the head finds the frame whole.
		if _, err := s.log.WriteAt(fr, h.end); err != nil {
			return fileErr("write", s.log.Name(), err)
		}
		h.end += int64(len(fr))
		if _, err := s.log.WriteAt(h.encode(), 0); err != nil {
			return fileErr("write", s.log.Name(), err)
		}
		return nil
	})
	if err != nil || !durable {
		return err
	}
	// After letting go of the log: a flush is of the file, so it carries
	// this frame, and a head that covers it, whoever wrote since.
	if err := dataSync(s.log); err != nil {
		return fileErr("sync", s.log.Name(), err)
	}
	return nil
}

var zeros = make([]byte, 64<<10)

// makeRoom writes zeros past the log's end of file until it holds upTo
// bytes, rounded up to growBy (the log must be held).
func (s *Store) makeRoom(upTo int64) error {
	fi, err := s.log.Stat()
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	size := fi.Size()
	if size >= upTo {
		return nil
	}
	want := (upTo + growBy - 1) / growBy * growBy
	for off := size; off < want; off += int64(len(zeros)) {
		if _, err := s.log.WriteAt(zeros[:min(int64(len(zeros)), want-off)], off); err != nil {
			// What was written stays: zeros past the end are room.
			return fileErr("grow", s.log.Name(), err)
		}
	}
	return nil
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

// logView is which frames of a log's bytes are its records: those of a
// framing, and with it a generation.
type logView struct {
	framing
	gen uint32
}

// viewOf is the view of a log with head h.
func viewOf(h logHead) logView { return logView{logFraming, h.gen} }

// eachFrame calls fn with the payload of every whole frame of v in data,
// in order, skipping what is not one (a torn or damaged frame, a frame of
// another generation, junk) by looking for the next magic. It returns
// where the last whole frame of v ends.
func eachFrame(data []byte, v logView, fn func(payload []byte)) (end int) {
	all := len(data)
	for len(data) >= v.head {
		gen, payload, ok := v.parse(data)
		if !ok || gen != v.gen {
			data = v.next(data)
			continue
		}
		fn(payload)
		data = data[v.head+len(payload):]
		end = all - len(data)
	}
	return end
}

// parse reads the frame at data's start, if it is one whole.
func (f framing) parse(data []byte) (gen uint32, payload []byte, ok bool) {
	if len(data) < f.head || !bytes.Equal(data[:4], f.magic[:]) {
		return 0, nil, false
	}
	var n, sum uint32
	if f.gen {
		gen = binary.LittleEndian.Uint32(data[4:])
		n, sum = binary.LittleEndian.Uint32(data[8:]), binary.LittleEndian.Uint32(data[12:])
	} else {
		n, sum = binary.LittleEndian.Uint32(data[4:]), binary.LittleEndian.Uint32(data[8:])
	}
	if uint64(n) > uint64(len(data)-f.head) {
		return 0, nil, false
	}
	payload = data[f.head : f.head+int(n)]
	want := crc32.Checksum(payload, castagnoli)
	if f.gen {
		want = frameSum(gen, payload)
	}
	return gen, payload, want == sum
}

func (f framing) next(data []byte) []byte {
	i := bytes.Index(data[1:], f.magic[:])
	if i < 0 {
		return nil
	}
	return data[1+i:]
}

// latestGen is the highest generation of a whole frame in data: the
// records of a log whose head was lost (the older generations' are
// sealed already).
func latestGen(data []byte) uint32 {
	var top uint32
	for len(data) >= frameHead {
		gen, payload, ok := logFraming.parse(data)
		if !ok {
			data = logFraming.next(data)
			continue
		}
		top = max(top, gen)
		data = data[frameHead+len(payload):]
	}
	return top
}

// readLog returns every whole record of v in data, skipping what is not
// one, and where the last whole frame ends.
func readLog(data []byte, v logView) ([]logRecord, int) {
	var out []logRecord
	end := eachFrame(data, v, func(payload []byte) {
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
func readLogCall(data []byte, v logView, id string) (logRecord, bool) {
	quoted, _ := json.Marshal(id)
	mine := append(append([]byte(`{"id":`), quoted...), ',')
	anyID := []byte(`{"id":"`)
	var last logRecord
	found := false
	eachFrame(data, v, func(payload []byte) {
		if !bytes.HasPrefix(payload, mine) && bytes.HasPrefix(payload, anyID) {
			return
		}
		if r, ok := decodeRecord(payload); ok && r.ID == id {
			last, found = r, true
		}
	})
	return last, found
}

// openLog opens the store's log, creating it durably.
func openLog(dir string) (*os.File, error) {
	name := filepath.Join(dir, logName)
	_, statErr := os.Lstat(name)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
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

// readRecords reads the log's records: those of its head's generation up
// to its end; of a log with no head, all its records (of the first
// format); of a log whose head is damaged, those of the latest generation
// in it. f is the log open, from is where a reader that parsed the same generation before
// stopped (headSize if it did not); h is the head read.
func readRecords(f *os.File, h logHead, from int64) ([]logRecord, error) {
	if h.ok {
		if from >= h.end {
			return nil, nil
		}
		data := make([]byte, h.end-from)
		if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
			return nil, fileErr("read", f.Name(), err)
		}
		recs, _ := readLog(data, viewOf(h))
		return recs, nil
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	if !h.magic {
		recs, _ := readLog(data, logView{framing: firstFraming})
		return recs, nil
	}
	recs, _ := readLog(data[min(len(data), headSize):], logView{logFraming, latestGen(data[min(len(data), headSize):])})
	return recs, nil
}

// startLog makes the log's head and first room, for a log that has none
// (new, of the first format, or damaged) once its records are sealed;
// the store must be held alone.
func (s *Store) startLog(gen uint32) error {
	return s.holdLog(func() error {
		if err := s.makeRoom(growBy); err != nil {
			return err
		}
		if _, err := s.log.WriteAt(logHead{gen: gen, end: headSize}.encode(), 0); err != nil {
			return fileErr("write", s.log.Name(), err)
		}
		if err := s.log.Sync(); err != nil { // its size too: a new log's room
			return fileErr("sync", s.log.Name(), err)
		}
		return nil
	})
}

// logSize is how many bytes of records the log holds; 0 if unknown.
func (s *Store) logSize() int64 {
	if s.log == nil {
		return 0
	}
	h, err := s.readHead()
	if err != nil {
		return 0
	}
	if !h.ok {
		fi, err := s.log.Stat()
		if err != nil {
			return 0
		}
		return fi.Size() // to be sealed, or started
	}
	return h.end - headSize
}
