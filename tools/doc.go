// Package tools holds vaultgate's MCP tools: for each, a planner that turns
// the call's arguments into effects, and a runner that does the work on an
// afero.Fs confined to the vault.
//
// A tool never decides a zone: it reports what it would do, the policy
// chain judges, and only then does the runner touch the disk. Planners
// resolve existing symlinks in user space so effects name real paths.
package tools
