// Package agentrun is `vaultgate run`: it starts an agent's own process
// (Claude Code, any MCP client) behind the same boundary as the bash tool,
// and serves the vault to it, for that run only, over a unix socket that
// only the agent can reach.
//
// The agent runs as the [run] user (a root launcher) or as the launcher's
// own uid in a user namespace, with no supplementary groups (root only),
// no_new_privs and no capabilities; with an environment built only from
// [run] env and [[run.secrets]]; in a view of the system (sandbox.AgentView)
// where the vault, the config, the state folder and the audit log are not
// there, the person's home is covered, its own home is writable and the
// system is read-only; with only descriptors 0–2; as pid 1 of a pid
// namespace of its own, so that when it ends everything it started ends.
//
// Its only way to the vault is the socket: the launcher serves the vault
// there as its own uid, each connection authenticated by a per-run token
// (in a file, never in argv) and the peer's uid, every call audited with
// via "run" and the run's id. The agent finds the server through an MCP
// config in Claude Code's .mcp.json format, at $VAULTGATE_MCP_CONFIG, whose
// entry runs `vaultgate connect` (the launcher's binary, bound read-only
// into the view) to bridge stdio to the socket.
//
// What this package must never do: start the agent when any layer of the
// wall can't stand up, or when the user, the home or a secret is missing;
// pass a variable of the launcher's that looks like a credential unless a
// [[run.secrets]] entry names it; put a secret or the token in argv; let
// the agent or anything it started outlive the run.
package agentrun
