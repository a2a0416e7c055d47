package zones

import (
	"path"
	"strings"
)

// Control is a path that makes a program of the person's run code, or
// loosens a boundary, when something is written there: the agent may
// never change one, whatever the config says (a control path is at most
// protected; a config entry may make it hidden). This table is the one
// place that says which they are; the zone table caps them (Zone), the
// wall keeps them read-only, and the docs list them from it.
type Control struct {
	// Name is a file or folder name matched at any depth, folded (so
	// ".GIT" is ".git"); with AtRoot, a vault-relative path matched at the
	// vault's root only, with everything below it.
	Name   string
	AtRoot bool
	File   bool // a file, not a folder (what a placeholder for it is)
	// Copies: it holds copies of the vault's files (git's objects, packs
	// and index hold every tracked file), so it is hidden, not only
	// protected, whenever the vault has a zone that may not be read.
	Copies bool
	Why    string
}

// Controls is the table of control paths.
var Controls = []Control{
	{Name: ".git", Copies: true, Why: "git runs its hooks and obeys its config (core.fsmonitor, core.pager, aliases) in the person's shell; its objects hold a copy of every tracked file, hidden ones included"},
	{Name: ".claude", Why: "Claude Code's project settings and hooks: commands it runs, permissions it grants"},
	{Name: ".mcp.json", File: true, Why: "the MCP servers Claude Code starts, with their commands"},
	{Name: ".vscode", Why: "VS Code's tasks and settings run programs when the folder is opened"},
	{Name: ".codex", Why: "Codex CLI's project config and hooks"},
	{Name: ".gemini", Why: "Gemini CLI's project settings and hooks"},
	{Name: ".cursor", Why: "Cursor's hooks (hooks.json) and its sandbox settings (sandbox.json)"},
	{Name: ".envrc", File: true, Why: "direnv runs it in the person's shell on cd into the folder"},
	{Name: ".obsidian/plugins", AtRoot: true, Why: "Obsidian's community plugins: their main.js runs inside Obsidian, unconfined"},
	{Name: ".obsidian/community-plugins.json", AtRoot: true, File: true, Why: "which community plugins Obsidian loads"},
}

// ControlNames are the Controls matched at any depth, by name.
var ControlNames = controlNames()

func controlNames() []string {
	var out []string
	for _, c := range Controls {
		if !c.AtRoot {
			out = append(out, c.Name)
		}
	}
	return out
}

// ControlRoots are the Controls matched at the vault's root only.
var ControlRoots = controlRoots()

func controlRoots() []string {
	var out []string
	for _, c := range Controls {
		if c.AtRoot {
			out = append(out, c.Name)
		}
	}
	return out
}

// anyDepth is ControlNames as a set, for controlCap: true for one that
// holds copies.
var anyDepth = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range Controls {
		if !c.AtRoot {
			m[c.Name] = c.Copies
		}
	}
	return m
}()

// HoldsCopies reports whether a name is a control path that holds copies
// of the vault's files (.git), folded first. Nothing inside one needs a
// cover of its own: it is hidden whole where the vault has a zone that
// may not be read, and read-only whole otherwise.
func HoldsCopies(name string) bool {
	var buf [64]byte
	return anyDepth[foldedName(buf[:], name)]
}

// IsControlName reports whether a file or folder name is a control path
// wherever it is (folded first).
func IsControlName(name string) bool {
	var buf [64]byte
	_, ok := anyDepth[foldedName(buf[:], name)]
	return ok
}

// controlCap protects every path with a control name among its components,
// and every path at or below a control path of the vault's root; one that
// holds copies of the vault's files is hidden instead when copiesHidden
// (the vault has a zone that may not be read). f is folded, so ".GIT" and
// ".Claude" are caught too.
func controlCap[K ~string | ~[]byte](f K, copiesHidden bool) Mode {
	for _, r := range ControlRoots {
		if len(f) >= len(r) && string(f[:len(r)]) == r && (len(f) == len(r) || f[len(r)] == '/') {
			return Protected
		}
	}
	for len(f) > 0 {
		i := 0
		for i < len(f) && f[i] != '/' {
			i++
		}
		if copies, ok := anyDepth[string(f[:i])]; ok {
			if copies && copiesHidden {
				return Hidden
			}
			return Protected
		}
		if i == len(f) {
			break
		}
		f = f[i+1:]
	}
	return Write
}

// ControlWhy says why p is a control path, or "" when it is none.
func ControlWhy(p Path) string {
	f := fold(p.p)
	for _, c := range Controls {
		if c.AtRoot {
			if f == c.Name || strings.HasPrefix(f, c.Name+"/") {
				return c.Why
			}
			continue
		}
		for _, comp := range strings.Split(f, "/") {
			if comp == c.Name {
				return c.Why
			}
		}
	}
	return ""
}

// ControlIsFile reports whether the control path rel (a name, or a root
// path) is a file rather than a folder.
func ControlIsFile(rel string) bool {
	for _, c := range Controls {
		if c.Name == rel || !c.AtRoot && c.Name == Fold(path.Base(rel)) {
			return c.File
		}
	}
	return false
}
