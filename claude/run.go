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

// RunSettings is the --settings file of run --claude: hook (its words,
// quoted here) on every built-in refused under run ("|| exit 2" blocks the
// call should the hook itself fail), and a bypass of Claude Code's own
// prompts, so that nothing asks the person: inside the agent's view the
// vault's tools are judged by vaultgate and the rest can reach nothing of
// the person's.
func RunSettings(hook []string) ([]byte, error) {
	var names []string
	for _, b := range catalogue {
		if b.UnderRun {
			names = append(names, b.Name)
		}
	}
	slices.Sort(names)
	words := slices.Clone(hook)
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return nil, fmt.Errorf("the hook's command: %w", err)
		}
		words[i] = q
	}
	h := map[string]any{"type": "command", "command": strings.Join(words, " ") + " || exit 2"}
	s := map[string]any{
		"hooks": map[string]any{
			"PreToolUse": []any{map[string]any{"matcher": strings.Join(names, "|"), "hooks": []any{h}}},
		},
		"permissions": map[string]any{"defaultMode": "bypassPermissions"},
	}
	return json.MarshalIndent(s, "", "  ")
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
