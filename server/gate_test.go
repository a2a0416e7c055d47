package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// TestSteps: Call goes as far as its Steps say. A dry run neither runs nor
// records; a run without a record leaves no line; a gate without a log
// refuses, before running, a call that asks to be recorded: a server's
// gate has the log, a dry run's (check's) has none.
func TestSteps(t *testing.T) {
	cfg := hookConfig(t, "")
	g := serverGate(t, cfg)
	p, v, auditPath := cfg.Policy(config.DefaultAgent), cfg.Vault, cfg.AuditPath
	lines := func() int {
		data, _ := os.ReadFile(auditPath)
		return strings.Count(string(data), "\n")
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(v, "notes", name))
		return err == nil
	}
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "steps", State: policy.NewState()}, Policy: p}
	write := func(g *Gate, steps Steps, name string) *Outcome {
		return g.Call(context.Background(), c, "write", map[string]any{"path": "notes/" + name, "content": "x"}, steps)
	}
	for _, s := range []struct {
		steps       Steps
		name        string
		ran, record bool
	}{
		{DryRun, "dry.md", false, false},
		{Steps{Run: true}, "run.md", true, false},
		{Steps{Record: true}, "judged.md", false, true},
		{Serve, "serve.md", true, true},
	} {
		before := lines()
		o := write(g, s.steps, s.name)
		if o.Decision != Allow || o.Err != nil {
			t.Fatalf("%+v: %s %v", s.steps, o.Decision, o.Err)
		}
		if exists(s.name) != s.ran || (lines() > before) != s.record {
			t.Errorf("%+v: ran %v, recorded %v", s.steps, exists(s.name), lines() > before)
		}
	}
	nolog := dryRunGate(t, cfg)
	if o := write(nolog, Serve, "nolog.md"); o.Decision != Error || !strings.Contains(o.Text(), "no audit log") || exists("nolog.md") {
		t.Errorf("a recorded call on a gate without a log: %s %q, ran %v", o.Decision, o.Text(), exists("nolog.md"))
	}
}
