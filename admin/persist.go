package admin

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
	"os"
	"path/filepath"

	"github.com/vaultgate/vaultgate/audit"
)

// The index is kept on disk between starts, in the state folder (hidden
// from the agent, never in the vault), so that a restart reads only what
// was appended since. The file is a cache and is never trusted blindly:
// it is checked whole (a CRC-32C over its bytes), it must be of this log,
// and each file it indexed must still be there under the same identity,
// no shorter, with its first bytes and its last indexed line unchanged, no
// write in place (same size, a newer mtime), and the line after it
// chained to it (its prev is that line's hash). Anything else and it is
// thrown away and the log read again. Each entry keeps its line's CRC too:
// a line read back that no longer matches makes the index start over.

// IndexFile is where the panel of the log at logPath keeps its index, in
// the state folder: one file per log, named by the log's absolute path.
func IndexFile(stateDir, logPath string) string {
	abs, err := filepath.Abs(logPath)
	if err != nil {
		abs = logPath
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(stateDir, "panel", "index-"+hex.EncodeToString(sum[:8]))
}

const indexMagic = "VGPANIX3" // 2: each entry names its vault; 3: and the lines of its call

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// fileMark is what the stored index knows of one file, to know it again.
type fileMark struct {
	dev, ino       uint64
	mtime          int64
	headSum        [32]byte // sha256 of its first headWindow bytes (up to done)
	lastOff, lastN int64    // the last indexed line
	lastSum        [32]byte // its hash, as the chain's next prev names it
	hasLast        bool
	name           string
	done           int64
	lines          int
}

const headWindow = 4096

// mark takes what the index file keeps of f, reading its head window and
// last indexed line.
func (ix *index) mark(f *idxFile, fileNo int32) (fileMark, error) {
	m := fileMark{name: f.name, done: f.done, lines: f.lines, mtime: f.info.ModTime().UnixNano()}
	var ok bool
	if m.dev, m.ino, ok = fileIdentity(f.info); !ok {
		return m, errors.New("no file identity on this system")
	}
	head := make([]byte, min(f.done, headWindow))
	if _, err := f.f.ReadAt(head, 0); err != nil {
		return m, err
	}
	m.headSum = sha256.Sum256(head)
	for i := len(ix.entries) - 1; i >= 0; i-- {
		if e := &ix.entries[i]; e.file == fileNo {
			line := make([]byte, e.n)
			if _, err := f.f.ReadAt(line, e.off); err != nil {
				return m, err
			}
			m.lastOff, m.lastN, m.lastSum, m.hasLast = e.off, int64(e.n), sha256.Sum256(line), true
			break
		}
	}
	return m, nil
}

type enc struct{ b []byte }

func (e *enc) u(v uint64)   { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) s(v string)   { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) raw(v []byte) { e.u(uint64(len(v))); e.b = append(e.b, v...) }

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail() {
	if d.err == nil {
		d.err = errors.New("index file cut short or malformed")
	}
	d.b = nil
}

func (d *dec) u() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) bytes(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) raw() []byte { return d.bytes(d.u()) }
func (d *dec) s() string   { return string(d.raw()) }

// encodeIndex writes the index as the file keeps it. The caller holds mu
// (marks read the files).
func (ix *index) encodeIndex() ([]byte, error) {
	abs, err := filepath.Abs(ix.path)
	if err != nil {
		return nil, err
	}
	e := &enc{b: make([]byte, 0, len(ix.arena)+len(ix.entries)*24+1<<16)}
	e.b = append(e.b, indexMagic...)
	e.s(abs)
	e.u(uint64(len(ix.files)))
	for k, f := range ix.files {
		m, err := ix.mark(f, int32(k))
		if err != nil {
			return nil, err
		}
		e.s(m.name)
		e.u(m.dev)
		e.u(m.ino)
		e.i(m.mtime)
		e.u(uint64(m.done))
		e.u(uint64(m.lines))
		e.b = append(e.b, m.headSum[:]...)
		if m.hasLast {
			e.u(1)
			e.u(uint64(m.lastOff))
			e.u(uint64(m.lastN))
			e.b = append(e.b, m.lastSum[:]...)
		} else {
			e.u(0)
		}
	}
	damaged := ""
	if ix.damaged != nil {
		damaged = ix.damaged.Error()
	}
	e.s(damaged)
	e.i(ix.lastSeq)
	names := ix.strs.names
	if len(names) == 0 {
		names = []string{""}
	}
	e.u(uint64(len(names) - 1))
	for _, n := range names[1:] {
		e.s(n)
	}
	e.raw(ix.arena)
	e.u(uint64(len(ix.entries)))
	var prev entry
	for k := range ix.entries {
		x := &ix.entries[k]
		e.i(x.ms - prev.ms)
		e.i(x.seq - prev.seq)
		for _, id := range [...]uint32{x.session, x.agent, x.via, x.tool, x.rule, x.path, x.vault} {
			e.u(uint64(id))
		}
		e.u(uint64(x.changes))
		e.u(uint64(x.look))
		flags := uint64(x.decision) << 3
		if x.failed {
			flags |= 1
		}
		if x.after {
			flags |= 2
		}
		if x.part {
			flags |= 4
		}
		e.u(flags)
		// The lines of its call, as distances: a part's back to its
		// call's entry, a call's on to its parts.
		for _, l := range x.link {
			if l == 0 {
				e.u(0)
			} else {
				e.u(uint64(max(int(l-1)-k, k-int(l-1))))
			}
		}
		e.u(uint64(x.file))
		e.u(uint64(x.n))
		e.i(x.off - prev.off)
		e.u(uint64(x.textEnd - x.text))
		e.b = binary.LittleEndian.AppendUint32(e.b, x.sum)
		prev = *x
	}
	e.b = binary.LittleEndian.AppendUint32(e.b, crc32.Checksum(e.b, crcTable))
	return e.b, nil
}

