//go:build linux

package hookcmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/execcmd"
	"github.com/vaultgate/vaultgate/internal/judgesock"
	"github.com/vaultgate/vaultgate/server"
)

// TestJudgeRunsExec: an exec hands its command to the running judge for
// its config and agent, which runs it on its open gate: the command's
// output and status come back, its change is made, the call id the hook
// issued is spent there, and what exec alone would answer is what the
// judge answers (execcmd.Run, one code for both).
func TestJudgeRunsExec(t *testing.T) {
	dir, cfgPath := vault(t)
	f, _ := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[bash]\nwall = \"off\"\n")
	f.Close()
	w := startJudge(t, cfgPath)
	if !w.Listening() {
		t.Fatal("the judge is not listening")
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(call judgesock.ExecCall) judgesock.Answer {
		t.Helper()
		c := DialJudge(cfg, "default")
		if c == nil {
			t.Fatal("no judge to dial")
		}
		a, err := judgesock.AskExec(c, judgesock.Request{Config: cfg.File, Digest: cfg.Digest, Agent: "default", Run: &call})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	notes := filepath.Join(dir, "notes")
	a := ask(judgesock.ExecCall{Cwd: notes, Command: "echo made > made.md; echo out; echo err >&2; exit 3", Environ: []string{"PATH=/usr/bin:/bin"}})
	if a.Code != 3 || string(a.Stdout) != "out\n" || string(a.Stderr) != "err\n" {
		t.Errorf("the judge's answer: %d %q %q", a.Code, a.Stdout, a.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(notes, "made.md")); string(b) != "made\n" {
		t.Errorf("made.md holds %q", b)
	}
	// A Bash the hook allowed: its call id is spent by the judge's run.
	var out, errOut strings.Builder
	h := &hook{flags: Flags{Config: cfg.File, Agent: "default", Exec: "/usr/bin/vaultgate"}, stdout: &out, stderr: &errOut}
	code := h.answer(w.g, cfg, cfg.Policy("default"), mustParse(t, input(notes, "Bash", map[string]any{"command": "ls"})))
	var answer struct {
		H struct {
			UpdatedInput map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if code != ExitAnswered || json.Unmarshal([]byte(out.String()), &answer) != nil || answer.H.UpdatedInput == nil {
		t.Fatalf("the hook's Bash: %d %q %q", code, out.String(), errOut.String())
	}
	callID := wordAfter(answer.H.UpdatedInput["command"].(string), "--call")
	if a := ask(judgesock.ExecCall{CallID: callID, Cwd: notes, Command: "ls"}); a.Code != 0 || !strings.Contains(string(a.Stdout), "made.md") {
		t.Errorf("the hook's Bash through the judge: %d %q %q", a.Code, a.Stdout, a.Stderr)
	}
	if a := ask(judgesock.ExecCall{CallID: callID, Cwd: notes, Command: "ls"}); a.Code != execcmd.ExitRefused || !strings.Contains(string(a.Stderr), "spent") {
		t.Errorf("the id again: %d %q", a.Code, a.Stderr)
	}
	if w.Ran() != 3 {
		t.Errorf("the judge ran %d commands, want 3", w.Ran())
	}
	// Exec alone, on a gate of its own, answers the same way.
	g, err := server.OpenCall(cfg, "default")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	r := execcmd.Run(context.Background(), g, server.ExecRequest{Agent: cfg.Policy("default"), Cwd: notes, Args: map[string]any{"command": "echo out; exit 3"}})
	if r.Code != 3 || string(r.Stdout) != "out\n" {
		t.Errorf("exec alone: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
}

func mustParse(t *testing.T, stdin string) *claude.HookInput {
	t.Helper()
	in, err := claude.ParseHookInput([]byte(stdin))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// wordAfter is the word after name in a rewritten command, whose words
// other than the command's base64 need no quoting in this test.
func wordAfter(line, name string) string {
	ws := strings.Fields(line)
	for i, w := range ws {
		if strings.Trim(w, "'") == name && i+1 < len(ws) {
			return strings.Trim(ws[i+1], "'")
		}
	}
	return ""
}
