// Package jsonstr writes a string as a quoted JSON string without
// reflection, escaped exactly as one of two references escapes it: where
// vaultgate writes JSON by hand for speed (the audit line, the hook's
// request to its judge), the bytes must stay those the reference writes,
// since a hash chain or a byte-for-byte test holds them to it.
package jsonstr

import "unicode/utf8"

// Mode is the reference a string is escaped like.
type Mode uint8

const (
	// AsSlog escapes as log/slog's JSON handler: quote and backslash,
	// \n \r \t, other control bytes as \u00XX, HTML characters as they are.
	AsSlog Mode = iota
	// AsMarshal escapes as encoding/json's Marshal: as AsSlog, and \b \f
	// by name, and <, > and & as \u escapes.
	AsMarshal
)

const hexDigits = "0123456789abcdef"

// Append appends s to dst as a quoted JSON string, escaped as m's
// reference escapes it. In both, a byte that is not UTF-8 is \ufffd, and
// U+2028 and U+2029 are \u escapes.
func Append(dst []byte, s string, m Mode) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (m != AsMarshal || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b' && m == AsMarshal:
				dst = append(dst, '\\', 'b')
			case c == '\f' && m == AsMarshal:
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
