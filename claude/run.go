package claude

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What vaultgate run --claude hands Claude Code: its MCP config, its
// settings, and the flags that make it use them and nothing else.

// RunSettings is the --settings file of run --claude.
//
// The built-ins refused under run are denied by name (permissions.deny),
// which Claude Code 2.1.332 reads as "not offered": they are left out of
// the tools the model sees, so it sees the vault's tools instead, and a
// call of one is answered "No such tool available" without running a
// hook. hook (its words, quoted here) runs twice: on PreToolUse of those
// names, for a Claude Code that offers one anyway, where it refuses the
// call ("|| exit 2" and onFailure block it should the hook itself fail);
// and on PostToolBatch, which lists every call of a batch, the attempts
// at a denied built-in included, where it reports them to the run's server
// for the audit log. Bypass asks the person nothing: inside the agent's
// view the vault's tools are judged by vaultgate and the rest can reach
// nothing of the person's. The environment turns off the auto-updater (the
// program is read-only in the view) and deferred tools (the vault's are
// the agent's only file tools: offered, not searched for).
func RunSettings(hook []string) ([]byte, error) {
	names := RunDenied()
	words := slices.Clone(hook)
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return nil, fmt.Errorf("the hook's command: %w", err)
		}
		words[i] = q
	}
	cmd := strings.Join(words, " ")
	pre := map[string]any{"type": "command", "command": cmd + " || exit 2", "timeout": 30, "onFailure": "block"}
	// After the batch nothing is left to block: a failure is the hook's
	// own, shown to the person, not a refusal.
	batch := map[string]any{"type": "command", "command": cmd, "timeout": 30}
	s := map[string]any{
		"hooks": map[string]any{
			"PreToolUse":    []any{map[string]any{"matcher": strings.Join(names, "|"), "hooks": []any{pre}}},
			"PostToolBatch": []any{map[string]any{"hooks": []any{batch}}},
		},
		"permissions": map[string]any{"defaultMode": "bypassPermissions", "deny": names},
		"env":         map[string]any{"DISABLE_AUTOUPDATER": "1", "ENABLE_TOOL_SEARCH": "false"},
	}
	return json.MarshalIndent(s, "", "  ")
}

// RunDenied are the built-ins refused under vaultgate run --claude, sorted.
func RunDenied() []string {
	var names []string
	for _, b := range catalogue {
		if b.UnderRun {
			names = append(names, b.Name)
		}
	}
	slices.Sort(names)
	return names
}

// RunArgs puts run --claude's flags right after the program's name, so
// that none of the person's own arguments can take them as values.
func RunArgs(argv []string, mcpConfig, settings string) []string {
	out := []string{argv[0], "--mcp-config", mcpConfig, "--strict-mcp-config", "--settings", settings, "--permission-mode", "bypassPermissions"}
	return append(out, argv[1:]...)
}

// RunMCPConfig is the agent's MCP config in .mcp.json's format: one stdio
// server, command with args, and env (where to reach the run's socket:
// never a secret in args).
func RunMCPConfig(server, command string, args []string, env map[string]string) ([]byte, error) {
	c := map[string]any{"mcpServers": map[string]any{server: map[string]any{
		"type": "stdio", "command": command, "args": args, "env": env,
	}}}
	return json.MarshalIndent(c, "", "  ")
}
