package claude

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/say"
)

// TestCatalogue: every built-in is named once, with one treatment; a
// refused one has its reason; Verdict passes, refuses or leaves to
// [hook] allow as the table says.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range catalogue {
		if seen[b.Name] {
			t.Errorf("%s is named twice", b.Name)
		}
		seen[b.Name] = true
		if (b.Treatment == Refused) != (b.Refusal != say.BuiltinWhy{}) {
			t.Errorf("%s: treatment %d, and a refusal: %v", b.Name, b.Treatment, b.Refusal != say.BuiltinWhy{})
		}
	}
	if got := Named(Judged); !slices.Equal(got, []string{"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "Bash"}) {
		t.Errorf("judged: %v", got)
	}
	for _, c := range []struct {
		tool   string
		input  map[string]any
		pass   bool
		refuse string // part of the reason
	}{
		{"Agent", nil, true, ""},
		{"Agent", map[string]any{"description": "d", "prompt": "p", "subagent_type": "general-purpose"}, true, ""},
		{"Agent", map[string]any{"description": "d", "prompt": "p", "isolation": nil}, true, ""},
		{"Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "worktree"}, false, ".claude/worktrees"},
		{"Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "remote"}, false, "without isolation"},
		{"Task", map[string]any{"description": "d", "prompt": "p", "isolation": "worktree"}, false, ".claude/worktrees"},
		{"CronCreate", map[string]any{"cron": "* * * * *"}, true, ""},
		{"CronCreate", map[string]any{"durable": true}, false, "scheduled_tasks.json"},
		{"EnterWorktree", nil, false, "worktree"},
		{"Read", nil, false, ""},     // judged by its effects, not here
		{"WebFetch", nil, false, ""}, // not a built-in of the catalogue: [hook] allow decides
		{"mcp__vault__read", nil, false, ""},
	} {
		pass, why := Verdict(c.tool, c.input)
		got := ""
		if why != nil {
			got = say.HookBuiltinRefused{Tool: c.tool, Why: *why}.Text(say.English)
		}
		if pass != c.pass || (c.refuse == "") != (why == nil) || !strings.Contains(got, c.refuse) {
			t.Errorf("%s %v: pass %v, why %q", c.tool, c.input, pass, got)
		}
	}
}

// TestExecRewrite: the rewrite is one bash command whose words, as bash
// splits them, are the binary, exec, and its arguments — whatever the
// paths and the command hold — and keeps every other field of the input.
func TestExecRewrite(t *testing.T) {
	x := &Exec{Binary: "/opt/vault gate/vaultgate-hook", Config: "/home/me/it's.toml", Agent: "bot", CallID: "0123456789abcdef0123456789abcdef"}
	command := "printf '%s\\n' \"$HOME\" `id` && rm -rf 'ёж 🦔'\n# трудно"
	in := map[string]any{"command": command, "description": "d", "run_in_background": true}
	out, err := x.RewriteBash(in, command, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if in["command"] != command {
		t.Error("the rewrite changed the input it was given")
	}
	if out["description"] != "d" || out["run_in_background"] != true || out["timeout"] != int((105*time.Second)/time.Millisecond) {
		t.Errorf("fields: %v", out)
	}
	words, err := exec.Command("bash", "-c", `w() { printf '%s\0' "$@"; }; w `+out["command"].(string)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
	want := []string{x.Binary, "exec", "--config", x.Config, "--agent", "bot", "--call", x.CallID, "--timeout", "90s", "--command-b64"}
	if len(got) != len(want)+1 || !slices.Equal(got[:len(want)], want) {
		t.Errorf("words %q", got)
	}
	if _, err := (&Exec{Binary: "/x\x00y"}).Command("ls", time.Second); err == nil {
		t.Error("a NUL in a word was quoted")
	}
}

func TestBashTimeout(t *testing.T) {
	b := &config.Bash{Timeout: 120 * time.Second, MaxTimeout: 300 * time.Second}
	for _, c := range []struct {
		ms    int
		given bool
		want  time.Duration
	}{
		{0, false, 120 * time.Second}, {1, true, time.Second}, {90500, true, 91 * time.Second}, {600000, true, 300 * time.Second}, {0, true, time.Second},
	} {
		if got := BashTimeout(b, c.ms, c.given); got != c.want {
			t.Errorf("%d ms (%v): %v, want %v", c.ms, c.given, got, c.want)
		}
	}
}

func TestParseHookInput(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"", "stdin is empty"}, {"{", "not JSON"}, {`{"tool_input":{}}`, "no tool_name"}, {`{"tool_name":"Read","hook_event_name":"PostToolUse"}`, ""},
	} {
		in, err := ParseHookInput([]byte(c.in))
		switch {
		case c.err == "" && (err != nil || !in.After() || in.ToolInput == nil):
			t.Errorf("%q: %+v %v", c.in, in, err)
		case c.err != "" && (!errors.Is(err, ErrHookInput) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		}
	}
}

// TestSandboxSettings: the last settings file that sets sandbox.enabled
// decides, in Claude Code's order: the user's, the project's, its local
// one.
func TestSandboxSettings(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	write := func(p, body string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	cwd := filepath.Join(project, "notes")
	os.MkdirAll(cwd, 0o755)
	if got := SandboxSettings(cwd, getenv); got != "" {
		t.Errorf("no settings: %q", got)
	}
	user := filepath.Join(home, ".claude/settings.json")
	write(user, `{"sandbox":{"enabled":true}}`)
	if got := SandboxSettings(cwd, getenv); got != user {
		t.Errorf("the user's: %q", got)
	}
	write(filepath.Join(project, ".claude/settings.json"), `{"sandbox":{"enabled":false}}`)
	if got := SandboxSettings(cwd, getenv); got != "" {
		t.Errorf("the project turns it off: %q", got)
	}
	local := filepath.Join(project, ".claude/settings.local.json")
	write(local, `{"sandbox":{"enabled":true}}`)
	if got := SandboxSettings(cwd, getenv); got != local {
		t.Errorf("the local one turns it on: %q", got)
	}
	write(local, `not json`)
	if got := SandboxSettings(cwd, getenv); got != "" {
		t.Errorf("a broken file says nothing: %q", got)
	}
}
