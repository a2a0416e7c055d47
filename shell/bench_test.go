package shell

import (
	"fmt"
	"strings"
	"testing"
)

func benchAnalyze(b *testing.B, cmd string) {
	b.Helper()
	vault := sampleVault(b)
	opts := corpusOptions(vault)
	if _, err := Analyze(cmd, opts); err != nil {
		if _, ok := err.(*Refusal); !ok {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(cmd)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		Analyze(cmd, opts)
	}
}

// BenchmarkTypical is the command an agent runs most: a search in a folder.
func BenchmarkTypical(b *testing.B) {
	benchAnalyze(b, "cd notes && grep -rn todo . | sort | head -20")
}

// BenchmarkScript4K is a realistic 4 KB maintenance script.
func BenchmarkScript4K(b *testing.B) {
	benchAnalyze(b, script4K())
}

// BenchmarkPathological is 64 KiB of deep nesting: subshells, substitutions,
// loops and ifs inside each other, which must stay fast and bounded.
func BenchmarkPathological(b *testing.B) {
	benchAnalyze(b, pathological())
}

func script4K() string {
	var sb strings.Builder
	sb.WriteString("set -euo pipefail\ncd notes\n")
	for i := 0; sb.Len() < 4096; i++ {
		fmt.Fprintf(&sb, `# section %d
dir=sub%d
if [ -d "$dir" ]; then
  for f in "$dir"/*.md; do
    grep -n "todo" "$f" | sort | head -5
    wc -l "$f" >> ../write/counts.txt
  done
fi
find . -name '*.md' -newer a.md -print | xargs grep -l fixme || true
sed -n '1,10p' a.md > ../write/head%d.md
cat <<'END' > ../write/note%d.md
Section %d notes.
END
`, i, i, i, i, i)
	}
	return sb.String()
}

func pathological() string {
	const limit = 64 << 10
	open := []string{"( ", "echo $( ", "{ ", "if true; then ", "for i in a b; do ", "while false; do "}
	shut := []string{" )", " )", "; }", "; fi", "; done", "; done"}
	var pre, post []string
	size := len("rm write/w.md")
	for i := 0; ; i++ {
		o, c := open[i%len(open)], shut[i%len(shut)]
		if size+len(o)+len(c) > limit {
			break
		}
		size += len(o) + len(c)
		pre = append(pre, o)
		post = append([]string{c}, post...)
	}
	return strings.Join(pre, "") + "rm write/w.md" + strings.Join(post, "")
}

func TestPathologicalBounded(t *testing.T) {
	cmd := pathological()
	if len(cmd) > MaxCommandSize {
		t.Fatalf("the pathological command is %d bytes, over the limit", len(cmd))
	}
	_, err := Analyze(cmd, corpusOptions(sampleVault(t)))
	if err != nil {
		if _, ok := err.(*Refusal); !ok {
			t.Fatal(err)
		}
	}
	t.Logf("%d bytes: %v", len(cmd), err)
}
