package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/vaultgate/vaultgate/claude"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/tools"
)

// seedVault is the vault the seeds in testdata/hook were written against.
const seedVault = "/home/you/Notes"

// FuzzHookInput feeds arbitrary stdin to the hook's parser and every input
// it accepts to the gate as the hook would (plan, judge, run; the log is
// left out). Seeded with Claude Code's own PreToolUse and PostToolUse JSON.
// It holds that bad input is claude.ErrHookInput, that no planner or rule fails
// inside, and that a reason never names a hidden path the input did not.
func FuzzHookInput(f *testing.F) {
	g, p, vault, _ := hookGate(f, "")
	seeds, err := filepath.Glob("testdata/hook/*.json")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.ReplaceAll(data, []byte(seedVault), []byte(vault)))
	}
	for _, s := range []string{"", " ", "null", "[]", "{}", `{"tool_name":""}`, `{"tool_name":"Read","tool_input":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := claude.ParseHookInput(data)
		if err != nil {
			if !errors.Is(err, claude.ErrHookInput) {
				t.Fatalf("%q: an error that is not claude.ErrHookInput: %v", data, err)
			}
			return
		}
		if in.ToolName == "" || in.ToolInput == nil {
			t.Fatalf("%q parsed to %+v", data, in)
		}
		caller := Caller{
			Via:     ViaHook,
			Session: &policy.Session{ID: in.SessionID, State: policy.NewState()},
			Policy:  p,
			Hook:    &tools.HookCall{After: in.After(), Cwd: in.Cwd, ServerName: p.Hook.ServerName},
		}
		o := g.Call(context.Background(), caller, in.ToolName, in.ToolInput, Steps{Run: true})
		switch o.Decision {
		case Allow, Deny, Error:
		default:
			t.Fatalf("%q: decision %q", data, o.Decision)
		}
		if o.Err != nil && strings.Contains(o.Err.Error(), "internal error") {
			t.Fatalf("%q: %v", data, o.Err)
		}
		given, _ := json.Marshal(in)
		if !bytes.Contains(given, []byte("private")) && strings.Contains(o.Text(), "private") {
			t.Fatalf("%q: the answer names a hidden path: %s", data, o.Text())
		}
	})
}
