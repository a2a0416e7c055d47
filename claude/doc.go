// Package claude is everything vaultgate knows of Claude Code as an agent
// whose own tools it puts behind the boundary: the hook's input and
// answer, the catalogue of Claude Code's built-in tools (each judged by
// its effects, passed, or refused on purpose, with why), the rewrite of
// an allowed Bash into vaultgate exec, the check of Claude Code's own
// sandbox settings, and the settings vaultgate writes for it. It plans
// and judges nothing: the built-ins the catalogue marks judged are
// planned in package tools, and judged by the gate like any call. Another
// agent gets a package of its own beside this one.
package claude
