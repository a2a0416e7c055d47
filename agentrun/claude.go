package agentrun

import (
	"github.com/vaultgate/vaultgate/claude"
)

// Under `run --claude`, Claude Code's built-ins that touch files are not
// offered (denied in its settings), and one that is called anyway is
// refused by a hook (`vaultgate connect --refuse-builtins`) with a reason
// that points to the vault's tools, and reported to the run for the audit
// log (builtins.go): the vault is not in the agent's view, so they could
// only act on the agent's own files, and a hook started in the view has no
// config to judge them by. The boundary, not the list, keeps them from the
// vault: a built-in left off it still sees no vault. Which they are, and
// the vault's tool instead of each, is a column of Claude Code's catalogue
// (claude.RunInstead).

// HookArg is the argument of `vaultgate connect` that makes it the hook
// of run --claude.
const HookArg = "--refuse-builtins"

// claudeSettings is run --claude's settings file, with this binary's
// connect as the hook, told where the run's socket and token are (paths,
// not secrets) to report the attempts it refuses.
func claudeSettings(exe, lang, server, socket, tokenFile string) ([]byte, error) {
	return claude.RunSettings([]string{exe, "connect", HookArg, "--lang", lang, "--server", server, "--socket", socket, "--token-file", tokenFile})
}

// mcpConfig is the agent's MCP config: the launcher's binary as `vaultgate
// connect`, with where the socket and the token are in its environment
// (the token itself is in the file, never in argv).
func mcpConfig(server, exe, socket, tokenFile string) ([]byte, error) {
	return claude.RunMCPConfig(server, exe, []string{"connect"}, map[string]string{SocketEnv: socket, TokenFileEnv: tokenFile})
}

// The variables `vaultgate connect` reads.
const (
	SocketEnv    = "VAULTGATE_SOCKET"
	TokenFileEnv = "VAULTGATE_TOKEN_FILE"
	MCPConfigEnv = "VAULTGATE_MCP_CONFIG"
)
