package history

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestUnified is before → after → the diff, as diff -u prints it (less
// its time stamps).
func TestUnified(t *testing.T) {
	cases := []struct{ before, after, want string }{
		{"a\n", "a\n", ""},
		{"", "new\n", "--- x\n+++ y\n@@ -0,0 +1 @@\n+new\n"},
		{"old\n", "", "--- x\n+++ y\n@@ -1 +0,0 @@\n-old\n"},
		{"a\nb\nc\n", "a\nB\nc\n", "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"a\nb", "a\nc", "--- x\n+++ y\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12\n",
			"--- x\n+++ y\n@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+ELEVEN\n 12\n",
		},
		{
			"1\n2\n3\n4\n5\n6\n7\n",
			"1\n2x\n3\n4\n5\n6x\n7\n",
			"--- x\n+++ y\n@@ -1,7 +1,7 @@\n 1\n-2\n+2x\n 3\n 4\n 5\n-6\n+6x\n 7\n",
		},
		{"строка\n", "строчка\n", "--- x\n+++ y\n@@ -1 +1 @@\n-строка\n+строчка\n"},
	}
	for _, c := range cases {
		if got := Unified(c.before, c.after, "x", "y", 3); got != c.want {
			t.Errorf("%q -> %q:\ngot\n%s\nwant\n%s", c.before, c.after, got, c.want)
		}
	}
}

// TestLineDiffIsAnEditScript: for random texts, the kept and removed lines
// are the old text, the kept and added ones the new, and no script is
// longer than deleting all and adding all.
func TestLineDiffIsAnEditScript(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n"}
	gen := func() []string {
		out := make([]string, r.IntN(12))
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	for range 2000 {
		a, b := gen(), gen()
		gotA, gotB, edits := playScript(lineDiff(a, b))
		if strings.Join(gotA, "") != strings.Join(a, "") || strings.Join(gotB, "") != strings.Join(b, "") {
			t.Fatalf("%q -> %q: the script gives %q -> %q", a, b, gotA, gotB)
		}
		if edits > len(a)+len(b) || edits != len(a)+len(b)-2*lcs(a, b) {
			t.Fatalf("%q -> %q: %d edits, want the shortest, %d", a, b, edits, len(a)+len(b)-2*lcs(a, b))
		}
	}
}

// playScript reads an edit script back: the text it goes from (kept and
// removed lines), the text it goes to (kept and added), and its edits.
func playScript(es []edit) (from, to []string, edits int) {
	for _, e := range es {
		if e.kind != '+' {
			from = append(from, e.line)
		}
		if e.kind != '-' {
			to = append(to, e.line)
		}
		if e.kind != ' ' {
			edits++
		}
	}
	return from, to, edits
}

// lcs is the length of the longest common subsequence, by the table.
func lcs(a, b []string) int {
	t := make([][]int, len(a)+1)
	for i := range t {
		t[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t[0][0]
}

// TestLineDiffOfBigNotes: a note of hundreds of thousands of lines made,
// emptied, edited in three places, or rewritten whole: each script is a
// true edit script, the few edits are found as few, and a rewrite past
// maxEdits is told as the old middle removed and the new added (before
// the bound, such a diff took memory as the square of the lines).
func TestLineDiffOfBigNotes(t *testing.T) {
	lines := func(n int, f string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf(f, i)
		}
		return out
	}
	big := lines(200_000, "line %d\n")
	edited := slices.Clone(big)
	for _, i := range []int{10, 100_000, 199_990} {
		edited[i] = "changed\n"
	}
	cases := []struct {
		name  string
		a, b  []string
		edits int
	}{
		{"made", nil, big, len(big)},
		{"emptied", big, nil, len(big)},
		{"edited in three places", big, edited, 6},
		{"rewritten whole", big, lines(200_000, "other %d\n"), 400_000},
	}
	for _, c := range cases {
		gotA, gotB, edits := playScript(lineDiff(c.a, c.b))
		if !slices.Equal(gotA, c.a) || !slices.Equal(gotB, c.b) {
			t.Errorf("%s: not an edit script from the one to the other", c.name)
		}
		if edits != c.edits {
			t.Errorf("%s: %d edits, want %d", c.name, edits, c.edits)
		}
	}
}
