package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/vaultgate/vaultgate/claude"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// words splits a command line as bash does, by having bash print each word.
func words(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", `w() { printf '%s\0' "$@"; }; w `+line).Output()
	if err != nil {
		t.Fatalf("bash could not read %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// flagOf is the value after name in ws.
func flagOf(ws []string, name string) string {
	for i, w := range ws {
		if w == name && i+1 < len(ws) {
			return ws[i+1]
		}
	}
	return ""
}

// TestHookBashRewrite: an allowed Bash is answered with an updatedInput
// that runs the very command through vaultgate exec, from the vault's
// config, with Claude Code's timeout mapped onto the bash tool's and
// every other field kept.
func TestHookBashRewrite(t *testing.T) {
	g, p, v, _ := hookGate(t, "[bash]\nwall = \"off\"\nmax_timeout = \"5m\"\n")
	command := "printf '%s\\n' \"it's\" `echo bt` $((1+2)) \"$HOME\" 'ёж 🦔' \\\n  && cat ideas.md | wc -l\n# трудно"
	for _, c := range []struct {
		timeout     any    // Claude Code's, in ms; nil: none
		wantTimeout string // exec's --timeout
		wantClaude  int    // the updatedInput's timeout, ms
	}{
		{nil, "120s", 135000},          // [bash] timeout, and the grace for the commit
		{1, "1s", 16000},               // rounded up to a whole second
		{90500, "91s", 106000},         // rounded up
		{600000, "300s", 315000},       // held to max_timeout
		{float64(4000), "4s", 19000},   // as JSON decodes it
		{599999.0, "300s", 315000},     // within Claude Code's own bound
		{float64(30000), "30s", 45000}, // plain seconds
	} {
		input := map[string]any{"command": command, "description": "count the ideas", "run_in_background": true, "some_new_field": "kept"}
		if c.timeout != nil {
			input["timeout"] = c.timeout
		}
		a := hookAnswer(t, g, p, "sess 'x'", filepath.Join(v, "notes"), "Bash", input)
		if a.Deny != "" || a.UpdatedInput == nil {
			t.Fatalf("timeout %v: %+v", c.timeout, a)
		}
		up := a.UpdatedInput
		if up["description"] != "count the ideas" || up["run_in_background"] != true || up["some_new_field"] != "kept" {
			t.Errorf("fields not carried over: %v", up)
		}
		if up["timeout"] != c.wantClaude {
			t.Errorf("timeout %v: Claude Code's timeout %v, want %d", c.timeout, up["timeout"], c.wantClaude)
		}
		ws := words(t, up["command"].(string))
		if ws[0] != testExec || ws[1] != "exec" {
			t.Errorf("runs %q", ws[:2])
		}
		if flagOf(ws, "--config") != g.Config().File || flagOf(ws, "--timeout") != c.wantTimeout || slicesContains(ws, "--session") {
			t.Errorf("timeout %v: words %q", c.timeout, ws)
		}
		// The call id opens this call's session, for this command, once.
		tk, err := takeTicket(g.Config().StateDir, flagOf(ws, "--call"), command, time.Now())
		if err != nil || tk.Session != "sess 'x'" || tk.Agent != p.Name || tk.HookID == "" {
			t.Errorf("timeout %v: the call id stands for %+v (%v)", c.timeout, tk, err)
		}
		if slicesContains(ws, "--agent") {
			t.Errorf("the default agent is named: %q", ws)
		}
		got, err := base64.StdEncoding.DecodeString(flagOf(ws, "--command-b64"))
		if err != nil || string(got) != command {
			t.Errorf("the command reaches exec as %q (%v)", got, err)
		}
	}
	// the answer Claude Code reads
	a := hookAnswer(t, g, p, "s", v, "Bash", map[string]any{"command": "ls"})
	var out struct {
		H struct {
			Event, Decision string
			Updated         map[string]any
		} `json:"hookSpecificOutput"`
	}
	raw := a.JSON()
	json.Unmarshal(raw, &out)
	if a.Silent() || !strings.Contains(string(raw), `"hookEventName":"PreToolUse"`) || !strings.Contains(string(raw), `"permissionDecision":"allow"`) ||
		!strings.Contains(string(raw), `"updatedInput":{"command":"'/opt/vault gate/vaultgate' exec`) {
		t.Errorf("answer %s", raw)
	}
}

func slicesContains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// TestHookBashRefusals: a Bash the hook can't hand to exec as the bash
// tool would run it is denied with the reason, and never rewritten.
func TestHookBashRefusals(t *testing.T) {
	ls := map[string]any{"command": "ls"}
	deny := func(t *testing.T, a claude.HookAnswer, want string) {
		t.Helper()
		if a.UpdatedInput != nil || !strings.Contains(a.Deny, want) {
			t.Errorf("%+v, want a deny containing %q", a, want)
		}
	}
	t.Run("no cwd", func(t *testing.T) {
		g, p, _, _ := hookGate(t, "[bash]\nwall = \"off\"\n")
		deny(t, hookAnswer(t, g, p, "s", "", "Bash", ls), `no absolute "cwd"`)
	})
	t.Run("bash off", func(t *testing.T) {
		g, p, v, _ := hookGate(t, "[bash]\nenabled = false\n")
		deny(t, hookAnswer(t, g, p, "s", v, "Bash", ls), "enabled = false")
	})
	t.Run("no exec binary", func(t *testing.T) {
		g, p, v, _ := hookGate(t, "[bash]\nwall = \"off\"\n")
		in := &claude.HookInput{SessionID: "s", Cwd: v, HookEventName: "PreToolUse", ToolName: "Bash", ToolInput: ls}
		a, err := g.HookWith(context.Background(), p, in, HookOptions{ExecProblem: "no vaultgate binary beside /x/vaultgate-hook"})
		if err != nil {
			t.Fatal(err)
		}
		deny(t, a, "no vaultgate binary beside /x/vaultgate-hook")
	})
	t.Run("Claude Code's sandbox", func(t *testing.T) {
		for _, c := range []struct {
			wall    string
			disable bool
			denied  bool
		}{
			{"required", false, true},
			{"required", true, false}, // this call runs outside Claude Code's sandbox
			{"best-effort", false, false},
			{"off", false, false},
		} {
			g, p, v, _ := hookGate(t, "[bash]\nwall = \""+c.wall+"\"\n")
			in := &claude.HookInput{SessionID: "s", Cwd: v, HookEventName: "PreToolUse", ToolName: "Bash",
				ToolInput: map[string]any{"command": "ls", "dangerouslyDisableSandbox": c.disable}}
			a, err := g.HookWith(context.Background(), p, in, HookOptions{Exec: testExec, Sandbox: "/home/u/.claude/settings.json"})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(a.Deny, "Claude Code's own sandbox is on (/home/u/.claude/settings.json)"); got != c.denied {
				t.Errorf("wall %s, dangerouslyDisableSandbox %v: %+v", c.wall, c.disable, a)
			}
		}
	})
	t.Run("another agent", func(t *testing.T) {
		// a hook process of the helper agent opens the vault for it
		cfg := hookConfig(t, "[bash]\nwall = \"off\"\n[agents.helper]\ntoken_env = \"HELPER_TOKEN\"\n")
		g, p, v := callGate(t, cfg, "helper"), cfg.Policy("helper"), cfg.Vault
		a := hookAnswer(t, g, p, "s", v, "Bash", ls)
		if ws := words(t, a.UpdatedInput["command"].(string)); flagOf(ws, "--agent") != "helper" {
			t.Errorf("words %q", ws)
		}
	})
}
