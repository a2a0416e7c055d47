package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Names of the files that live beside the log.
func headPath(path string) string { return path + ".head" }
func lockPath(path string) string { return path + ".lock" }
func rotatedPath(path string, n int) string {
	return path + "." + strconv.Itoa(n)
}

// head is the content of the head file, and the writer's idea of the chain's
// end: the number of lines, the hash of the last one, and the size of the
// current file after it.
type head struct {
	Lines int64  `json:"lines"`
	Hash  string `json:"hash"`
	Size  int64  `json:"size"`
}

// readHead reads the head file; a missing one is (nil, nil). A head whose
// checksum does not match its fields (a write torn by a power cut, or an
// edit) is an error: it is no witness of the chain's end.
func readHead(path string) (*head, error) {
	b, err := os.ReadFile(headPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("audit: read head: %w", err)
	}
	var stored struct {
		head
		CRC *string `json:"crc"`
	}
	bad := func() (*head, error) {
		return nil, fmt.Errorf("audit: head file %s is not a head (%q)", headPath(path), truncate(b, 80))
	}
	if err := json.Unmarshal(b, &stored); err != nil {
		return bad()
	}
	h := stored.head
	if h.Lines < 0 || h.Size < 0 || !validHash(h.Hash, h.Lines == 0) {
		return bad()
	}
	// Heads written before the checksum (by a rename, so never torn) have
	// none; one that has it must match.
	if stored.CRC != nil && *stored.CRC != headCRC(h) {
		return bad()
	}
	return &h, nil
}

// headWidth is the fixed size of the head file: its JSON padded with
// spaces, so every update is one write over the same bytes.
const headWidth = 160

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func headCRC(h head) string {
	b, _ := json.Marshal(h)
	return fmt.Sprintf("%08x", crc32.Checksum(b, castagnoli))
}

// encodeHead is the head file's content: the fields, their checksum, and
// spaces up to headWidth.
func encodeHead(h head) []byte {
	b, _ := json.Marshal(h)
	b = fmt.Appendf(b[:len(b)-1], `,"crc":"%08x"}`, crc32.Checksum(b, castagnoli))
	if len(b) < headWidth {
		b = append(b, bytes.Repeat([]byte{' '}, headWidth-1-len(b))...)
	}
	return append(b, '\n')
}

// headFile is a writer's open head file. The head is rewritten in place,
// one pwrite of headWidth bytes under the log's lock: readers take the lock
// too, so none sees half an update, and the checksum catches a write a
// power cut tore. It costs a stat and a write where a temp file and a
// rename cost five system calls and a change to the folder.
type headFile struct {
	f  *os.File
	fi os.FileInfo
}

// write puts h in the head file, opening it again when the name no longer
// leads to the file this writer has open (removed, or replaced by an
// older writer's rename).
func (hf *headFile) write(path string, h head, sync bool) error {
	name := headPath(path)
	if hf.f != nil {
		if st, err := os.Stat(name); err != nil || !os.SameFile(st, hf.fi) {
			hf.close()
		}
	}
	if hf.f == nil {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("audit: write head: %w", err)
		}
		fi, err := f.Stat()
		if err == nil && fi.Size() > headWidth {
			err = f.Truncate(headWidth)
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("audit: write head: %w", err)
		}
		hf.f, hf.fi = f, fi
	}
	_, err := hf.f.WriteAt(encodeHead(h), 0)
	if err == nil && sync {
		err = hf.f.Sync()
	}
	if err != nil {
		hf.close()
		return fmt.Errorf("audit: write head: %w", err)
	}
	return nil
}

func (hf *headFile) close() {
	if hf.f != nil {
		hf.f.Close()
		hf.f, hf.fi = nil, nil
	}
}

// writeHead writes the head file once, for callers without a Writer.
func writeHead(path string, h head, sync bool) error {
	var hf headFile
	defer hf.close()
	return hf.write(path, h, sync)
}

func validHash(s string, emptyOK bool) bool {
	if s == "" {
		return emptyOK
	}
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// rotated lists the rotated files of the log at path, oldest first, with
// their numbers.
func rotated(path string) ([]string, []int, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("audit: list %s: %w", dir, err)
	}
	var nums []int
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok || rest == "" || strings.TrimLeft(rest, "0123456789") != "" || rest[0] == '0' {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || !e.Type().IsRegular() {
			continue
		}
		nums = append(nums, n)
	}
	sort.Ints(nums)
	names := make([]string, len(nums))
	for i, n := range nums {
		names[i] = rotatedPath(path, n)
	}
	return names, nums, nil
}

// chainFiles lists the files of the chain in order: the rotated ones, oldest
// first, then the current one if it exists.
func chainFiles(path string) ([]string, error) {
	names, _, err := rotated(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		names = append(names, path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return names, nil
}

// link is what the chain needs of a line: its seq and its own hash.
type link struct {
	Seq  int64
	Hash string
}

// chainFields is the part of a line that Verify and recovery parse.
type chainFields struct {
	Seq  *int64  `json:"seq"`
	Prev *string `json:"prev"`
}

// parseChain parses the chain fields of one line (without its newline). It
// fails unless the line is a JSON object with both.
func parseChain(line []byte) (seq int64, prev string, err error) {
	var c chainFields
	if err := json.Unmarshal(line, &c); err != nil {
		return 0, "", err
	}
	if c.Seq == nil || c.Prev == nil {
		return 0, "", errors.New("no seq or prev field")
	}
	return *c.Seq, *c.Prev, nil
}

// lastLink finds the last line of r[0:size] that parses, reading backwards;
// an unterminated fragment at the end is not a line and is skipped, and so
// is any line that does not parse.
func lastLink(r io.ReaderAt, size int64) (link, bool, error) {
	const chunk = 64 << 10
	var found link
	ok := false
	err := linesBackward(r, size, chunk, func(line []byte) bool {
		seq, _, err := parseChain(line)
		if err != nil {
			return true
		}
		found, ok = link{Seq: seq, Hash: lineHash(line)}, true
		return false
	})
	return found, ok, err
}

// linesBackward calls fn with each newline-terminated line of r[0:size],
// last first, without the newline, until fn returns false. Bytes after the
// last newline are ignored.
func linesBackward(r io.ReaderAt, size int64, chunk int64, fn func([]byte) bool) error {
	pos := size
	var buf []byte // r[pos : pos+len(buf)], a tail of the file ending at a newline
	started := false
	for pos > 0 {
		n := min(chunk, pos)
		b := make([]byte, n, n+int64(len(buf)))
		if _, err := r.ReadAt(b, pos-n); err != nil && err != io.EOF {
			return fmt.Errorf("audit: read: %w", err)
		}
		pos -= n
		buf = append(b, buf...)
		if !started {
			// Drop an unterminated fragment at the very end.
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 {
				if pos == 0 {
					return nil
				}
				continue
			}
			buf = buf[:i+1]
			started = true
		}
		// buf ends with '\n'; hand out every line whose start is known.
		for len(buf) > 0 {
			i := bytes.LastIndexByte(buf[:len(buf)-1], '\n')
			if i < 0 && pos > 0 {
				break // its start lies in an earlier chunk
			}
			if !fn(buf[i+1 : len(buf)-1]) {
				return nil
			}
			buf = buf[:i+1]
		}
	}
	return nil
}

// Files returns the files of the log at path in the chain's order: the
// rotated ones oldest first, then the current one when it exists. A
// rotated file keeps its name; only the current one is renamed, to the
// next number.
func Files(path string) ([]string, error) { return chainFiles(path) }
