package search

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

const (
	// maxNeedles bounds the needles of one query: each is one more pass
	// over a block.
	maxNeedles = 8
	// maxFoldNeedles bounds the spellings of a case-insensitive literal.
	maxFoldNeedles = 4
	// maxFoldRunes bounds a case-insensitive needle: one this long is as
	// rare as a longer one, and a long query costs no more to plan.
	maxFoldRunes = 32
)

// Matcher is a compiled query: what a line must match (Match), and the
// needles, one of which every matching line holds.
type Matcher struct {
	re  *regexp.Regexp // nil for a literal query
	lit []byte

	// needles: every line Match accepts holds one of them; none known,
	// every line is a candidate.
	needles []needle
	// sure: a needle wholly inside a line is a match, no Match needed
	// (the query is one literal, and the needles spell all of it).
	sure bool
}

// needle is a byte string a matching line holds.
type needle struct {
	b    []byte
	fold bool // found where the ASCII-lowered text holds it; b is lowered
	f    finder
}

// Literal is a case-sensitive substring query.
func Literal(q string) *Matcher {
	return withFinders(&Matcher{lit: []byte(q), needles: []needle{{b: []byte(q)}}, sure: true})
}

// Regexp is a regular expression query, matched against each line with
// its newline, as re.Match does.
func Regexp(re *regexp.Regexp) *Matcher {
	m := &Matcher{re: re}
	tree, err := syntax.Parse(re.String(), syntax.Perl) // as regexp.Compile parses it
	if err != nil {
		return m // every line is a candidate: slower, never wrong
	}
	for tree.Op == syntax.OpCapture {
		tree = tree.Sub[0]
	}
	set, whole := required(tree)
	m.needles = set
	m.sure = whole && tree.Op == syntax.OpLiteral
	return withFinders(m)
}

func withFinders(m *Matcher) *Matcher {
	for i := range m.needles {
		m.needles[i].f = newFinder(m.needles[i].b, m.needles[i].fold)
	}
	return m
}

// Match reports whether line, newline included, matches: the definition
// that the block search only makes faster.
func (m *Matcher) Match(line []byte) bool {
	if m.re != nil {
		return m.re.Match(line)
	}
	return bytes.Contains(line, m.lit)
}

// required returns needles one of which every match of re holds, or nil
// when none is known; whole says they spell all of a literal re.
func required(re *syntax.Regexp) (set []needle, whole bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return literalNeedles(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCharClass:
		return classNeedles(re.Rune), false
	case syntax.OpCapture, syntax.OpPlus:
		set, _ = required(re.Sub[0])
		return set, false
	case syntax.OpRepeat:
		if re.Min >= 1 {
			set, _ = required(re.Sub[0])
		}
		return set, false
	case syntax.OpConcat:
		// Every part is in every match: the best part's needles do.
		for _, sub := range re.Sub {
			if s, _ := required(sub); better(s, set) {
				set = s
			}
		}
		return set, false
	case syntax.OpAlternate:
		// A match is one branch's: every branch must have needles.
		for _, sub := range re.Sub {
			s, _ := required(sub)
			if s == nil {
				return nil, false
			}
			for _, n := range s {
				if !slices.ContainsFunc(set, func(o needle) bool { return o.fold == n.fold && bytes.Equal(o.b, n.b) }) {
					set = append(set, n)
				}
			}
			if len(set) > maxNeedles {
				return nil, false
			}
		}
		return set, false
	}
	return nil, false // empty-width, any character, optional parts: nothing required
}

// better says whether needles a narrow the candidates more than b: the
// shortest needle longer (up to 6 bytes, past which all are rare), then
// fewer needles, then longer still.
func better(a, b []needle) bool {
	if a == nil {
		return false
	}
	if b == nil {
		return true
	}
	la, lb := shortest(a), shortest(b)
	if ca, cb := min(la, 6), min(lb, 6); ca != cb {
		return ca > cb
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return la > lb
}

func shortest(set []needle) int {
	n := -1
	for _, x := range set {
		if n < 0 || len(x.b) < n {
			n = len(x.b)
		}
	}
	return n
}

// literalNeedles are the needles of a literal's runes. U+FFFD is left out
// of every needle: the regexp matches it to any invalid byte, whose
// spelling is not U+FFFD's.
func literalNeedles(runes []rune, fold bool) (set []needle, whole bool) {
	best, bestWhole := []needle(nil), false
	for start := 0; start < len(runes); {
		end := start
		for end < len(runes) && runes[end] != utf8.RuneError {
			end++
		}
		if end > start {
			var s []needle
			var w bool
			if fold {
				s, w = foldNeedles(runes[start:end])
			} else {
				s, w = []needle{{b: []byte(string(runes[start:end]))}}, true
			}
			if better(s, best) {
				best, bestWhole = s, w && start == 0 && end == len(runes)
			}
		}
		start = end + 1
	}
	return best, bestWhole
}

// foldNeedles spell a case-insensitive literal (no U+FFFD in it) in every
// way Go's case folding allows, as found in the ASCII-lowered block: an
// ASCII letter by its lower case, any other rune of its orbit (the Kelvin
// sign for k, ſ for s, É for é) as it is. When that is too many
// spellings, they spell the best run of the literal that is not.
func foldNeedles(runes []rune) (set []needle, whole bool) {
	choices := make([][][]byte, len(runes))
	for i, r := range runes {
		choices[i] = spellings(r)
	}
	bi, bj := -1, -1
	var bestMin, bestCount int
	for i := range runes {
		count, minLen := 1, 0
		for j := i; j < len(runes) && j < i+maxFoldRunes; j++ {
			count *= len(choices[j])
			if count > maxFoldNeedles {
				break
			}
			minLen += len(choices[j][0]) // shortest first
			if bi < 0 || foldBetter(minLen, count, bestMin, bestCount) {
				bi, bj, bestMin, bestCount = i, j+1, minLen, count
			}
		}
	}
	if bi < 0 {
		return nil, false
	}
	spelt := [][]byte{nil}
	for _, c := range choices[bi:bj] {
		var next [][]byte
		for _, head := range spelt {
			for _, tail := range c {
				next = append(next, append(slices.Clip(head), tail...))
			}
		}
		spelt = next
	}
	for _, b := range spelt {
		set = append(set, needle{b: b, fold: true})
	}
	return set, bi == 0 && bj == len(runes)
}

func foldBetter(minLen, count, bestMin, bestCount int) bool {
	if a, b := min(minLen, 6), min(bestMin, 6); a != b {
		return a > b
	}
	if count != bestCount {
		return count < bestCount
	}
	return minLen > bestMin
}

// spellings are the ways r's case-folding orbit looks in the ASCII-lowered
// block, shortest first.
func spellings(r rune) [][]byte {
	var out [][]byte
	add := func(b []byte) {
		if !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, b) }) {
			out = append(out, b)
		}
	}
	c := r
	for {
		if c < utf8.RuneSelf {
			add([]byte{lowerByte(byte(c))})
		} else {
			add(utf8.AppendRune(nil, c))
		}
		if c = unicode.SimpleFold(c); c == r {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b []byte) int { return len(a) - len(b) })
	return out
}

// classNeedles are a small character class's runes, or nil.
func classNeedles(ranges []rune) []needle {
	var set []needle
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			if r == utf8.RuneError || len(set) == maxFoldNeedles {
				return nil
			}
			set = append(set, needle{b: utf8.AppendRune(nil, r)})
		}
	}
	return set
}
