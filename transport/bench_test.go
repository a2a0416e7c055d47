package transport

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// BenchmarkReadRoundTrip is one MCP read of a 4 KB note through the
// in-process client: JSON-RPC, plan, judge, run, audit line.
func BenchmarkReadRoundTrip(b *testing.B) {
	e := newEnv(b)
	afero.WriteFile(e.fs, "notes/4k.md", []byte(strings.Repeat("0123456789abcde\n", 256)), 0o644)
	args := map[string]any{"path": "notes/4k.md"}
	b.ReportAllocs()
	for b.Loop() {
		if text, isErr := e.call("read", args); isErr || len(text) != 4096 {
			b.Fatal(text)
		}
	}
}

// BenchmarkSearch10k searches a generated vault of 10,000 notes on disk,
// through the production file system, for a word in one note in a hundred.
func BenchmarkSearch10k(b *testing.B) {
	dir := b.TempDir()
	for i := range 10_000 {
		sub := filepath.Join(dir, fmt.Sprintf("notes/%02d", i%100))
		os.MkdirAll(sub, 0o755)
		body := fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat("some ordinary text about the vault and its zones\n", 20))
		if i%100 == 7 || i%100 == 50 { // half of them hidden
			body += "the needle is here\n"
		}
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("n%05d.md", i)), []byte(body), 0o644)
	}
	cfg := loadConfig(b, `vault = "`+dir+`"
[zones]
edit = ["."]
hidden = ["notes/50"]
`)
	e := newEnvWith(b, cfg)
	args := map[string]any{"query": "needle", "max_results": 1000}
	b.ResetTimer()
	for b.Loop() {
		text, isErr := e.call("search", args)
		if isErr || strings.Count(text, "\n") != 100 {
			b.Fatalf("%d lines: %.200s", strings.Count(text, "\n"), text)
		}
	}
	b.ReportMetric(10_000, "notes")
}
