package history

import (
	"fmt"
	"strings"
)

// edit is one line of a line diff: kept (' '), removed ('-') or added ('+').
type edit struct {
	kind byte
	line string
}

// lineDiff is Myers' O(ND) shortest edit script between two line lists:
// for each number of edits d, the furthest point reached on each diagonal
// k = x - y is kept, and the path is walked back from the end.
func lineDiff(a, b []string) []edit {
	n, m := len(a), len(b)
	max := n + m
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	done := false
	for d := 0; d <= max && !done; d++ {
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
				done = true
				break
			}
		}
		trace = append(trace, append([]int(nil), v...))
	}
	var out []edit
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1]
		k := x - y
		var pk int
		if k == -d || (k != d && prev[off+k-1] < prev[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev[off+pk]
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
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
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
			b.WriteString(e.line)
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
