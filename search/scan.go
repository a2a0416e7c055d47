package search

import (
	"bytes"
	"io"
	"math"
)

const (
	// SniffBytes: a NUL among a note's first SniffBytes bytes makes it
	// binary, and it is not searched.
	SniffBytes = 8000
	// MaxLine bounds a line: a longer one is matched, and shown, by its
	// first MaxLine bytes.
	MaxLine = 1 << 20
	// blockSize is how much is read at once; a block grows only to hold
	// a line longer than itself.
	blockSize = 256 << 10
	// maxEmptyReads ends a note whose reader keeps returning nothing.
	maxEmptyReads = 100
)

// Scanner searches notes one after the other, reusing its blocks. It is
// not safe for concurrent use: give each goroutine its own.
type Scanner struct {
	sniff, maxLine int
	buf            []byte
	next           []int // per needle, its next position in the block
}

// NewScanner returns a Scanner with the tool's limits.
func NewScanner() *Scanner {
	return &Scanner{sniff: SniffBytes, maxLine: MaxLine, buf: make([]byte, blockSize)}
}

// Scan calls found with the number (from 1) and the bytes of each line of
// r that m matches, in order, until found returns false or r ends. A
// line's bytes include its newline, are cut at MaxLine, and are valid
// only during the call. A note with a NUL in its first SniffBytes is
// binary: nothing in it is found. A read error ends the note as its end
// would.
func (sc *Scanner) Scan(r io.Reader, m *Matcher, found func(n int, line []byte) bool) {
	buf := sc.buf
	n, start, line := 0, 0, 1 // buf[:n] read; buf[start:n] not searched, from line number line
	var err error
	empty := 0
	read := func() {
		if n == len(buf) {
			if start > 0 {
				n = copy(buf, buf[start:n])
				start = 0
			} else { // a line as long as the block
				buf = append(buf[:n], make([]byte, len(buf))...)
				buf = buf[:cap(buf)]
				sc.buf = buf
			}
		}
		k, e := r.Read(buf[n:])
		n += k
		switch {
		case e != nil:
			err = e
		case k > 0:
			empty = 0
		default:
			if empty++; empty >= maxEmptyReads {
				err = io.ErrNoProgress
			}
		}
	}
	for n < sc.sniff && err == nil {
		read()
	}
	if bytes.IndexByte(buf[:min(n, sc.sniff)], 0) >= 0 {
		return
	}
	skipping := false // through the rest of a line longer than maxLine
	for {
		if skipping {
			if i := bytes.IndexByte(buf[start:n], '\n'); i >= 0 {
				start += i + 1
				line++
				skipping = false
			} else {
				start = n
			}
		}
		if !skipping {
			end := start // the end of the whole lines in buf
			if err != nil {
				end = n
			} else if i := bytes.LastIndexByte(buf[start:n], '\n'); i >= 0 {
				end = start + i + 1
			}
			if end > start {
				var stop bool
				if line, stop = sc.lines(buf[start:end], line, m, found); stop {
					return
				}
				start = end
			}
			if err == nil && n-start > sc.maxLine {
				head := buf[start : start+sc.maxLine]
				if m.Match(head) && !found(line, head) {
					return
				}
				start += sc.maxLine
				skipping = true
			}
		}
		if err != nil {
			return
		}
		read()
	}
}

// lines searches data, whole lines from line number line on, and returns
// the number of the line after them; stop is found's wish.
func (sc *Scanner) lines(data []byte, line int, m *Matcher, found func(int, []byte) bool) (next int, stop bool) {
	sc.next = sc.next[:0]
	for range m.needles {
		sc.next = append(sc.next, -1)
	}
	for pos := 0; pos < len(data); {
		p, k := sc.find(m, data, pos)
		if p < 0 {
			return line + bytes.Count(data[pos:], newline), false
		}
		ls := pos + bytes.LastIndexByte(data[pos:p], '\n') + 1
		le := len(data)
		if i := bytes.IndexByte(data[p:], '\n'); i >= 0 {
			le = p + i + 1
		}
		line += bytes.Count(data[pos:ls], newline)
		text := data[ls:le]
		if len(text) > sc.maxLine {
			text = text[:sc.maxLine]
		}
		ok := k >= 0 && m.sure && p+len(m.needles[k].b) <= ls+len(text)
		if (ok || m.Match(text)) && !found(line, text) {
			return line, true
		}
		line++
		pos = le
	}
	return line, false
}

var newline = []byte{'\n'}

// find returns the first position from pos on where a needle starts, and
// which needle; (pos, -1) when m has none, since then any line may match;
// -1 when no needle is left in data.
func (sc *Scanner) find(m *Matcher, data []byte, pos int) (at, which int) {
	if len(m.needles) == 0 {
		return pos, -1
	}
	at, which = -1, -1
	for i := range m.needles {
		if sc.next[i] < pos { // not looked for past pos yet
			if j := m.needles[i].f.index(data[pos:]); j >= 0 {
				sc.next[i] = pos + j
			} else {
				sc.next[i] = math.MaxInt
			}
		}
		if p := sc.next[i]; p != math.MaxInt && (at < 0 || p < at) {
			at, which = p, i
		}
	}
	return at, which
}
