//go:build linux

package txn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDiff reads an upper layer in which a command changed n of a vault's 1,000 notes.
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{0, 1, 100, 1000} {
		b.Run(fmt.Sprintf("changed=%d", n), func(b *testing.B) {
			base := testBase(b)
			vault := filepath.Join(base, "vault")
			if err := os.MkdirAll(filepath.Join(vault, "notes"), 0o755); err != nil {
				b.Fatal(err)
			}
			for i := range 1000 {
				note := fmt.Sprintf("# Note %d\n\nSome text of a note, a few lines long.\n", i)
				if err := os.WriteFile(filepath.Join(vault, "notes", fmt.Sprintf("%04d.md", i)), []byte(note), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			l := newTestLayer(b, base)
			script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo edited >> notes/$(printf %%04d $i).md; i=$((i+1)); done`, n)
			changeThroughOverlay(b, base, vault, l, asRoot, script)
			for b.Loop() {
				changes, err := Diff(l, vault, DiffOptions{Privileged: true})
				if err != nil {
					b.Fatal(err)
				}
				if want := n; len(changes) != want {
					b.Fatalf("%d changes, want %d", len(changes), want)
				}
			}
		})
	}
}