// stored is an index file decoded, not yet checked against the log.
type stored struct {
	marks   []fileMark
	damaged string
	lastSeq int64
	names   []string
	arena   []byte
	entries []entry
}

func decodeIndex(b []byte, logPath string) (*stored, error) {
	if len(b) < len(indexMagic)+4 || string(b[:len(indexMagic)]) != indexMagic {
		return nil, errors.New("not an index file of this version")
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crcTable) != sum {
		return nil, errors.New("index file damaged: checksum mismatch")
	}
	d := &dec{b: body[len(indexMagic):]}
	abs, err := filepath.Abs(logPath)
	if err != nil {
		return nil, err
	}
	if p := d.s(); d.err == nil && p != abs {
		return nil, fmt.Errorf("index file of another log (%s)", p)
	}
	s := &stored{}
	nf := d.u()
	if nf > 1<<20 {
		d.fail()
	}
	for range nf {
		if d.err != nil {
			break
		}
		var m fileMark
		m.name = d.s()
		m.dev, m.ino, m.mtime = d.u(), d.u(), d.i()
		m.done, m.lines = int64(d.u()), int(d.u())
		copy(m.headSum[:], d.bytes(32))
		if d.u() == 1 {
			m.hasLast = true
			m.lastOff, m.lastN = int64(d.u()), int64(d.u())
			copy(m.lastSum[:], d.bytes(32))
		}
		s.marks = append(s.marks, m)
	}
	s.damaged = d.s()
	s.lastSeq = d.i()
	ns := d.u()
	if ns > uint64(len(d.b)) {
		d.fail()
	}
	s.names = make([]string, 1, ns+1)
	for range ns {
		if d.err != nil {
			break
		}
		s.names = append(s.names, d.s())
	}
	s.arena = bytes.Clone(d.raw())
	ne := d.u()
	if ne > uint64(len(d.b)) {
		d.fail()
	}
	if d.err != nil {
		return nil, d.err
	}
	s.entries = make([]entry, 0, ne)
	var prev entry
	text := uint32(0)
	for range ne {
		var x entry
		x.ms, x.seq = prev.ms+d.i(), prev.seq+d.i()
		ids := [7]uint32{}
		for k := range ids {
			v := d.u()
			if v >= uint64(len(s.names)) {
				d.fail()
			}
			ids[k] = uint32(v)
		}
		x.session, x.agent, x.via, x.tool, x.rule, x.path, x.vault = ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
		x.changes, x.look = uint16(d.u()), Look(d.u())
		flags := d.u()
		x.failed, x.after, x.part, x.decision = flags&1 != 0, flags&2 != 0, flags&4 != 0, uint8(flags>>3)
		k := len(s.entries)
		for i := range x.link {
			dist := d.u()
			if dist == 0 {
				continue
			}
			to := int64(k) + int64(dist)
			if x.part {
				to = int64(k) - int64(dist)
			}
			if dist > ne || to < 0 || to >= int64(ne) || x.part && i > 0 {
				return nil, errors.New("index file malformed: a call's line out of range")
			}
			x.link[i] = int32(to + 1)
		}
		x.file, x.n = int32(d.u()), int32(d.u())
		x.off = prev.off + d.i()
		x.text = text
		x.textEnd = text + uint32(d.u())
		text = x.textEnd
		sb := d.bytes(4)
		if d.err != nil {
			return nil, d.err
		}
		x.sum = binary.LittleEndian.Uint32(sb)
		if x.file < 0 || int(x.file) >= len(s.marks) || x.n < 0 || x.off < 0 ||
			x.off+int64(x.n) >= s.marks[x.file].done || x.textEnd > uint32(len(s.arena)) || x.textEnd < x.text {
			return nil, errors.New("index file malformed: an entry out of range")
		}
		s.entries = append(s.entries, x)
		prev = x
	}
	if len(d.b) != 0 {
		return nil, errors.New("index file malformed: trailing bytes")
	}
	return s, nil
}

