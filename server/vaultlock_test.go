package server

import (
	"context"
	"fmt"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// TestMutatingCallsSerialiseAcrossGates runs writes through two gates with
// their own mutexes — as two vaultgate servers have — and checks that no
// two calls were ever between plan and run at once.
func TestMutatingCallsSerialiseAcrossGates(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+filepath.Join(dir, "state", "audit.jsonl")+`"
`)
	var inside, overlaps atomic.Int32
	probe := policy.Rule{Name: "probe", Check: func(c *policy.ToolCall) *policy.Deny {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(20 * time.Millisecond)
		inside.Add(-1)
		return nil
	}}
	gates := make([]*Gate, 2)
	for i := range gates {
		gates[i] = serverGate(t, cfg)
		gates[i].AddRules(probe)
	}
	p := cfg.Policy(config.DefaultAgent)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := gates[i%2]
			s := &policy.Session{ID: fmt.Sprint(i), State: policy.NewState()}
			o := g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: p}, "write",
				map[string]any{"path": fmt.Sprintf("notes/n%d.md", i), "content": "x"}, Steps{Run: true})
			if o.Decision != Allow || o.Err != nil {
				t.Errorf("write %d: %s", i, o.Text())
			}
		}()
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d calls ran while another was between its check and its deed", n)
	}
}
