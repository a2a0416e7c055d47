package history

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/visible"
)

// edit is one line of a line diff: kept (' '), removed ('-') or added ('+').
type edit struct {
	kind byte
	line string
}

// maxEdits bounds the search for the shortest edit script. Its trace
// grows as the square of the edits, its time as the lines times the
// edits; past the bound, the lines between the texts' common head and
// tail are told as removed and added whole: a true diff, if not the
// shortest, in bounded time and memory however big the notes.
const maxEdits = 1000

// lineDiff is the edit script from a to b: the common head and tail kept,
// the middle by Myers' O(ND) search (or whole, past maxEdits).
func lineDiff(a, b []string) []edit {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	out := make([]edit, 0, len(a)+len(b)-head-tail)
	for _, l := range a[:head] {
		out = append(out, edit{' ', l})
	}
	midA, midB := a[head:len(a)-tail], b[head:len(b)-tail]
	if mid, ok := myers(midA, midB, maxEdits); ok {
		out = append(out, mid...)
	} else {
		out = append(out, whole(midA, midB)...)
	}
	for _, l := range a[len(a)-tail:] {
		out = append(out, edit{' ', l})
	}
	return out
}

// whole is a removed whole and b added whole.
func whole(a, b []string) []edit {
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, edit{'-', l})
	}
	for _, l := range b {
		out = append(out, edit{'+', l})
	}
	return out
}

// myers is Myers' shortest edit script, if it takes at most limit edits:
// for each number of edits d, the furthest point reached on each diagonal
// k = x - y is kept (trace[d][k+d]), and the path is walked back from the end.
func myers(a, b []string, limit int) ([]edit, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return whole(a, b), true
	}
	most := min(n+m, limit)
	off := most + 1
	v := make([]int, 2*most+3)
	var trace [][]int
	for d := 0; d <= most; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: a line of b added
			} else {
				x = v[off+k-1] + 1 // right: a line of a removed
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, slices.Clone(v[off-d:off+d+1]))
				return walkBack(a, b, trace), true
			}
		}
		trace = append(trace, slices.Clone(v[off-d:off+d+1]))
	}
	return nil, false
}

// walkBack turns myers' trace into the script, from the end to the start.
func walkBack(a, b []string, trace [][]int) []edit {
	var out []edit
	x, y := len(a), len(b)
	for d := len(trace) - 1; d > 0; d-- {
		prev := func(k int) int { return trace[d-1][k+d-1] }
		k := x - y
		var pk int
		if k == -d || (k != d && prev(k-1) < prev(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			out = append(out, edit{' ', a[x]})
		}
		if x == px {
			y--
			out = append(out, edit{'+', b[y]})
		} else {
			x--
			out = append(out, edit{'-', a[x]})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		out = append(out, edit{' ', a[x]})
	}
	slices.Reverse(out)
	return out
}

// splitLines splits text after each newline; a last line without one is
// marked as such, as diff(1) does.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Unified is a unified diff of two texts with context lines around each
// change; "" when they are equal.
func Unified(before, after, nameBefore, nameAfter string, context int) string {
	return unified(before, after, nameBefore, nameAfter, context, visible.Raw)
}

// unified is Unified with each line of the texts shown in mode m (the
// names as they are given). The lines are compared as they are, and
// escaped only when written, so two lines that differ never read as one
// unchanged line.
func unified(before, after, nameBefore, nameAfter string, context int, m visible.Mode) string {
	es := lineDiff(splitLines(before), splitLines(after))
	var b strings.Builder
	// aLine and bLine number the lines each edit starts at, 1-based.
	aLine, bLine := make([]int, len(es)+1), make([]int, len(es)+1)
	aLine[0], bLine[0] = 1, 1
	for i, e := range es {
		aLine[i+1], bLine[i+1] = aLine[i], bLine[i]
		if e.kind != '+' {
			aLine[i+1]++
		}
		if e.kind != '-' {
			bLine[i+1]++
		}
	}
	for i := 0; i < len(es); {
		if es[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		// extend the hunk while the next change is within 2*context kept lines
		for j := i; j < len(es); j++ {
			if es[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*context {
				break
			}
		}
		stop := min(end+context, len(es))
		if b.Len() == 0 {
			fmt.Fprintf(&b, "--- %s\n+++ %s\n", nameBefore, nameAfter)
		}
		aCount, bCount := 0, 0
		for _, e := range es[start:stop] {
			if e.kind != '+' {
				aCount++
			}
			if e.kind != '-' {
				bCount++
			}
		}
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(aLine[start], aCount), hunkRange(bLine[start], bCount))
		for _, e := range es[start:stop] {
			b.WriteByte(e.kind)
			b.WriteString(m.Escape(e.line))
			if !strings.HasSuffix(e.line, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return b.String()
}

// hunkRange spells a hunk's start and length as diff(1) does: an empty
// range starts on the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}
