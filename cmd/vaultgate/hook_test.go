package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runHookBinary runs a built binary's hook (hook is its argv: `vaultgate
// hook` or `vaultgate-hook`) with stdin, as Claude Code does.
func runHookBinary(t *testing.T, hook []string, cfg, stdin string) (string, string, int) {
	t.Helper()
	args := append([]string(nil), hook[1:]...)
	if cfg != "" {
		args = append(args, "--config", cfg)
	}
	cmd := exec.Command(hook[0], args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func hookJSON(session, cwd, tool string, input map[string]any) string {
	b, _ := json.Marshal(map[string]any{"session_id": session, "cwd": cwd, "hook_event_name": "PreToolUse",
		"tool_name": tool, "tool_input": input, "transcript_path": "/tmp/t.jsonl", "permission_mode": "bypassPermissions"})
	return string(b)
}

// TestHookBinary runs the same calls through `vaultgate hook` and
// vaultgate-hook: one command, two binaries.
func TestHookBinary(t *testing.T) {
	hooks := map[string][]string{
		"vaultgate hook": {binary(t), "hook"},
		"vaultgate-hook": {filepath.Join(bundle(t), "vaultgate-hook")},
	}
	for name, hook := range hooks {
		t.Run(name, func(t *testing.T) { testHookBinary(t, hook) })
	}
}

func testHookBinary(t *testing.T, hook []string) {
	vault, cfg, _ := sampleVault(t)
	deny := func(out string) string {
		var r struct {
			HookSpecificOutput struct {
				HookEventName, PermissionDecision, PermissionDecisionReason string
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("deny output is not JSON: %q", out)
		}
		if r.HookSpecificOutput.HookEventName != "PreToolUse" || r.HookSpecificOutput.PermissionDecision != "deny" {
			t.Errorf("deny output: %q", out)
		}
		return r.HookSpecificOutput.PermissionDecisionReason
	}
	// allowed: permissionDecision allow (what skips Claude Code's prompt), exit 0
	out, errOut, code := runHookBinary(t, hook, cfg, hookJSON("s", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "Welcome.md")}))
	if code != 0 || !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Errorf("allowed Read: exit %d, out %q, err %q", code, out, errOut)
	}
	// denied: the deny JSON, exit 0
	out, _, code = runHookBinary(t, hook, cfg, hookJSON("s", vault, "Write", map[string]any{"file_path": filepath.Join(vault, "мета/x.md"), "content": "x"}))
	if code != 0 || !strings.Contains(deny(out), "zone protected") {
		t.Errorf("denied Write: exit %d, out %q", code, out)
	}
	out, _, code = runHookBinary(t, hook, cfg, hookJSON("s", vault, "Bash", map[string]any{"command": "echo x > мета/x.md"}))
	if code != 0 || !strings.Contains(deny(out), "zone protected") {
		t.Errorf("denied Bash: exit %d, out %q", code, out)
	}
	out, _, code = runHookBinary(t, hook, cfg, hookJSON("s", vault, "SomeNewTool", map[string]any{}))
	if code != 0 || !strings.Contains(deny(out), "not allowed here") {
		t.Errorf("unknown tool: exit %d, out %q", code, out)
	}
	broken := filepath.Join(t.TempDir(), "broken.toml")
	os.WriteFile(broken, []byte("vault = [unterminated"), 0o644)
	// the hook's own failures: exit 2, reason on stderr
	for name, c := range map[string]struct{ cfg, stdin string }{
		"empty stdin":    {cfg, ""},
		"not JSON":       {cfg, "{not json"},
		"no tool name":   {cfg, `{"session_id":"s"}`},
		"missing config": {filepath.Join(t.TempDir(), "nope.toml"), hookJSON("s", vault, "Read", map[string]any{"file_path": "/x"})},
		"no config flag": {"", hookJSON("s", vault, "Read", map[string]any{"file_path": "/x"})},
		"broken config":  {broken, hookJSON("s", vault, "Read", map[string]any{"file_path": "/x"})},
	} {
		out, errOut, code := runHookBinary(t, hook, c.cfg, c.stdin)
		if code != 2 || out != "" || !strings.Contains(errOut, "denied") {
			t.Errorf("%s: exit %d, out %q, err %q", name, code, out, errOut)
		}
	}
}

// TestHookAllowIsNotForBuiltins: with [hook] allow naming or matching
// Claude Code's Bash or Write, both are judged as without it, and the hook
// says on stderr that the entry changes nothing.
func TestHookAllowIsNotForBuiltins(t *testing.T) {
	for name, hook := range map[string][]string{
		"vaultgate hook": {binary(t), "hook"},
		"vaultgate-hook": {filepath.Join(bundle(t), "vaultgate-hook")},
	} {
		t.Run(name, func(t *testing.T) { testHookAllowIsNotForBuiltins(t, hook) })
	}
}

func testHookAllowIsNotForBuiltins(t *testing.T, hook []string) {
	vault, cfg, _ := sampleVault(t)
	base, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	calls := []string{
		hookJSON("s", vault, "Bash", map[string]any{"command": "rm -rf notes"}),
		hookJSON("s", vault, "Write", map[string]any{"file_path": filepath.Join(vault, "мета/x.md"), "content": "x"}),
	}
	var want []string
	for _, c := range calls {
		out, errOut, code := runHookBinary(t, hook, cfg, c)
		if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || errOut != "" {
			t.Fatalf("without allow: exit %d, out %q, err %q", code, out, errOut)
		}
		want = append(want, out)
	}
	for allow, matched := range map[string]string{`["*"]`: "Read, Write", `["Bash"]`: "Bash", `["B*"]`: "Bash"} {
		withAllow := filepath.Join(t.TempDir(), "allow.toml")
		body := strings.Replace(string(base), `vault = "vault"`, `vault = "`+vault+`"`, 1)
		body = strings.Replace(body, `path = "state/audit.jsonl"`, `path = "`+filepath.Join(filepath.Dir(cfg), "state/audit.jsonl")+`"`, 1)
		os.WriteFile(withAllow, []byte(body+"[hook]\nallow = "+allow+"\n"), 0o644)
		for i, c := range calls {
			out, errOut, code := runHookBinary(t, hook, withAllow, c)
			if code != 0 || out != want[i] {
				t.Errorf("allow = %s: exit %d, out %q, want %q (stderr %q)", allow, code, out, want[i], errOut)
			}
			if !strings.Contains(errOut, "warning: [hook] allow matches "+matched) || !strings.Contains(errOut, "never switches their checks off") {
				t.Errorf("allow = %s: stderr %q", allow, errOut)
			}
		}
	}
}
