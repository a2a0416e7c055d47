package search

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// go test -run '^$' -bench Scan ./search/
//
// BenchmarkScan is the search of 8 MB of notes in memory: what the tool
// pays beyond reading them.
func BenchmarkScan(b *testing.B) {
	words := strings.Fields("the a of and to in is it that for on with as vault zone note folder link draft plan meeting project review garden river letter number paper window table kitchen station bridge 2026 12 todo done #idea")
	rng := rand.New(rand.NewPCG(1, 1))
	var text bytes.Buffer
	for text.Len() < 8<<20 {
		for range 12 {
			text.WriteString(words[rng.IntN(len(words))])
			text.WriteByte(' ')
		}
		text.WriteByte('\n')
	}
	for _, c := range []struct{ name, q string }{
		{"literal-rare-first-byte", "quorble"},
		{"literal-common-first-byte", "lighthouse"},
		{"fold", "(?i)lighthouse"},
		{"fold-rare", "(?i)quorble"},
		{"fold-kelvin", "(?i)kiss"},
		{"regex", `\w+ lighthouse \d+`},
	} {
		m := Literal(c.q)
		if strings.ContainsAny(c.q, `(\`) {
			m = Regexp(regexp.MustCompile(c.q))
		}
		b.Run(c.name, func(b *testing.B) {
			sc := NewScanner()
			b.SetBytes(int64(text.Len()))
			for b.Loop() {
				sc.Scan(bytes.NewReader(text.Bytes()), m, func(int, []byte) bool { return true })
			}
		})
	}
}
