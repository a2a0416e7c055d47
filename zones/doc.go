// Package zones decides which zone a vault path is in and what that zone
// allows. It is pure: it never touches the disk, so every cell of the zone
// table is a one-line test. Callers resolve symlinks and probe the file
// system (case folding) before they ask.
//
// A path is matched against the configured entries component by component
// ("мета2" is not inside "мета"), the longest entry winning. Paths and entries
// are compared in NFC, and a path's zone is the stricter of its zone as
// spelled and its zone under full Unicode case folding, so that a file system
// that folds case can never reach a protected folder by another spelling.
//
// Control paths (the config, .git, .claude, .mcp.json, .vscode, the audit log
// and the state folder) are capped at protected or hidden whatever the
// configuration says: an agent must never rewrite its own next boundary.
package zones
