package search

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
)

// finder looks for one needle by its rarest byte: bytes.Index goes by the
// first byte, and in notes the first byte of a word ("l" of "lighthouse",
// the space before it) is common, which slows it down several times.
//
// A folding finder's needle is ASCII-lowered, and it finds where the
// ASCII-lowered text would hold it, without lowering the text: its rare
// byte is looked for in both cases and a candidate compared lowered.
type finder struct {
	b           []byte
	fold        bool
	rare, rare2 int // the offsets in b of its rarest byte and the next
}

func newFinder(b []byte, fold bool) finder {
	f := finder{b: b, fold: fold}
	for i, c := range b {
		if byteRank[c] < byteRank[b[f.rare]] {
			f.rare = i
		}
	}
	f.rare2 = -1
	for i, c := range b {
		if i != f.rare && (f.rare2 < 0 || byteRank[c] < byteRank[b[f.rare2]]) {
			f.rare2 = i
		}
	}
	return f
}

// index is bytes.Index(hay, f.b), of the ASCII-lowered hay if f.fold.
func (f *finder) index(hay []byte) int {
	n := len(f.b)
	if !f.fold && n <= 1 || len(hay) < n || n == 0 {
		return bytes.Index(hay, f.b)
	}
	c, off := f.b[f.rare], f.rare
	upper := c // the rare byte's other case, if it has one and f folds
	if f.fold && 'a' <= c && c <= 'z' {
		upper = c - ('a' - 'A')
	}
	last := len(hay) - n // the last start a needle fits at
	// The next start, from i on, where the rare byte is in place in
	// either case; past i, looked for again.
	nextLow, nextUp := -1, -1
	if upper == c {
		nextUp = math.MaxInt // never looked for
	}
	misses := 0
	for i := 0; i <= last; {
		if nextLow < i {
			nextLow = nextByte(hay, i, off, last, c)
		}
		if nextUp < i {
			nextUp = nextByte(hay, i, off, last, upper)
		}
		at := min(nextLow, nextUp)
		if at == math.MaxInt {
			return -1
		}
		if f.equal(hay[at : at+n]) {
			return at
		}
		i = at + 1
		// The rare byte is not rare here (one in fewer than 64 bytes):
		// look for it and the next rarest together.
		if misses++; misses > 8 && misses > i/64 && n >= 2 {
			return f.pairIndex(hay, i)
		}
	}
	return -1
}

// nextByte is the first start from i on, up to last, where c is at
// offset off; math.MaxInt if none.
func nextByte(hay []byte, i, off, last int, c byte) int {
	if j := bytes.IndexByte(hay[i+off:last+off+1], c); j >= 0 {
		return i + j
	}
	return math.MaxInt
}

// equal says whether h, as long as the needle, is the needle (lowered
// first, if f folds).
func (f *finder) equal(h []byte) bool {
	if !f.fold {
		return bytes.Equal(h, f.b)
	}
	for i, c := range f.b {
		if lowerByte(h[i]) != c {
			return false
		}
	}
	return true
}

// pairIndex is index from position i on, going eight positions at a
// time: those where both rare bytes are in place (a SWAR test, on the
// eight bytes lowered if f folds, that may let through a few that are
// not) are compared with the needle.
func (f *finder) pairIndex(hay []byte, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	n, o1, o2 := len(f.b), f.rare, f.rare2
	c1, c2 := f.b[o1], f.b[o2]
	r1, r2 := uint64(c1)*lo, uint64(c2)*lo
	last := len(hay) - n
	for ; i+7 <= last; i += 8 {
		w1, w2 := binary.LittleEndian.Uint64(hay[i+o1:]), binary.LittleEndian.Uint64(hay[i+o2:])
		if f.fold {
			w1, w2 = lower8(w1), lower8(w2)
		}
		x1, x2 := w1^r1, w2^r2 // a zero byte where c1, c2 are
		for m := (x1 - lo) &^ x1 & (x2 - lo) &^ x2 & hi; m != 0; m &= m - 1 {
			at := i + bits.TrailingZeros64(m)/8
			if f.equal(hay[at : at+n]) {
				return at
			}
		}
	}
	for ; i <= last; i++ {
		if f.equal(hay[i : i+n]) {
			return i
		}
	}
	return -1
}

// byteRank is how common a byte is in notes, roughly (higher: more
// common): English letters by their frequency, then the rest.
var byteRank = func() (r [256]uint8) {
	for c := range 256 {
		switch {
		case c < 0x20 || c == 0x7f:
			r[c] = 5
		case c >= 0xc0: // UTF-8 lead bytes; Cyrillic's are everywhere in Russian notes
			r[c] = 30
		case c >= 0x80:
			r[c] = 60
		case 'A' <= c && c <= 'Z':
			r[c] = 50
		case '0' <= c && c <= '9':
			r[c] = 70
		default: // punctuation
			r[c] = 40
		}
	}
	r[0xd0], r[0xd1] = 120, 120
	for i, c := range []byte("etaoinsrhldcumfpgwybvkxjqz") {
		r[c] = uint8(240 - 7*i)
	}
	r[' '], r['\n'], r['.'], r[','], r['-'], r['#'] = 250, 150, 110, 110, 100, 80
	return r
}()
