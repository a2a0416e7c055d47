package visible

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is what an agent may put in a note's name or content to steer
// the terminal of the person who reads it.
var hostile = func() []string {
	h := []string{
		"\x1b[2J",                    // erase the screen
		"\x1b[2K\x1b[1G+all good",    // erase the line, then write over it
		"\x1b]52;c;cm0gLXJmIH4K\x07", // OSC 52: set the clipboard
		"\x1b]52;c;cm0gLXJmIH4K\x1b\\",
		"\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", // a hyperlink
		"\x1bPq#0;2;0;0;0#0~~\x1b\\",                   // DCS (sixel)
		"\x1b_Gf=100;AAAA\x1b\\",                       // APC (kitty graphics)
		"\x1b^private\x1b\\",                           // PM
		"\x1bXsos\x1b\\",                               // SOS
		"\x1b[8mhidden\x1b[0m",                         // concealed text
		"\u009b2J", "\u009d52;c;eA==\u009c", "\u0090q\u009c", "\u009f", "\u0085next line",
		"\x9b2J", "\x9d52;c;eA==\x9c", // C1 as raw bytes: not UTF-8
		"invoice\u202efdp.exe", "a\u202ab\u202bc\u202cd\u202de", "\u2066x\u2067y\u2068z\u2069",
		"lrm\u200erlm\u200falm\u061c", "line\u2028para\u2029",
		"all good\rdeleted everything", "crlf\r\n",
		"bad\xffutf8\xc3", "\xed\xa0\x80surrogate", "\xc0\xafoverlong", "cut\xe2\x80",
		"nul\x00del\x7f",
	}
	for c := range 0x20 {
		h = append(h, fmt.Sprintf("c0 %c end", c))
	}
	for r := rune(0x80); r <= 0x9f; r++ {
		h = append(h, fmt.Sprintf("c1 %c end", r), "raw c1 "+string([]byte{byte(r)})+" end")
	}
	return h
}()

// steers reports the first character of s that a terminal obeys or that
// hides text, other than the newline and tab keep allows.
func steers(s string, keep string) (string, bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("byte %#x", s[i]), true
		case (r < 0x20 || r == 0x7f) && !strings.ContainsRune(keep, r), r >= 0x80 && r <= 0x9f, special(r):
			return fmt.Sprintf("%U", r), true
		}
		i += n
	}
	return "", false
}

