package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWallTxnSymlinks: a symlink bash leaves in the vault — made by ln or
// a program, put where a file stood, or moved so that it leads elsewhere
// — may lead only where the agent may read: never out of the vault (an
// absolute target, or ".." climbing out), never into a hidden zone, never
// to a control path or a reserved name. A refused link keeps the whole
// call out of the vault; a link to where the agent may read (a protected
// note too) is committed as made.
func TestWallTxnSymlinks(t *testing.T) {
	requireOverlay(t)
	const also = "echo new > write/new.md; " // a change of the same call, which must not be applied either
	for _, c := range []struct {
		command string
		setup   func(t *testing.T, root string)
		refused string            // the refused change; "" for allowed
		why     string            // words of the refusal ("a|b": either)
		links   map[string]string // allowed: the links the vault then holds, and their targets
	}{
		{command: also + "ln -s /etc/passwd p", refused: "create p", why: "it leads out of the vault"},
		{command: also + "ln -s ../../outside x", refused: "create x", why: "it leads out of the vault"},
		{command: also + "ln -s ../../../etc/passwd notes/x", refused: "create notes/x", why: "it leads out of the vault"},
		{command: also + "ln -s ../../notes/b.md notes/sub/x && ln -s ../../../etc notes/sub/y", refused: "create notes/sub/y", why: "it leads out of the vault"},
		{command: also + "ln -s hidden/h.md x", refused: "create x", why: "it leads where you may not read"},
		{command: also + "ln -s ../hidden notes/h", refused: "create notes/h", why: "it leads where you may not read"},
		{command: also + "ln -s . all", refused: "create all", why: "it leads where you may not read"},
		{command: also + "ln -s .git/config x", refused: "create x", why: "control path|where you may not read"}, // .git is hidden beside a hidden zone
		{command: also + "ln -s ../.obsidian/plugins notes/p", refused: "create notes/p", why: "control path"},
		{command: also + "ln -s .vaultgate-tmp-1 x", refused: "create x", why: "control path"},
		{command: also + "ln -s notes/sub/../../hidden/h.md x", refused: "create x", why: "can't tell where it leads"},
		{command: also + `python3 -c "import os; os.symlink('/root/.ssh', 'notes/keys')"`, refused: "create notes/keys", why: "it leads out of the vault"},
		{command: also + `python3 -c "import os; os.symlink('../../../../../../../../etc/shadow', 'write/s')"`, refused: "create write/s", why: "it leads out of the vault"},
		{command: also + `python3 -c "import os; os.remove('write/w.md'); os.symlink('../hidden/h.md', 'write/w.md')"`,
			refused: "modify write/w.md", why: "it leads where you may not read"},
		{command: also + "ln -sf /etc/hostname write/w.md", refused: "modify write/w.md", why: "it leads out of the vault"},
		{command: also + "ln -s tohidden/h.md notes/x", refused: "create notes/x", why: "it leads where you may not read",
			setup: func(t *testing.T, root string) { symlink(t, "../hidden", root, "notes/tohidden") }},
		{command: also + "ln -s notes n", refused: "create n", why: "control path|where you may not read",
			setup: func(t *testing.T, root string) { mkfile(t, root, "notes/proj/.git/config") }},
		// a further name of the person's link (the overlay copies the link up: a new one)
		{command: also + `python3 -c "import os; os.link('write/out', 'write/o2', follow_symlinks=False)"`, refused: "create write/o2", why: "it leads out of the vault",
			setup: func(t *testing.T, root string) { symlink(t, "/etc", root, "write/out") }},
		// A link that leads somewhere new when moved, alone or in its folder.
		{command: also + "mv write/a/l write/l", refused: "move-in write/l <- write/a/l", why: "it leads out of the vault",
			setup: func(t *testing.T, root string) { symlink(t, "../../w.md", root, "write/a/l") }},
		{command: also + "mv write/a/b b", refused: "move-in b/l <- write/a/b/l", why: "it leads out of the vault",
			setup: func(t *testing.T, root string) { symlink(t, "../../w.md", root, "write/a/b/l") }},
		// Positive controls: where the agent may read.
		{command: "ln -s notes/b.md notes/link", links: map[string]string{"notes/link": "notes/b.md"}},
		{command: "ln -s b.md notes/l && ln -sr notes/sub/c.md notes/c", links: map[string]string{"notes/l": "b.md", "notes/c": "sub/c.md"}},
		{command: "ln -s мета/план.md x", links: map[string]string{"x": "мета/план.md"}},
		{command: "ln -s ../мета notes/m", links: map[string]string{"notes/m": "../мета"}},
		{command: "ln -s notes/sub s", links: map[string]string{"s": "notes/sub"}},
		{command: "ln -s ../notes/not-yet.md write/later", links: map[string]string{"write/later": "../notes/not-yet.md"}},
		{command: `python3 -c "import os; os.symlink('../notes/b.md', 'write/b')"`, links: map[string]string{"write/b": "../notes/b.md"}},
		{command: "mv write/a/l write/a/l2", links: map[string]string{"write/a/l2": "../../w.md"},
			setup: func(t *testing.T, root string) { symlink(t, "../../w.md", root, "write/a/l") }},
		{command: "mv write/a/b write/c", links: map[string]string{"write/c/l": "../../w.md"},
			setup: func(t *testing.T, root string) { symlink(t, "../../w.md", root, "write/a/b/l") }},
	} {
		t.Run(c.command, func(t *testing.T) {
			s, root := txnVault(t)
			if c.setup != nil {
				c.setup(t, root)

			}
			before := tree(t, root)
			o := runBash(t, s, c.command, 0)
			if o.err != nil || o.deny != nil {
				t.Fatalf("refused before it ran: deny %v, err %v", o.deny, o.err)
			}
			if c.refused == "" {
				if o.res.NotApplied != "" {
					t.Fatalf("nothing applied: %s (real %v)", o.res.Text, o.res.Real)
				}
				for link, target := range c.links {
					if got, err := os.Readlink(filepath.Join(root, link)); err != nil || got != target {
						t.Errorf("%s → %q (%v), want → %q", link, got, err, target)
					}
				}
				return
			}
			if o.res.NotApplied == "" || !containsAny(o.res.Text, c.why) {
				t.Errorf("result %q, want nothing applied because %q (real %v)", o.res.Text, c.why, o.res.Real)
			}
			var refused []string
			for _, e := range o.res.Real {
				if e.Refused {
					refused = append(refused, e.String())
				}
			}
			if strings.Join(refused, ";") != c.refused {
				t.Errorf("refused %v, want %s alone (real %v)", refused, c.refused, o.res.Real)
			}
			if strings.Contains(o.res.Text, "secret-text") {
				t.Errorf("the result tells the hidden note: %q", o.res.Text)
			}
			if diff := changed(before, tree(t, root)); len(diff) > 0 {
				t.Errorf("the vault changed: %v", diff)
			}
			if left := layersLeft(t, s); len(left) > 0 {
				t.Errorf("layers left in the state folder: %v", left)
			}
		})
	}
}

func symlink(t *testing.T, target, root, link string) {
	t.Helper()
	p := filepath.Join(root, link)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func mkfile(t *testing.T, root, name string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
