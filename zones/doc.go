// Package zones decides which zone a vault path is in and what that zone
// allows. It is pure: it never touches the disk, so every cell of the zone
// table is a one-line test. Callers resolve symlinks and probe the file
// system (case folding) before they ask.
//
// A zone's kind (Mode) is one entry of the kind table: its name, the set of
// ops it allows, its colours and its words in English and Russian. Nothing
// outside the table compares kinds by order or by name: the stricter of two
// kinds is the one that allows the intersection of their sets, content is
// laundered when its destination allows an op its source does not, and a
// kind is listed when it allows read. Define adds a kind (at init time).
//
// Table.Zone takes a Path, which only Normalize and Path's own methods make:
// a path is judged in one spelling, cleaned, NFC, vault-relative or
// absolute outside. It is matched against the configured entries component
// by component ("мета2" is not inside "мета"), the longest entry winning.
// A path's zone is the stricter of its zone as spelled and its zone under
// full Unicode case folding, so that a file system that folds case can
// never reach a protected folder by another spelling.
//
// Control paths (the config, .git, .claude, .mcp.json, .vscode, the audit log
// and the state folder) are capped at protected or hidden whatever the
// configuration says: an agent must never rewrite its own next boundary.
package zones
