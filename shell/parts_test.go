package shell

import (
	"testing"
)

func TestSedUnsafe(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"s/a/b/", ""},
		{"s/a/b/g;s|c|d|2", ""},
		{"1,5p", ""},
		{"/x/,/y/d", ""},
		{"$!N;P;D", ""},
		{"y/abc/xyz/", ""},
		{"a text; w x", ""},
		{":a;N;ba", ""},
		{"w out", "w"},
		{"/x/{w out\n}", "w"},
		{"s/a/b/w out", "s///w"},
		{"s/a/b/e", "s///e"},
		{"1e rm x", "e"},
		{"r /etc/passwd", "r"},
		{"R f", "R"},
		{"W f", "W"},
		{"s/a/b", "(unparsed)"},
		{"k", "(unparsed)"},
		{`s/a\/b/c/w x`, "s///w"},
	} {
		if got := sedUnsafe(c.script); got != c.want {
			t.Errorf("sedUnsafe(%q) = %q, want %q", c.script, got, c.want)
		}
	}
}

func TestDecodeANSI(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`rm`, "rm", true},
		{`\x72m`, "rm", true},
		{`\162m`, "rm", true},
		{`\u0072m`, "rm", true},
		{`a\nb`, "a\nb", true},
		{`\cA`, "", false},
		{`\x`, "", false},
		{`\0`, "", false},
	} {
		got, ok := decodeANSI(c.in)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("decodeANSI(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestBraceSequence(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want int
		ok   bool
	}{
		{[]string{"1", "3"}, 3, true},
		{[]string{"3", "1"}, 3, true},
		{[]string{"a", "e"}, 5, true},
		{[]string{"1", "10", "3"}, 4, true},
		{[]string{"1", "100000"}, 0, false}, // past the cap: the word is unknown
		{[]string{"x", "yy"}, 0, false},
		{[]string{"1", "5", "0"}, 0, false},
	} {
		got, ok := braceSequence(c.in)
		if ok != c.ok || len(got) != c.want {
			t.Errorf("braceSequence(%v) = %v, %v; want %d values, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestSplitValue(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"a", 1},
		{"a b", 2},
		{" a b ", 4}, // empty edges keep neighbours apart
		{"a\tb\nc", 3},
	} {
		if got := splitValue(c.in); len(got) != c.want {
			t.Errorf("splitValue(%q) = %d fields, want %d", c.in, len(got), c.want)
		}
	}
}

func TestGlobIndex(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"a.md", -1},
		{"*.md", 0},
		{"notes/a?", 7},
		{"[", -1}, // the test command, not a bracket expression
		{"x[ab]", 1},
	} {
		if got := globIndex(c.in); got != c.want {
			t.Errorf("globIndex(%q) = %d, want %d", c.in, got, c.want)
		}
		if got := unescapeLit(c.in).meta; got != c.want {
			t.Errorf("unescapeLit(%q).meta = %d, want %d", c.in, got, c.want)
		}
	}
	if f := unescapeLit(`a\*b`); f.meta != -1 || f.s != "a*b" {
		t.Errorf(`unescapeLit("a\*b") = %+v, want a literal a*b`, f)
	}
}

func TestJoinMakesDifferencesUnknown(t *testing.T) {
	a := newAnalyzer(Options{Vault: "/v", Cwd: "/v", Stat: lstat, MaxDepth: 5})
	x := a.initialState()
	x.setVar("same", literalValue("s"))
	x.setVar("diff", literalValue("a"))
	y := x.clone()
	y.setVar("diff", literalValue("b"))
	y.setVar("only", literalValue("c"))
	y.cwd = "/v/notes"
	y.fds[3] = fdBind{kind: fdFile, path: "/v/f"}
	j := join(x, y)
	if v := j.vars["same"]; !v.known || len(v.alts) != 1 {
		t.Errorf("same: %+v", v)
	}
	if v := j.vars["diff"]; !v.known || len(v.alts) != 2 {
		t.Errorf("diff should hold both values: %+v", v)
	}
	if v := j.vars["only"]; v.known {
		t.Errorf("a variable one branch leaves alone comes from the environment: %+v", v)
	}
	if j.cwdKnown {
		t.Error("cwd differs: it must be unknown")
	}
	if j.fds[3].kind != fdUnknown {
		t.Errorf("fd 3 differs: %+v", j.fds[3])
	}
}