// load takes the stored index when it still describes the log, opening
// its files. The caller holds mu and the index is empty; on an error it
// stays empty.
func (ix *index) load(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	s, err := decodeIndex(b, ix.path)
	if err != nil {
		return err
	}
	names, err := audit.Files(ix.path)
	if err != nil {
		return err
	}
	byID := map[[2]uint64]string{}
	for _, n := range names {
		if st, err := os.Stat(n); err == nil {
			if dev, ino, ok := fileIdentity(st); ok {
				byID[[2]uint64{dev, ino}] = n
			}
		}
	}
	var files []*idxFile
	closeAll := func() {
		for _, f := range files {
			f.f.Close()
		}
	}
	for _, m := range s.marks {
		f, err := openMarked(m, byID)
		if err != nil {
			closeAll()
			return err
		}
		files = append(files, f)
	}
	ix.files, ix.entries, ix.arena, ix.lastSeq = files, s.entries, s.arena, s.lastSeq
	ix.strs = interner{ids: make(map[string]uint32, len(s.names)), names: s.names}
	for k, n := range s.names[1:] {
		ix.strs.ids[n] = uint32(k + 1)
	}
	if s.damaged != "" {
		ix.damaged = errors.New(s.damaged)
	}
	// The calls still waiting for a line are not kept: the last lines
	// are read again to know them (the caller resets on an error).
	return ix.rejoin()
}

// openMarked opens the file a mark describes and checks it is still what
// was indexed, only ever appended to.
func openMarked(m fileMark, byID map[[2]uint64]string) (*idxFile, error) {
	name, ok := byID[[2]uint64{m.dev, m.ino}]
	if !ok {
		return nil, fmt.Errorf("%s: no longer part of the log", m.name)
	}
	fd, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	f := &idxFile{name: name, f: fd, done: m.done, lines: m.lines}
	bad := func(why string) (*idxFile, error) {
		fd.Close()
		return nil, fmt.Errorf("%s: %s", name, why)
	}
	if f.info, err = fd.Stat(); err != nil {
		return bad(err.Error())
	}
	dev, ino, _ := fileIdentity(f.info)
	size := f.info.Size()
	switch {
	case dev != m.dev || ino != m.ino:
		return bad("replaced")
	case size < m.done:
		return bad("truncated")
	case size == m.done && f.info.ModTime().UnixNano() != m.mtime:
		return bad("written in place")
	}
	head := make([]byte, min(m.done, headWindow))
	if _, err := fd.ReadAt(head, 0); err != nil || sha256.Sum256(head) != m.headSum {
		return bad("its first bytes changed")
	}
	if m.hasLast {
		line := make([]byte, m.lastN+1)
		if _, err := fd.ReadAt(line, m.lastOff); err != nil || line[m.lastN] != '\n' || sha256.Sum256(line[:m.lastN]) != m.lastSum {
			return bad("its last indexed line changed")
		}
		if size > m.done {
			// The next line, when whole and a record, must chain to it.
			next := make([]byte, min(size-m.done, 1<<20))
			n, err := fd.ReadAt(next, m.done)
			if err != nil && err != io.EOF {
				return bad(err.Error())
			}
			if i := bytes.IndexByte(next[:n], '\n'); i >= 0 {
				var c struct {
					Prev *string `json:"prev"`
				}
				if json.Unmarshal(next[:i], &c) == nil && c.Prev != nil && *c.Prev != hex.EncodeToString(m.lastSum[:]) {
					return bad("the line after the indexed ones does not chain to them")
				}
			}
		}
	}
	return f, nil
}

// save writes the index to file, through a temporary file and a rename,
// so that a reader sees the old one or the new one whole. It takes mu only
// to encode, not to write.
func (ix *index) save(file string) error {
	ix.mu.Lock()
	if ix.saving || ix.closed || ix.scanned == ix.savedAt {
		ix.mu.Unlock()
		return nil
	}
	ix.saving = true
	b, err := ix.encodeIndex()
	at := ix.scanned
	ix.mu.Unlock()
	defer func() {
		ix.mu.Lock()
		ix.saving = false
		if err == nil {
			ix.savedAt = at
		}
		ix.mu.Unlock()
	}()
	if err != nil {
		return err
	}
	if err = os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".index-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err = errors.Join(werr, cerr); err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
