package sandbox

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

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

// BenchmarkRunTrueWallOverlay is the full wall's `true` without and with
// the vault as an overlay, each call with the overlay on a fresh upper and
// work folder made and removed as txn.NewLayer and Layer.Remove do (the
// diff is not in it). The two alternate, so that a busy machine slows both
// alike: wall-ms and overlay-ms are their medians, added-ms the
// difference.
// go test -run='^$' -bench=RunTrueWallOverlay -benchtime=200x ./sandbox
func BenchmarkRunTrueWallOverlay(b *testing.B) {
	full, err := ProbeWall("").For(false, false, true)
	if err != nil {
		b.Skipf("wall: required layer unavailable: %v", err)
	}
	dir := b.TempDir()
	tab, err := zones.New(dir, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "p", Mode: zones.Protected}, {Path: "w", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		b.Fatal(err)
	}
	// The layers in the temp folder's file system, as a state folder beside
	// the vault, on tmpfs, and in VAULTGATE_BENCH_STATE when set.
	shm, err := os.MkdirTemp("/dev/shm", "vaultgate-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(shm)
	states := []struct{ name, dir string }{{"state=tempdir", b.TempDir()}, {"state=tmpfs", shm}}
	if d := os.Getenv("VAULTGATE_BENCH_STATE"); d != "" {
		states = append(states, struct{ name, dir string }{"state=" + d, d}) // the real state folder's file system
	}
	states = append(states, struct{ name, dir string }{"layer=memory", ""}) // the call's own tmpfs
	for _, st := range states {
		b.Run(st.name, func(b *testing.B) { benchOverlay(b, tab, dir, st.dir, full) })
	}
}

func benchOverlay(b *testing.B, tab *zones.Table, dir, state string, full Layers) {
	call := func(overlay bool) time.Duration {
		cfg := &WallConfig{Zones: tab, Layers: full, Required: true}
		start := time.Now()
		var layer string
		switch {
		case overlay && state == "":
			cfg.Overlay = &Overlay{Memory: &MemoryLayer{MaxBytes: 64 << 20, MaxFiles: 1000}}
		case overlay:
			var err error
			if layer, err = os.MkdirTemp(state, "layer-"); err != nil {
				b.Fatal(err)
			}
			cfg.Overlay = &Overlay{Upper: layer + "/upper", Work: layer + "/work"}
			os.Mkdir(cfg.Overlay.Upper, 0o700)
			os.Mkdir(cfg.Overlay.Work, 0o700)
		}
		r := Request{Command: "true", Dir: dir, Env: []string{"PATH"}, Environ: os.Environ(), Wall: cfg}
		res, err := Run(context.Background(), r)
		if err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
		if res.Upper != nil {
			res.Upper.Close()
		}
		if layer != "" {
			openUp(layer)
			os.RemoveAll(layer)
		}
		return time.Since(start)
	}
	var plain, overlaid []time.Duration
	for b.Loop() {
		plain = append(plain, call(false))
		overlaid = append(overlaid, call(true))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	w, o := median(plain), median(overlaid)
	b.ReportMetric(w, "wall-ms")
	b.ReportMetric(o, "overlay-ms")
	b.ReportMetric(o-w, "added-ms")
}
