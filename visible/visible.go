// Package visible is the one escape of what a person reads from
// vaultgate's command line. Note names and contents, the agent's
// arguments, session ids, reasons and errors are chosen by the agent (or
// come from the vault), and a terminal obeys what is in them: an escape
// sequence repaints or erases a line, OSC 52 sets the clipboard, a
// carriage return overwrites what was printed, a bidi override reorders
// what is shown. Every command prints such text through [Mode.Escape],
// which makes each of those characters visible as an escape, so the person
// sees that something was there and what.
//
// It is also the only package that writes a terminal control itself: the
// colours the CLI paints ([Paint]).
package visible

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Mode is how text is shown: which characters pass as they are and how the
// others are spelled. Every mode but [Raw] escapes every C0 control (but
// newline and tab where it keeps lines), DEL, every C1 control (U+0080–
// U+009F, as a rune, and as a raw byte of text that is not UTF-8), the bidi
// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the
// invisible direction marks (U+200E, U+200F, U+061C), the line and
// paragraph separators (U+2028, U+2029), and every byte that is not UTF-8.
// An escape sequence (CSI, OSC — OSC 52 among them —, DCS, APC, …) is
// neutralised by its introducer, ESC or the C1 control, being escaped: what
// follows it is printable and printed as it is.
type Mode uint8

const (
	// Line is text that stays on one line: a name, a field of a table, a
	// reason. Newline and tab are escaped too (\n, \t), so a name can't
	// forge a second line or a column.
	Line Mode = iota
	// Block is text of many lines, such as a file's lines in a diff or an
	// error of several lines: newline and tab are kept, everything else
	// is escaped as in Line (a carriage return, lone or before a newline,
	// is \r).
	Block
	// JSON is JSON text as encoding/json writes it, which escapes C0
	// controls inside strings but lets C1 controls, DEL and bidi controls
	// through: each of those becomes a \u escape, so the text stays valid
	// JSON; newline and tab (whitespace between tokens) are kept. A byte
	// that is not UTF-8, which encoding/json never writes, is \ufffd.
	JSON
	// Raw is the text as it is: for a person who asked for the bytes
	// (--raw).
	Raw
)

// Unless is m, or Raw when raw: a command's --raw.
func (m Mode) Unless(raw bool) Mode {
	if raw {
		return Raw
	}
	return m
}

// Escape is s as the person may be shown it in mode m: each character that
// could steer a terminal or hide text spelled as an escape. Line and
// Block spell a C0 control or DEL as \x1b (\t, \n, \r for those three), a
// byte that is not UTF-8 as \xff, and a C1, bidi or separator rune as
// \u202e; JSON spells every one as a \u escape. Everything else, a
// backslash included, is left as it is (a note's LaTeX reads as written):
// text that spells an escape itself reads the same as the character it
// names, which can make a harmless name look suspect but never hides a
// control. Text with nothing to escape comes back unchanged, without an
// allocation.
func (m Mode) Escape(s string) string {
	if m == Raw {
		return s
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if isControl(c) && !m.keeps(c) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || special(r) {
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
			case !isControl(c) || m.keeps(c):
				b.WriteByte(c)
			case m == JSON:
				writeU(&b, rune(c))
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			default:
				writeX(&b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1 && m == JSON:
			b.WriteString(`\ufffd`)
		case r == utf8.RuneError && n == 1:
			writeX(&b, c)
		case special(r):
			writeU(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// keeps reports whether m lets the control c through: newline and tab,
// except on one line.
func (m Mode) keeps(c byte) bool {
	return m != Line && (c == '\n' || c == '\t')
}

// isControl reports whether an ASCII byte is a C0 control or DEL.
func isControl(c byte) bool {
	return c < ' ' || c == 0x7f
}

// special reports whether a rune above ASCII is escaped: a C1 control, a
// bidi control or direction mark, or a line or paragraph separator.
func special(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1, CSI (U+009B) and OSC (U+009D) among them
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

const hexDigit = "0123456789abcdef"

func writeX(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigit[c>>4])
	b.WriteByte(hexDigit[c&0xf])
}

func writeU(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	h := strconv.FormatInt(int64(r), 16)
	b.WriteString(strings.Repeat("0", 4-len(h)))
	b.WriteString(h)
}

// Writer writes to W what is written to it, through W's mode: for a
// stream of messages each written whole by one Write (as fmt.Fprintf and a
// log.Logger write them), such as what a server says on stderr while it
// starts and runs. Each Write is escaped on its own, so a character split
// across two writes shows as its bytes.
type Writer struct {
	W    io.Writer
	Mode Mode
}

// Write writes p, escaped, to w.W, and says all of p was written.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, w.Mode.Escape(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Paint is s coloured for a terminal with the SGR parameters sgr ("1;31":
// bold red), and reset after: the only terminal control vaultgate writes.
// s must be text already escaped; sgr is the CLI's own, and anything but
// digits and semicolons in it leaves s unpainted.
func Paint(sgr, s string) string {
	if sgr == "" || strings.Trim(sgr, "0123456789;") != "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}
