package agentrun

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Under `run --claude`, Claude Code's built-ins that touch files are
// refused by a hook with a reason that points to the vault's tools: the
// vault is not in the agent's view, so they could only act on the agent's
// own files, and a hook started in the view has no config to judge them
// by. The boundary, not this list, keeps them from the vault: a built-in
// left off it still sees no vault.
//
// builtins maps each refused built-in to the vault's tool that does its
// work ("" for none).
var builtins = map[string]string{
	"Read": "read", "Write": "write", "Edit": "edit", "MultiEdit": "edit",
	"NotebookEdit": "edit", "NotebookRead": "read", "Glob": "list", "LS": "list",
	"Grep": "search", "Bash": "bash", "BashOutput": "bash", "KillShell": "", "KillBash": "",
	"EnterWorktree": "", "ExitWorktree": "", "Monitor": "",
}

// BuiltinInstead returns the vault's tool for a refused built-in, and
// whether the built-in is refused under run --claude at all.
func BuiltinInstead(tool string) (string, bool) {
	t, ok := builtins[tool]
	return t, ok
}

// HookArg is the argument of `vaultgate connect` that makes it the hook
// of run --claude.
const HookArg = "--refuse-builtins"

// claudeSettings is the --settings file of run --claude: the hook on
// every refused built-in ("|| exit 2" blocks the call should the hook
// itself fail), and a bypass of Claude Code's own prompts, so that nothing
// asks the person: inside the view, the vault's tools are judged by
// vaultgate and the rest can reach nothing of the person's.
func claudeSettings(exe, lang, server string) ([]byte, error) {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	words := []string{exe, "connect", HookArg, "--lang", lang, "--server", server}
	for i, w := range words {
		q, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return nil, fmt.Errorf("the hook's command: %w", err)
		}
		words[i] = q
	}
	hook := map[string]any{
		"type":    "command",
		"command": strings.Join(words, " ") + " || exit 2",
	}
	s := map[string]any{
		"hooks": map[string]any{
			"PreToolUse": []any{map[string]any{"matcher": strings.Join(names, "|"), "hooks": []any{hook}}},
		},
		"permissions": map[string]any{"defaultMode": "bypassPermissions"},
	}
	return json.MarshalIndent(s, "", "  ")
}

// claudeArgs puts run --claude's flags right after the program's name, so
// that none of the person's own arguments can take them as values.
func claudeArgs(argv []string, mcpConfig, settings string) []string {
	out := []string{argv[0], "--mcp-config", mcpConfig, "--strict-mcp-config", "--settings", settings, "--permission-mode", "bypassPermissions"}
	return append(out, argv[1:]...)
}

// mcpConfig is the agent's MCP config in Claude Code's .mcp.json format:
// one stdio server, the launcher's binary as `vaultgate connect`, with
// where the socket and the token are in its environment (the token itself
// is in the file, never in argv).
func mcpConfig(server, exe, socket, tokenFile string) ([]byte, error) {
	c := map[string]any{"mcpServers": map[string]any{server: map[string]any{
		"type": "stdio", "command": exe, "args": []string{"connect"},
		"env": map[string]string{SocketEnv: socket, TokenFileEnv: tokenFile},
	}}}
	return json.MarshalIndent(c, "", "  ")
}

// The variables `vaultgate connect` reads.
const (
	SocketEnv    = "VAULTGATE_SOCKET"
	TokenFileEnv = "VAULTGATE_TOKEN_FILE"
	MCPConfigEnv = "VAULTGATE_MCP_CONFIG"
)
