package agentrun

import (
	"encoding/json"
	"github.com/vaultgate/vaultgate/claude"
	"slices"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
)

// TestEnv is the agent's environment as a table: what [run] env and
// [[run.secrets]] let through of a launcher's environment full of
// credentials.
func TestEnv(t *testing.T) {
	launcher := []string{
		"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=en_GB", "TERM=xterm", "TZ=UTC",
		"DATABASE_URL=postgres://secret", "POSTGRES_PASSWORD=pw", "GH_PAT=ghp", "AWS_SECRET_ACCESS_KEY=aws",
		"GITHUB_TOKEN=tok", "OPENAI_API_KEY=oai", "LD_PRELOAD=/x.so", "BASH_ENV=/x", "HOME=/root",
		"VAULTGATE_TOKEN=vt", "EDITOR=vi", "MY_KEY=agentkey", "SSH_AUTH_SOCK=/s", "PATH=/second",
	}
	set := map[string]string{"HOME": "/agent", "USER": "agent"}
	cases := []struct {
		env     []string
		secrets []config.RunSecret
		want    []string
	}{
		{config.DefaultRunEnv, nil, []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=en_GB", "TERM=xterm", "TZ=UTC", "HOME=/agent", "USER=agent"}},
		// A glob never lets a credential through, nor what changes how programs start.
		{[]string{"*"}, nil, []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "LC_ALL=C", "LC_TIME=en_GB", "TERM=xterm", "TZ=UTC", "EDITOR=vi", "HOME=/agent", "USER=agent"}},
		{[]string{"E*", "*_KEY", "GH_*"}, nil, []string{"EDITOR=vi", "HOME=/agent", "USER=agent"}},
		// A secret is the one way, under the name it is given.
		{[]string{"PATH"}, []config.RunSecret{{Name: "ANTHROPIC_API_KEY", FromEnv: "MY_KEY"}}, []string{"PATH=/usr/bin:/bin", "ANTHROPIC_API_KEY=agentkey", "HOME=/agent", "USER=agent"}},
		// HOME of the launcher never passes; run's own wins.
		{[]string{"HOME", "PATH"}, nil, []string{"PATH=/usr/bin:/bin", "HOME=/agent", "USER=agent"}},
	}
	for _, c := range cases {
		got, err := Env(config.Run{Env: c.env, Secrets: c.secrets}, launcher, set)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("env %v secrets %v:\n got  %v %v\n want %v", c.env, c.secrets, got, err, c.want)
		}
	}
	if _, err := Env(config.Run{Secrets: []config.RunSecret{{Name: "K", FromEnv: "UNSET_ONE"}}}, launcher, set); err == nil || !strings.Contains(err.Error(), "$UNSET_ONE is not set") {
		t.Errorf("a secret whose variable is unset: %v", err)
	}
	// An optional secret whose variable is unset is left out, and the
	// launcher's variable of its name does not pass in its place.
	opt := config.Run{Env: []string{"*"}, Secrets: []config.RunSecret{{Name: "EDITOR", FromEnv: "UNSET_ONE", Optional: true}, {Name: "ANTHROPIC_API_KEY", FromEnv: "MY_KEY", Optional: true}}}
	if got, err := Env(opt, launcher, set); err != nil || slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "EDITOR=") }) || !slices.Contains(got, "ANTHROPIC_API_KEY=agentkey") {
		t.Errorf("optional secrets: %v %v", got, err)
	}
}

// TestClaudeArgs: run --claude's flags come right after the program, so
// the person's arguments can't take them as values, and hold no secret.
func TestClaudeArgs(t *testing.T) {
	got := claude.RunArgs([]string{"claude", "-p", "hello"}, "/r/mcp.json", "/r/s.json")
	want := []string{"claude", "--mcp-config", "/r/mcp.json", "--strict-mcp-config", "--settings", "/r/s.json", "--permission-mode", "bypassPermissions", "-p", "hello"}
	if !slices.Equal(got, want) {
		t.Errorf("args %v", got)
	}
	b, err := claudeSettings("/opt/vault gate/vaultgate", "ru", "vault", "/r/sock", "/r/token")
	if err != nil {
		t.Fatal(err)
	}
	type hook struct {
		Matcher string
		Hooks   []struct {
			Type, Command, OnFailure string
		}
	}
	var s struct {
		Hooks struct {
			PreToolUse    []hook
			PostToolBatch []hook
		}
		Permissions struct {
			DefaultMode string
			Deny        []string
		}
		Env map[string]string
	}
	if err := json.Unmarshal(b, &s); err != nil || len(s.Hooks.PreToolUse) != 1 || len(s.Hooks.PostToolBatch) != 1 {
		t.Fatalf("settings %s: %v", b, err)
	}
	h := s.Hooks.PreToolUse[0]
	for _, tool := range []string{"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "Bash"} {
		if !slices.Contains(strings.Split(h.Matcher, "|"), tool) {
			t.Errorf("matcher %q lacks %s", h.Matcher, tool)
		}
		if !slices.Contains(s.Permissions.Deny, tool) {
			t.Errorf("permissions.deny %q lacks %s: Claude Code would offer it", s.Permissions.Deny, tool)
		}
	}
	for _, tool := range []string{"TodoWrite", "Task", "Agent", "WebFetch", "mcp__vault"} {
		if slices.Contains(s.Permissions.Deny, tool) {
			t.Errorf("permissions.deny holds %s", tool)
		}
	}
	const cmd = "'/opt/vault gate/vaultgate' connect " + HookArg + " --lang ru --server vault --socket /r/sock --token-file /r/token"
	if len(h.Hooks) != 1 || h.Hooks[0].Command != cmd+" || exit 2" || h.Hooks[0].OnFailure != "block" {
		t.Errorf("PreToolUse hook %+v", h.Hooks)
	}
	if bh := s.Hooks.PostToolBatch[0].Hooks; len(bh) != 1 || bh[0].Command != cmd {
		t.Errorf("PostToolBatch hook %+v", bh)
	}
	if s.Permissions.DefaultMode != "bypassPermissions" || s.Env["DISABLE_AUTOUPDATER"] != "1" || s.Env["ENABLE_TOOL_SEARCH"] != "false" {
		t.Errorf("settings %s", b)
	}
	m, _ := mcpConfig("vault", "/usr/bin/vaultgate", "/r/sock", "/r/token")
	var mc struct {
		MCPServers map[string]struct {
			Type, Command string
			Args          []string
			Env           map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(m, &mc); err != nil {
		t.Fatal(err)
	}
	v := mc.MCPServers["vault"]
	if v.Type != "stdio" || v.Command != "/usr/bin/vaultgate" || !slices.Equal(v.Args, []string{"connect"}) || v.Env[SocketEnv] != "/r/sock" || v.Env[TokenFileEnv] != "/r/token" {
		t.Errorf("mcp config %s", m)
	}
}
