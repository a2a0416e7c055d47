package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// BenchmarkWrite4K is a 4 KB write's round trip through the gate (plan,
// judge, run, audit line), with history kept and without: a different
// body each time, so each keeps a new pre-image.
//
//	go test ./server -run '^$' -bench Write4K -benchtime 2000x
func BenchmarkWrite4K(b *testing.B) {
	for _, kept := range []bool{false, true} {
		b.Run(fmt.Sprintf("history=%v", kept), func(b *testing.B) {
			g, _, _ := historyGate(b)
			if !kept {
				g.keep = nil
			}
			s := &policy.Session{ID: "bench", State: policy.NewState()}
			c := Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}
			body := strings.Repeat("x", 4090)
			b.ResetTimer()
			for i := range b.N {
				o := g.Call(context.Background(), c, "write", map[string]any{"path": "bench.md", "content": fmt.Sprintf("%06d", i) + body}, Serve)
				if o.Err != nil {
					b.Fatal(o.Text())
				}
			}
		})
	}
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
		b.StartTimer()
		u, err := g.Undo(UndoRequest{Session: "big"})
		if err != nil || len(u.Conflicts) > 0 || u.Calls != 1000 {
			b.Fatalf("%+v %v", u, err)
		}
	}
}
