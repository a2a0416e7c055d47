package sandbox

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/vaultgate/vaultgate/zones"
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

// BenchmarkRunTrueWall is the same call under the full wall, and with
// layers added one at a time, so each layer's share of the difference
// shows: go test -run='^$' -bench=RunTrue -benchtime=200x ./sandbox
func BenchmarkRunTrueWall(b *testing.B) {
	full, err := ProbeWall("").For(false, false, true)
	if err != nil {
		b.Skipf("wall: required layer unavailable: %v", err)
	}
	steps := []struct {
		name string
		set  func(*Layers)
	}{
		{"0-mountns+newroot", func(l *Layers) { l.Mount = true }},
		{"1-+netns", func(l *Layers) { l.Net = true }},
		{"2-+landlock", func(l *Layers) { l.Landlock = full.Landlock }},
		{"3-+nonewprivs+caps", func(l *Layers) { l.NoNew, l.Caps = true, true }},
		{"4-+rlimits+pidmax(full)", func(l *Layers) { l.Rlimits, l.PidMax = true, true }},
	}
	dir := b.TempDir()
	tab, err := zones.New(dir, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "p", Mode: zones.Protected}, {Path: "w", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var L Layers
	for _, s := range steps {
		s.set(&L)
		layers := L
		b.Run(s.name, func(b *testing.B) {
			r := Request{Command: "true", Dir: dir, Env: []string{"PATH"}, Environ: os.Environ(),
				Wall: &WallConfig{Zones: tab, Layers: layers}}
			for b.Loop() {
				if res, err := Run(context.Background(), r); err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
			}
		})
	}
}
