// Package tools holds vaultgate's MCP tools, and Claude Code's as the hook
// sees them: for each, a planner that turns the call's arguments into
// effects, and a runner that does the work on an afero.Fs confined to the
// vault (package vaultfs's; for Claude Code's, only the bookkeeping:
// Claude Code runs them).
// The tools' own rules (bash, hook_scope) live here too, beside the
// planners whose typed facts they read; package policy knows no tool.
//
// A tool never decides a zone: it reports what it would do, the policy
// chain judges, and only then does the runner touch the disk. Planners
// resolve existing symlinks in user space so effects name real paths.
package tools
