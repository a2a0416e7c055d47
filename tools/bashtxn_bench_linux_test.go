package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/policy"
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
		if err == nil {
			res = settle(txnChain(s.Bash), &policy.ToolCall{Tool: "bash", Zones: s.Zones, Lang: "en"}, res)
		}
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
				p, err := s.Plan("bash", map[string]any{"command": "sed -i 's/^/x/' many/*.md"})
				if err != nil {
					b.Fatal(err)
				}
				res, err := p.Run(context.Background())
				if err == nil {
					res = settle(txnChain(s.Bash), &policy.ToolCall{Tool: "bash", Zones: s.Zones, Lang: "en"}, res)
				}
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

// BenchmarkWallTxnTrueRatio is issue 18's measure: a whole walled bash
// call of `true` on the overlay (as BenchmarkWallTxnTrue, with the
// vaultgate-wall helper a server starts, built here, and started ahead as
// a server starts it) against a plain `bash -c true` from Go, the two
// alternating in one loop so that a busy machine slows both alike.
// walled-ms and floor-ms are medians, x-floor the median of the rounds'
// ratios, x-p25 and x-p75 its spread.
//
// "back-to-back" runs each call right after the other, so the helper
// started ahead for the next walled call is still starting while the
// floor runs (and slows it); "apart" pauses 20 ms before each call, as an
// agent's calls are apart, and measures each on a quiet machine.
//
//	go test -run='^$' -bench=WallTxnTrueRatio -benchtime=150x ./tools
func BenchmarkWallTxnTrueRatio(b *testing.B) {
	s, _ := benchSet(b)
	helper := filepath.Join(b.TempDir(), sandbox.HelperBinary)
	if out, err := exec.Command("go", "build", "-o", helper, "github.com/vaultgate/vaultgate/cmd/vaultgate-wall").CombinedOutput(); err != nil {
		b.Fatalf("building the helper: %v\n%s", err, out)
	}
	s.Vault.WallHelper = helper
	s.Vault.HelperAhead = true // as a server runs it
	walled := func() time.Duration {
		t0 := time.Now()
		p, err := s.Plan("bash", map[string]any{"command": "true"})
		if err != nil {
			b.Fatal(err)
		}
		res, err := p.Run(context.Background())
		if err != nil || res.Failed {
			b.Fatal(res, err)
		}
		return time.Since(t0)
	}
	floor := func() time.Duration {
		t0 := time.Now()
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	walled() // the probe, once per server
	for _, c := range []struct {
		name string
		gap  time.Duration
	}{{"back-to-back", 0}, {"apart", 20 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) {
			var ws, fs, ratios []float64
			for b.Loop() {
				time.Sleep(c.gap)
				f := floor()
				time.Sleep(c.gap)
				w := walled()
				fs, ws = append(fs, millis(f)), append(ws, millis(w))
				ratios = append(ratios, float64(w)/float64(f))
			}
			b.ReportMetric(quantile(ws, 0.5), "walled-ms")
			b.ReportMetric(quantile(fs, 0.5), "floor-ms")
			b.ReportMetric(quantile(ratios, 0.5), "x-floor")
			b.ReportMetric(quantile(ratios, 0.25), "x-p25")
			b.ReportMetric(quantile(ratios, 0.75), "x-p75")
		})
	}
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// quantile is the q-th quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}
