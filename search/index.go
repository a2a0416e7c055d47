package search

import "bytes"

// finder looks for one needle by its rarest byte: bytes.Index goes by the
// first byte, and in notes the first byte of a word ("l" of "lighthouse",
// the space before it) is common, which slows it down several times.
type finder struct {
	b    []byte
	rare int // the offset in b of its rarest byte
}

func newFinder(b []byte) finder {
	f := finder{b: b}
	for i, c := range b {
		if byteRank[c] < byteRank[b[f.rare]] {
			f.rare = i
		}
	}
	return f
}

// index is bytes.Index(hay, f.b).
func (f *finder) index(hay []byte) int {
	n := len(f.b)
	if n <= 1 || len(hay) < n {
		return bytes.Index(hay, f.b)
	}
	c, off := f.b[f.rare], f.rare
	last := len(hay) - n // the last start a needle fits at
	misses := 0
	for i := 0; i <= last; {
		j := bytes.IndexByte(hay[i+off:last+off+1], c)
		if j < 0 {
			return -1
		}
		at := i + j
		if bytes.Equal(hay[at:at+n], f.b) {
			return at
		}
		i = at + 1
		// The rare byte is not rare here: let bytes.Index go on.
		if misses++; misses > 8 && misses > i/16 {
			if k := bytes.Index(hay[i:], f.b); k >= 0 {
				return i + k
			}
			return -1
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
