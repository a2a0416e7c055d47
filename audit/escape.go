package audit

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// EscapeControl makes every character that could steer a terminal visible:
// C0 controls and DEL as \x1b, \t, \n, \r (so an ANSI escape in a file name
// cannot repaint a deny as an allow, nor a newline forge a second line), C1
// controls as \u009b, the bidi embeddings, overrides and isolates
// (U+202A–U+202E, U+2066–U+2069) and the other invisible direction marks and
// line separators (U+200E, U+200F, U+061C, U+2028, U+2029) as \u202e, and
// bytes that are not UTF-8 as \xff. Everything else, backslashes included,
// is left as it is. Text with nothing to escape comes back unchanged,
// without an allocation.
func EscapeControl(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || needsEscape(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c < 0x20 || c == 0x7f:
				b.WriteString(`\x`)
				b.WriteByte(hexDigit[c>>4])
				b.WriteByte(hexDigit[c&0xf])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigit[c>>4])
			b.WriteByte(hexDigit[c&0xf])
		case needsEscape(r):
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)))
			b.WriteString(h)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

const hexDigit = "0123456789abcdef"

func needsEscape(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1, CSI (U+009B) among them
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}