// TestEscapeHostile: every hostile text, in every mode, comes out with no
// character that steers a terminal, and with a visible trace of each one
// that was there.
func TestEscapeHostile(t *testing.T) {
	for _, in := range hostile {
		for _, c := range []struct {
			m    Mode
			keep string
		}{{Line, ""}, {Block, "\n\t"}, {JSON, "\n\t"}} {
			got := c.m.Escape(in)
			if what, ok := steers(got, c.keep); ok {
				t.Errorf("mode %d: Escape(%q) = %q still holds %s", c.m, in, got, what)
			}
			if _, there := steers(in, c.keep); there && !strings.Contains(got, `\`) {
				t.Errorf("mode %d: Escape(%q) = %q shows nothing of what was there", c.m, in, got)
			}
		}
		if Raw.Escape(in) != in {
			t.Errorf("Raw changed %q", in)
		}
	}
}

func TestEscape(t *testing.T) {
	for _, c := range []struct {
		m        Mode
		in, want string
	}{
		{Line, "notes/plain.md", "notes/plain.md"},
		{Line, "мета/бобер/💬 чаты.md", "мета/бобер/💬 чаты.md"},
		{Line, "\x1b[32mallow\x1b[0m", `\x1b[32mallow\x1b[0m`},
		{Line, "deny\x1b[2K\x1b[1Gallow", `deny\x1b[2K\x1b[1Gallow`},
		{Line, "\x1b]52;c;eA==\x07", `\x1b]52;c;eA==\x07`},
		{Line, "\x1bPq\x1b\\", `\x1bPq\x1b\`},
		{Line, "a\nb\tc\rd", `a\nb\tc\rd`},
		{Line, "nul\x00del\x7f", `nul\x00del\x7f`},
		{Line, "c1\u009b31m", `c1\u009b31m`},
		{Line, "raw c1\x9b31m", `raw c1\x9b31m`},
		{Line, "\u202egnp.exe", `\u202egnp.exe`},
		{Line, "a\u202ab\u202bc\u202cd\u202de", `a\u202ab\u202bc\u202cd\u202de`},
		{Line, "\u2066x\u2067y\u2068z\u2069", `\u2066x\u2067y\u2068z\u2069`},
		{Line, "lrm\u200erlm\u200falm\u061c", `lrm\u200erlm\u200falm\u061c`},
		{Line, "line\u2028sep", `line\u2028sep`},
		{Line, "bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{Line, `back\slash $\alpha$`, `back\slash $\alpha$`},
		{Line, "👨\u200d👩\u200d👧", "👨\u200d👩\u200d👧"}, // a joiner inside an emoji stays
		{Line, "", ""},
		{Block, "one\n\ttwo\n", "one\n\ttwo\n"},
		{Block, "ok\rgone\n", "ok\\rgone\n"},
		{Block, "crlf\r\n", "crlf\\r\n"},
		{Block, "\x1b[2Jx\u202e\n\x00", "\\x1b[2Jx\\u202e\n\\x00"},
		{JSON, `{"p":"\u001b[2J ` + "\x7f\u009b\u202e\"}\n", `{"p":"\u001b[2J \u007f\u009b\u202e"}` + "\n"},
		{JSON, "\xff", `\ufffd`},
		{Raw, "\x1b[2J\r", "\x1b[2J\r"},
	} {
		if got := c.m.Escape(c.in); got != c.want {
			t.Errorf("mode %d: Escape(%q) = %q, want %q", c.m, c.in, got, c.want)
		}
	}
}

// TestJSONStaysJSON: JSON from encoding/json, escaped, decodes to the same
// value.
func TestJSONStaysJSON(t *testing.T) {
	v := map[string]any{"path": strings.Join(hostile, "|"), "n": 1, "list": []string{"\x7f", "\u202e", "\u0085"}}
	b, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	got := JSON.Escape(string(b))
	if what, ok := steers(got, "\n\t"); ok {
		t.Fatalf("JSON escape still holds %s", what)
	}
	var back, want map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("no longer JSON: %v\n%s", err, got)
	}
	json.Unmarshal(b, &want)
	if fmt.Sprint(back) != fmt.Sprint(want) {
		t.Errorf("the value changed:\n got %v\nwant %v", back, want)
	}
}

func TestEscapeAllocatesNothingForPlainText(t *testing.T) {
	for _, m := range []Mode{Line, Block, JSON, Raw} {
		if n := testing.AllocsPerRun(100, func() { m.Escape("notes/plain/мета.md\tx") }); n != 0 && m != Line {
			t.Errorf("mode %d: Escape of plain text allocates %v times", m, n)
		}
		if n := testing.AllocsPerRun(100, func() { m.Escape("notes/plain/мета.md") }); n != 0 {
			t.Errorf("mode %d: Escape of plain text allocates %v times", m, n)
		}
	}
}

func TestUnless(t *testing.T) {
	if Line.Unless(false) != Line || Block.Unless(true) != Raw {
		t.Error("Unless")
	}
}

func TestPaint(t *testing.T) {
	if got := Paint("1;31", "DENY"); got != "\x1b[1;31mDENY\x1b[0m" {
		t.Errorf("Paint = %q", got)
	}
	for _, sgr := range []string{"", "31m\x1b]52;c;eA==\x07", "1;31x"} {
		if got := Paint(sgr, "x"); got != "x" {
			t.Errorf("Paint(%q) = %q, want it unpainted", sgr, got)
		}
	}
}

func BenchmarkEscape(b *testing.B) {
	for _, s := range []string{"notes/2026/03/daily.md", "\x1b[32mallow\x1b[0m \u202egnp.md"} {
		b.Run(fmt.Sprintf("%.8q", s), func(b *testing.B) {
			for b.Loop() {
				Line.Escape(s)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := Writer{W: &b, Mode: Block}
	n, err := fmt.Fprintf(w, "vaultgate: start-up: kept %s\n", "notes/\x1b[2Jx\u202e")
	if err != nil || n != len("vaultgate: start-up: kept notes/\x1b[2Jx\u202e\n") {
		t.Errorf("Write = %d, %v", n, err)
	}
	if got := b.String(); got != "vaultgate: start-up: kept notes/\\x1b[2Jx\\u202e\n" {
		t.Errorf("wrote %q", got)
	}
}
