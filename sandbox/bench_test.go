package sandbox

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkRunTrue is the runner's whole call for `true`, in a pid
// namespace: env, pipes, start, wait, drain, and the private home.
func BenchmarkRunTrue(b *testing.B) { benchRun(b, containAuto) }

// BenchmarkRunTrueSweep is the same call contained by the /proc sweep.
func BenchmarkRunTrueSweep(b *testing.B) { benchRun(b, containSweep) }

func benchRun(b *testing.B, contain containMode) {
	dir := b.TempDir()
	r := Request{Command: "true", Dir: dir, Env: []string{"PATH"}, Environ: os.Environ(), contain: contain}
	for b.Loop() {
		if res, err := Run(context.Background(), r); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkExecBashTrue is the floor: a plain `bash -c true` from Go.
func BenchmarkExecBashTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
