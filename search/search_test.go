package search

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// hit is one line Scan found.
type hit struct {
	n    int
	text string
}

// reference is the search as the tool did it before blocks, line by line:
// a bufio.Reader of bufSize, a Peek of sniff bytes for a NUL, then each
// line read with ReadSlice, kept to its first maxLine bytes (a multiple
// of bufSize, as 1 MiB is of 64 KiB), matched on its own.
func reference(r io.Reader, match func([]byte) bool, bufSize, sniff, maxLine, limit int) []hit {
	br := bufio.NewReaderSize(r, bufSize)
	head, _ := br.Peek(sniff)
	if slices.Contains(head, 0) {
		return nil
	}
	var out []hit
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if len(buf)+len(chunk) <= maxLine {
				buf = append(buf, chunk...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if len(buf) > 0 && match(buf) {
			out = append(out, hit{n, string(buf)})
			if len(out) >= limit {
				return out
			}
		}
		if err != nil {
			return out
		}
	}
}

// scan is Scan with a Scanner of the given limits, collecting up to limit.
func scan(sc *Scanner, r io.Reader, m *Matcher, limit int) []hit {
	var out []hit
	sc.Scan(r, m, func(n int, line []byte) bool {
		out = append(out, hit{n, string(line)})
		return len(out) < limit
	})
	return out
}

func compile(t testing.TB, query string, regex bool) *Matcher {
	t.Helper()
	if !regex {
		return Literal(query)
	}
	re, err := regexp.Compile(query)
	if err != nil {
		t.Fatal(err)
	}
	return Regexp(re)
}

// chunkReader returns at most size bytes a Read: short reads, as a pipe
// or a slow disk gives them.
type chunkReader struct {
	data []byte
	size int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// same checks that Scan finds what the line-by-line reference finds, with
// the tool's limits and with tiny ones (so that blocks end mid-line and
// long lines are cut), whole reads and short ones.
func same(t *testing.T, query string, regex bool, text []byte) {
	t.Helper()
	m := compile(t, query, regex)
	limits := []int{1, 3, 1000}
	if len(text) > 64<<10 {
		limits = []int{2, 1000}
	}
	for _, limit := range limits {
		want := reference(bytes.NewReader(text), m.Match, 64<<10, SniffBytes, MaxLine, limit)
		if got := scan(NewScanner(), bytes.NewReader(text), m, limit); !slices.Equal(got, want) {
			t.Fatalf("%q (regex %v) limit %d in %q:\n got %v\nwant %v", query, regex, limit, trim(text), got, want)
		}
		if len(text) > 64<<10 {
			continue // tiny blocks and reads of a long note: slow, and no more cases
		}
		want = reference(bytes.NewReader(text), m.Match, 16, 16, 48, limit)
		for _, block := range []int{1, 7, 16, 100} {
			for _, size := range []int{1, 5, 1 << 20} {
				sc := &Scanner{sniff: 16, maxLine: 48, buf: make([]byte, block)}
				if got := scan(sc, &chunkReader{text, size}, m, limit); !slices.Equal(got, want) {
					t.Fatalf("%q (regex %v) limit %d, block %d, reads of %d in %q:\n got %v\nwant %v", query, regex, limit, block, size, trim(text), got, want)
				}
			}
		}
	}
}

func trim(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// The case-folding orbits: (?i)k matches the Kelvin sign and (?i)s the
// long s, so the needles of a case-insensitive literal must spell them.
func TestFoldKeepsKelvinAndLongS(t *testing.T) {
	text := "nothing here\nthe \u212Aiss of life\nKISS\nkiſs\nki\u017F\u017F me\nkis\n"
	for _, q := range []string{"(?i)kiss", "(?i)KISS", "(?i)k", "(?i)\u212A", "(?i)ss", "(?i)\u017F", "(?i)iss of", "(?i)kiss|life", "(?i)(kiss)"} {
		m := compile(t, q, true)
		re := regexp.MustCompile(q)
		var want []hit
		for i, l := range strings.SplitAfter(text, "\n") {
			if l != "" && re.MatchString(l) {
				want = append(want, hit{i + 1, l})
			}
		}
		if got := scan(NewScanner(), strings.NewReader(text), m, 100); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
		same(t, q, true, []byte(text))
	}
	// The needles of (?i)kiss spell both its k and its s each two ways.
	m := compile(t, "(?i)kiss", true)
	var spelt []string
	for _, n := range m.needles {
		spelt = append(spelt, string(n.b))
	}
	for _, want := range []string{"\u212Ai", "ſ"} {
		if !strings.Contains(strings.Join(spelt, ","), want) {
			t.Errorf("(?i)kiss needles %q lack %q", spelt, want)
		}
	}
}

// The needles each query gets: what narrows the search, and what must
// not (nothing, when a match need not hold any literal).
func TestNeedles(t *testing.T) {
	cases := []struct {
		query string
		want  string // needles, comma-separated, "~" before a lowered one
		sure  bool
	}{
		{"quorble", "quorble", true},
		{`\w+ quorble \d+`, " quorble ", false},
		{`vault \w+ing`, "vault ", false},
		{"(?i)vault", "~vault", true},
		{"(?i)lighthouse", "~lighthou", false},
		{"(?i)Straße", "~traße,~traẞe", false},
		{"(foo|bar)+baz", "baz", false},
		{"fooo|bar", "fooo,bar", false},
		{"a*", "", false},
		{"x?y?", "", false},
		{".", "", false},
		{"[ab]c", "[ab]c", false}, // the parser factors it to a class and a literal
		{"a\uFFFDbc", "bc", false},
		{"\uFFFD", "", false},
		{"^$", "", false},
		{"(?i)щука", "~ЩУ,~Щу,~щУ,~щу", false},
	}
	for _, c := range cases {
		m := compile(t, c.query, true)
		var got []string
		for _, n := range m.needles {
			s := string(n.b)
			if n.fold {
				s = "~" + s
			}
			got = append(got, s)
		}
		if c.query == "[ab]c" {
			if len(got) == 0 {
				t.Errorf("%s: no needles", c.query)
			}
		} else if strings.Join(got, ",") != c.want || m.sure != c.sure {
			t.Errorf("%s: needles %q sure %v, want %q sure %v", c.query, got, m.sure, c.want, c.sure)
		}
		same(t, c.query, true, []byte("quorble vault thing\nfoobaz barbaz\nlighthouse LIGHTHOUSE\nSTRASSE straße\nщука ЩУКА\n\n"))
	}
}

// The corner cases of lines and notes: each as the reference finds it.
func TestScanLikeLineByLine(t *testing.T) {
	long := strings.Repeat("x", MaxLine-3) + "needle" + strings.Repeat("y", MaxLine/2) + "\nneedle after\n"
	texts := []string{
		"",
		"needle",
		"needle\n",
		"\nneedle\n\n",
		"a\r\nneedle\r\nb\r\n",
		"no newline at the end: needle",
		"first\nsecond needle\nthird needle\nneedle needle needle\n",
		"bin\x00ary needle\n",
		strings.Repeat("a", SniffBytes) + "\x00 needle after the sniff\n",
		strings.Repeat("a", SniffBytes-1) + "\x00 needle in the sniff\n",
		"bad \xff\xfe utf-8 needle\n\xc3needle\n",
		long,
		strings.Repeat("needle\n", 500),
		strings.Repeat("z", MaxLine) + "\nneedle\n",
		strings.Repeat("z", MaxLine-1) + "needle\n",
	}
	queries := []struct {
		q     string
		regex bool
	}{
		{"needle", false}, {"needle\n", false}, {"e\nn", false}, {"\r", false},
		{"needle", true}, {"needle$", true}, {"(?m)needle$", true}, {"^needle", true},
		{"(?i)NEEDLE", true}, {`e\s+n`, true}, {`\n`, true}, {"(?s)e.n", true},
		{"\uFFFD", true}, {"\uFFFDneedle", true}, {"x*", true}, {`y\n`, true},
		{"(?i)needle after", true}, {"ne+dle|after", true},
	}
	for _, text := range texts {
		for i, q := range queries {
			if len(text) > 64<<10 && i%3 != 0 {
				continue // a third of the queries on the long notes: they are slow under -race
			}
			same(t, q.q, q.regex, []byte(text))
		}
	}
}

// lowered is b with A–Z made a–z, byte by byte: what a folding finder's
// text is taken to be.
func lowered(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lowerByte(c)
	}
	return out
}

func TestLower8(t *testing.T) {
	var src []byte
	for i := range 256 {
		src = append(src, byte(i), byte(255-i), 'A'+byte(i%26))
	}
	for off := 0; off+8 <= len(src); off++ {
		got := binary.LittleEndian.AppendUint64(nil, lower8(binary.LittleEndian.Uint64(src[off:])))
		if want := lowered(src[off : off+8]); !bytes.Equal(got, want) {
			t.Fatalf("lower8(%#x) = %#x, want %#x", src[off:off+8], got, want)
		}
	}
	if lowerByte('@') != '@' || lowerByte('[') != '[' || lowerByte('Z') != 'z' || lowerByte('A') != 'a' {
		t.Error("lowerByte is off at the edges of A–Z")
	}
}

// FuzzScan: for any query and note, Scan finds what the line-by-line
// reference finds.
func FuzzScan(f *testing.F) {
	seeds := []struct {
		q     string
		regex bool
		text  string
	}{
		{"needle", false, "a needle\nin a\nhaystack needle"},
		{"(?i)kiss", true, "\u212Aiss\nKIſS\nkiss\n"},
		{"(?i)s", true, "ſ\nS\n"},
		{`\w+ quorble \d+`, true, "x quorble 12\nquorble\n"},
		{"a\nb", false, "a\nb\n"},
		{"$", true, "x\n\ny"},
		{"\uFFFD", true, "\xff\n\xef\xbf\xbd\n"},
		{"(?i)é|ß", true, "É\nSS\nẞ\n"},
		{"colou?r", true, "color colour\ncolouur\n"},
	}
	for _, s := range seeds {
		f.Add(s.q, s.regex, []byte(s.text))
	}
	f.Fuzz(func(t *testing.T, q string, regex bool, text []byte) {
		if q == "" || len(text) > 4096 || len(q) > 64 {
			return
		}
		if regex {
			if _, err := regexp.Compile(q); err != nil {
				return
			}
		}
		same(t, q, regex, text)
	})
}

func ExampleScanner_Scan() {
	m := Regexp(regexp.MustCompile(`(?i)kiss`))
	note := "nothing\nthe \u212Aiss of life\nKISS\n"
	NewScanner().Scan(strings.NewReader(note), m, func(n int, line []byte) bool {
		fmt.Printf("%d: %s", n, line)
		return true
	})
	// Output:
	// 2: the Kiss of life
	// 3: KISS
}

// FuzzIndex: the rare-byte finder finds what bytes.Index finds, where the
// rare byte is rare and where it is everywhere; a folding finder what
// bytes.Index finds in the lowered text.
func FuzzIndex(f *testing.F) {
	f.Add([]byte("lighthouse"), []byte(strings.Repeat("morning evening ", 40)+"the lighthouse"))
	f.Add([]byte("ab"), []byte(strings.Repeat("a", 300)+"b"))
	f.Add([]byte("\x00\x01"), []byte("\x00\x00\x01\x01\x00\x01"))
	f.Add([]byte("quorble"), []byte(strings.Repeat("Morning QUERY ", 40)+"the QuOrBlE"))
	f.Add([]byte("k\xe2\x84\xaa"), []byte("K\xe2\x84\xaa kK\xe2\x84\xaa"))
	f.Fuzz(func(t *testing.T, needle, hay []byte) {
		for _, fold := range []bool{false, true} {
			nd := needle
			if fold {
				nd = lowered(needle)
			}
			fd := newFinder(nd, fold)
			for _, h := range [][]byte{hay, bytes.Repeat(hay, 20)} {
				text := h
				if fold {
					text = lowered(h)
				}
				if got, want := fd.index(h), bytes.Index(text, nd); got != want {
					t.Fatalf("index(%q, %q), fold %v = %d, want %d", h, nd, fold, got, want)
				}
				if len(nd) >= 2 {
					for from := range min(len(h), 9) {
						want := bytes.Index(text[from:], nd)
						if want >= 0 {
							want += from
						}
						if got := fd.pairIndex(h, from); got != want {
							t.Fatalf("pairIndex(%q, %q, %d), fold %v = %d, want %d", h, nd, from, fold, got, want)
						}
					}
				}
			}
		}
	})
}
