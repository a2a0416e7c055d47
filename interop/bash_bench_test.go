package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkClaudeBash times a Claude Code Bash `true` whole process, as
// Claude Code pays for it — the hook judging it, then the rewritten
// command (`vaultgate exec --call …`) run with bash -c — against the same
// walled `bash true` called over MCP on a `vaultgate serve` that runs
// (the walled call's own cost, with everything ready). Two forms of the
// Claude Code Bash: "judge", vaultgate-hook with its judge running, which
// exec hands the command to as well; "alone", vaultgate hook and an exec
// that open the vault themselves (no judge to be had); and "rewrite", the
// rewritten command alone with the judge running (what a Bash costs past
// its hook). They take turns call by call. Reported: the MCP call's
// median in ms and each form's ratio to it, of the medians.
//
//	go test ./interop -run '^$' -bench ClaudeBash -benchtime 40x -count 3
func BenchmarkClaudeBash(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the wall needs root here")
	}
	bin := filepath.Dir(binary(b))
	for _, cmd := range []string{"vaultgate-hook", "vaultgate-wall"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, cmd), "../cmd/"+cmd).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", cmd, err, out)
		}
	}
	dir, cfg, _ := vault(b)
	// Walled, both: the goal compares the rewritten Bash with a walled
	// bash over MCP, which vault()'s wall = "off" would not be.
	body, err := os.ReadFile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cfg, bytes.Replace(body, []byte(`wall = "off"`), []byte(`wall = "required"`), 1), 0o644); err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	withJudge, noJudge := filepath.Join(root, "run"), filepath.Join(root, "none")
	for _, d := range []string{withJudge, noJudge} {
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	env := func(runtime string) []string {
		return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_RUNTIME_DIR=" + runtime}
	}
	vg := startStdio(b, "vaultgate", env(noJudge), binary(b), "serve", "--config", cfg)
	vg.req.Params.Name = "bash"
	vg.req.Params.Arguments = map[string]any{"command": "true"}
	// claudeBash times the hook and the rewritten command; with rewriteOnly,
	// the rewritten command alone (the hook's answer is fetched untimed:
	// each carries a call id good for one run).
	claudeBash := func(name string, runtime string, rewriteOnly bool, hook ...string) func() time.Duration {
		return func() time.Duration {
			input := fmt.Appendf(nil, `{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_use_id":"t"}`, dir)
			start := time.Now()
			cmd := exec.Command(hook[0], append(hook[1:], "--config", cfg)...)
			cmd.Stdin, cmd.Env = bytes.NewReader(input), env(runtime)
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("%s: the hook: %v", name, err)
			}
			var a struct {
				H struct {
					UpdatedInput map[string]any `json:"updatedInput"`
				} `json:"hookSpecificOutput"`
			}
			if json.Unmarshal(out, &a) != nil || a.H.UpdatedInput == nil {
				b.Fatalf("%s: the hook's answer %q", name, out)
			}
			if rewriteOnly {
				start = time.Now()
			}
			run := exec.Command("bash", "-c", a.H.UpdatedInput["command"].(string))
			run.Dir, run.Env = dir, env(runtime)
			if out, err := run.CombinedOutput(); err != nil {
				b.Fatalf("%s: the rewritten command: %v %s", name, err, out)
			}
			return time.Since(start)
		}
	}
	mcpCall := func() time.Duration {
		start := time.Now()
		res, err := vg.c.CallTool(b.Context(), vg.req)
		if err != nil || res.IsError {
			b.Fatalf("mcp bash: %v %+v", err, res)
		}
		return time.Since(start)
	}
	cases := []struct {
		name  string
		run   func() time.Duration
		times []time.Duration
	}{
		{name: "mcp", run: mcpCall},
		{name: "judge", run: claudeBash("judge", withJudge, false, filepath.Join(bin, "vaultgate-hook"))},
		{name: "alone", run: claudeBash("alone", noJudge, false, binary(b), "hook")},
		{name: "rewrite", run: claudeBash("rewrite", withJudge, true, filepath.Join(bin, "vaultgate-hook"))},
	}
	for i := range cases { // the page cache, the judge, the kept probe
		cases[i].run()
		cases[i].run()
	}
	for round := 0; b.Loop(); round++ {
		for i := range cases {
			c := &cases[(round+i)%len(cases)]
			c.times = append(c.times, c.run())
		}
	}
	fl := median(cases[0].times)
	b.ReportMetric(float64(fl.Microseconds())/1000, "mcp-ms")
	for _, c := range cases[1:] {
		b.ReportMetric(float64(median(c.times))/float64(fl), "x-"+c.name)
	}
}
