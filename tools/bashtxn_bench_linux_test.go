package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/sandbox"
)

// benchSet is txnVault for a benchmark.
func benchSet(b *testing.B) (*Set, string) {
	if _, err := exec.LookPath("bash"); err != nil {
		b.Skip(err)
	}
	s, root := txnVault(b)
	return s, root
}

// BenchmarkWallTxnTrue is a whole walled bash call of `true` on the
// overlay, as the tool makes it: plan, layer, wall, diff, judge, commit
// (of nothing), layer removed. BenchmarkExecBashTrue beside it is the floor.
func BenchmarkWallTxnTrue(b *testing.B) {
	s, _ := benchSet(b)
	for b.Loop() {
		p, err := s.Plan("bash", map[string]any{"command": "true"})
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Run(context.Background())
		if err != nil || res.Failed {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkExecBashTrue is a plain `bash -c true` from Go.
func BenchmarkExecBashTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWallTxnNotes is a whole walled call that changes N notes
// (sed -i on each), committed: the overlay, the diff of N copied-up
// files, the judgement of N effects and the commit of N files.
func BenchmarkWallTxnNotes(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s, root := benchSet(b)
			dir := filepath.Join(root, "many")
			if err := os.Mkdir(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%04d.md", i)), []byte("a note of a few words\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			s.Bash.MaxChangedFiles = 2 * n
			for b.Loop() {
				// A file changed less than the commit's margin before a call
				// counts as changed meanwhile: wait out the last commit.
				b.StopTimer()
				time.Sleep(25 * time.Millisecond)
				b.StartTimer()
				p, err := s.Plan("bash", map[string]any{"command": "sed -i 's/^/x/' many/*.md"})
				if err != nil {
					b.Fatal(err)
				}
				res, err := p.Run(context.Background())
				if err != nil || res.Failed || len(res.Real) != n {
					b.Fatal(res, err)
				}
			}
		})
	}
}

// BenchmarkWallTrueNoOverlay is the same walled `true` as
// BenchmarkWallTxnTrue without the overlay: the wall as it was before.
func BenchmarkWallTrueNoOverlay(b *testing.B) {
	s, root := benchSet(b)
	wall, err := bashWall(s.Bash, "")
	if err != nil || wall == nil {
		b.Fatal(wall, err)
	}
	wall.Zones = s.Zones
	for b.Loop() {
		res, err := sandbox.Run(context.Background(), sandbox.Request{Command: "true", Dir: root, Env: []string{"PATH"}, Environ: os.Environ(), Wall: wall})
		if err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}
