// Package server is the one place where a call goes plan → judge → run →
// record. Every entry point — MCP over stdio or HTTP, the Claude Code hook,
// `vaultgate check` — calls Gate.Call; none of them touches a tool or the
// audit log any other way.
package server
