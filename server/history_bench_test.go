package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// BenchmarkWrite4K is a 4 KB write's round trip through the gate (plan,
// judge, run, audit line), with history kept and without: a different
// body each time, so each keeps a new pre-image. The two gates alternate
// call by call, so that a busy machine slows both alike; off-us and on-us
// are their medians, ratio the one over the other, spread-% the
// interquartile range of the per-call ratios of neighbouring pairs.
//
//	go test ./server -run '^$' -bench Write4K -benchtime 2000x -count 5
func BenchmarkWrite4K(b *testing.B) {
	type side struct {
		g     *Gate
		c     Caller
		times []time.Duration
	}
	var sides [2]*side
	for i, kept := range []bool{false, true} {
		g, _, _ := historyGate(b)
		if !kept {
			g.keep = nil
		}
		s := &policy.Session{ID: "bench", State: policy.NewState()}
		sides[i] = &side{g: g, c: Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}}
	}
	body := strings.Repeat("x", 4090)
	var ratios []float64
	i := 0
	for b.Loop() {
		var pair [2]time.Duration
		for k, sd := range sides {
			args := map[string]any{"path": "bench.md", "content": fmt.Sprintf("%06d", i) + body}
			start := time.Now()
			o := sd.g.Call(context.Background(), sd.c, "write", args, Serve)
			pair[k] = time.Since(start)
			if o.Err != nil {
				b.Fatal(o.Text())
			}
			sd.times = append(sd.times, pair[k])
		}
		ratios = append(ratios, float64(pair[1])/float64(pair[0]))
		i++
	}
	off, on := median(sides[0].times), median(sides[1].times)
	b.ReportMetric(float64(off.Microseconds()), "off-us")
	b.ReportMetric(float64(on.Microseconds()), "on-us")
	b.ReportMetric(float64(on)/float64(off), "ratio")
	slices.Sort(ratios)
	if n := len(ratios); n >= 4 {
		b.ReportMetric(100*(ratios[3*n/4]-ratios[n/4]), "spread-%")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkUndoSession1000 undoes a session of 1,000 changes (writes and
// edits over 100 notes), the part timed being the undo alone.
//
//	go test ./server -run '^$' -bench UndoSession1000 -benchtime 3x
func BenchmarkUndoSession1000(b *testing.B) {
	for range b.N {
		b.StopTimer()
		g, _, _ := historyGate(b)
		s := &policy.Session{ID: "big", State: policy.NewState()}
		c := Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}
		for i := range 1000 {
			args := map[string]any{"path": fmt.Sprintf("n/%d.md", i%100), "content": fmt.Sprintf("v%d\n", i)}
			if o := g.Call(context.Background(), c, "write", args, Serve); o.Err != nil {
				b.Fatal(o.Text())
			}
		}
		person := personGate(b, g.cfg) // the person's undo, beside the server
		b.StartTimer()
		u, err := person.Undo(UndoRequest{Session: "big"})
		if err != nil || len(u.Conflicts) > 0 || u.Calls != 1000 {
			b.Fatalf("%+v %v", u, err)
		}
	}
}
