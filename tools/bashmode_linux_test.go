package tools

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// modeOf is the mode of name in the vault, as chmod writes it ("0755").
func modeOf(t *testing.T, root, name string) string {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return octalMode(fi.Mode())
}

// modeVault is txnVault with a folder in the write zone (write/d, 0755)
// and whatever setup adds.
func modeVault(t *testing.T, setup func(t *testing.T, root string)) (*Set, string) {
	t.Helper()
	s, root := txnVault(t)
	if err := os.Mkdir(filepath.Join(root, "write/d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "write/d"), 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if setup != nil {
		setup(t, root)
	}
	return s, root
}

func setMode(t *testing.T, root, name string, mode fs.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(root, name), mode); err != nil {
		t.Fatal(err)
	}
}

// TestWallTxnModeBits: no setuid, setgid, sticky or world-writable bit
// reaches the vault from bash, by chmod or by a program: the call is
// refused whole (its other changes are not applied either), and the
// model is told which bit and how to leave it out.
func TestWallTxnModeBits(t *testing.T) {
	requireOverlay(t)
	type target struct{ name, kind string }
	for _, tg := range []target{{"write/w.md", "file"}, {"write/d", "folder"}, {"notes/a.md", "file in an edit zone"}, {"notes/sub", "folder in an edit zone"}} {
		for _, mode := range []string{"3777", "4755", "2755", "1777", "0777", "o+w", "g+s", "+t", "u+s"} {
			for _, how := range []string{"chmod", "python"} {
				if how == "python" && strings.ContainsAny(mode, "+") {
					continue
				}
				command := fmt.Sprintf("echo new > write/new.md; chmod %s '%s'", mode, tg.name)
				if how == "python" {
					command = fmt.Sprintf(`echo new > write/new.md; python3 -c "import os; os.chmod('%s', 0o%s)"`, tg.name, mode)
				}
				t.Run(tg.kind+"/"+command, func(t *testing.T) {
					s, root := modeVault(t, nil)
					before := tree(t, root)
					o := runBash(t, s, command, 0)
					if o.deny != nil || o.err != nil {
						t.Fatalf("refused before it ran: deny %v, err %v", o.deny, o.err)
					}
					if o.res.NotApplied == "" || !strings.Contains(o.res.Text, "no setuid, setgid, sticky or world-writable bit reaches the vault from bash") ||
						!strings.Contains(o.res.Text, fmt.Sprintf("give %q mode", tg.name)) {
						t.Errorf("result %q, want nothing applied for the mode of %s (real %v)", o.res.Text, tg.name, o.res.Real)
					}
					var refused []string
					for _, e := range o.res.Real {
						if e.Refused {
							refused = append(refused, e.String())
						}
					}
					want := "modify " + tg.name
					if strings.Contains(tg.kind, "folder") {
						want += "/**" // a folder's mode covers what it holds (folder.go); its bits are judged on it alone
					}
					if strings.Join(refused, ";") != want {
						t.Errorf("refused %v, want %s alone (real %v)", refused, want, o.res.Real)
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
	}
}

// TestWallTxnModeBitsMade: a file or folder the command makes with such a
// bit is refused like a chmod; one made as the kernel makes it (a
// folder in a setgid folder of the person's takes its setgid) is not.
func TestWallTxnModeBitsMade(t *testing.T) {
	requireOverlay(t)
	for _, c := range []struct {
		command string
		setup   func(t *testing.T, root string)
		refused string // the refused change; "" for allowed
		modes   map[string]string
	}{
		{command: "mkdir -m 1777 write/tmp", refused: "create write/tmp"},
		{command: "mkdir -m 2755 notes/shared", refused: "create notes/shared"},
		{command: "install -m 4755 /dev/null write/run", refused: "create write/run"},
		{command: `python3 -c "import os; fd = os.open('write/open.md', os.O_CREAT|os.O_WRONLY, 0o666); os.fchmod(fd, 0o666)"`, refused: "create write/open.md"},
		{command: "echo x > write/x.md && chmod 0666 write/x.md", refused: "create write/x.md"},
		{command: `echo x > write/x.md && python3 -c "import os; os.link('write/x.md', 'write/y.md'); os.chmod('write/x.md', 0o4755)"`,
			refused: "create write/x.md;link write/y.md <- write/x.md"},
		// The person's own bits stay theirs: kept, and dropped at will.
		{command: "mkdir notes/x && mkdir -p notes/x/y && echo x > notes/x/y/z.md",
			setup: func(t *testing.T, root string) { setMode(t, root, "notes", 0o755|fs.ModeSetgid) },
			modes: map[string]string{"notes/x": "2755", "notes/x/y": "2755", "notes/x/y/z.md": "0644"}},
		{command: "mkdir top && mkdir notes/x",
			setup: func(t *testing.T, root string) {
				setMode(t, root, ".", 0o755|fs.ModeSetgid)
				setMode(t, root, "notes", 0o755|fs.ModeSetgid)
			},
			modes: map[string]string{"notes/x": "2755"}},
		{command: "echo more >> notes/b.md && mv notes/b.md notes/b2.md",
			setup: func(t *testing.T, root string) { setMode(t, root, "notes/b.md", 0o666) },
			modes: map[string]string{"notes/b2.md": "0666"}},
		{command: "chmod u-s,g-s,o-t,o-w notes",
			setup: func(t *testing.T, root string) { setMode(t, root, "notes", 0o777|fs.ModeSetgid|fs.ModeSticky) },
			modes: map[string]string{"notes": "0775"}},
		{command: "chmod 2750 notes",
			setup: func(t *testing.T, root string) { setMode(t, root, "notes", 0o755|fs.ModeSetgid) },
			modes: map[string]string{"notes": "2750"}},
	} {
		t.Run(c.command, func(t *testing.T) {
			s, root := modeVault(t, c.setup)
			before := tree(t, root)
			o := runBash(t, s, c.command, 0)
			if o.deny != nil || o.err != nil {
				t.Fatalf("refused before it ran: deny %v, err %v", o.deny, o.err)
			}
			if c.refused == "" {
				if o.res.NotApplied != "" {
					t.Fatalf("not applied: %s (real %v)", o.res.Text, o.res.Real)
				}
				for name, want := range c.modes {
					if got := modeOf(t, root, name); got != want {
						t.Errorf("%s has mode %s, want %s", name, got, want)
					}
				}
				return
			}
			var refused []string
			for _, e := range o.res.Real {
				if e.Refused {
					refused = append(refused, e.String())
				}
			}
			if o.res.NotApplied == "" || strings.Join(refused, ";") != c.refused ||
				!strings.Contains(o.res.Text, "no setuid, setgid, sticky or world-writable bit reaches the vault from bash") {
				t.Errorf("result %q, refused %v, want %s refused for its mode (real %v)", o.res.Text, refused, c.refused, o.res.Real)
			}
			if diff := changed(before, tree(t, root)); len(diff) > 0 {
				t.Errorf("the vault changed: %v", diff)
			}
		})
	}
}

// TestWallTxnModeZones: a mode change is a modify, judged by the zones
// like any other: allowed in edit and write zones (with the modes it
// gives), refused in protected and create zones, by chmod before it runs
// or by a program once it has.
func TestWallTxnModeZones(t *testing.T) {
	requireOverlay(t)
	for _, c := range []struct {
		command string
		modes   map[string]string // allowed: the modes after
		before  string            // refused by the analysis, with this reason
		not     string            // ran, refused after, with this reason
		says    string            // else: ran, changed nothing, and said this
	}{
		{command: "chmod 0600 write/w.md && chmod 0700 write/d", modes: map[string]string{"write/w.md": "0600", "write/d": "0700"}},
		{command: "chmod 0755 write/w.md notes/a.md", modes: map[string]string{"write/w.md": "0755", "notes/a.md": "0755"}},
		{command: "chmod u+x notes/a.md && chmod 0750 notes/sub", modes: map[string]string{"notes/a.md": "0744", "notes/sub": "0750"}},
		{command: "chmod -R go-rwx notes", modes: map[string]string{"notes": "0700", "notes/a.md": "0600", "notes/sub": "0700", "notes/sub/c.md": "0600"}},
		{command: `python3 -c "import os; os.chmod('notes/a.md', 0o600); os.chmod('write/d', 0o750)"`,
			modes: map[string]string{"notes/a.md": "0600", "write/d": "0750"}},
		{command: "chmod 0600 мета/план.md", before: `change "мета/план.md": zone protected`},
		{command: "chmod 0700 мета", before: `change "мета": zone protected`},
		{command: "chmod 0600 '💬 чаты/old.md'", before: `change "💬 чаты/old.md": zone create`},
		{command: `python3 -c "import os; os.chmod('💬 чаты/old.md', 0o600)"`, not: `change "💬 чаты/old.md": zone create`},
		{command: `python3 -c "import os; os.chmod('💬 чаты', 0o700)"`, not: `change "💬 чаты": zone create`},
		// The wall mounts a protected zone read-only: the chmod fails, and nothing changes.
		{command: `python3 -c "import os; os.chmod('мета/план.md', 0o600)"`, says: "Read-only file system"},
		{command: `python3 -c "import os; os.chmod('мета', 0o700)"`, says: "Read-only file system"},
		// The vault's root is the person's folder: txn.Diff never reads its mode.
		{command: "chmod 0777 ."},
	} {
		t.Run(c.command, func(t *testing.T) {
			s, root := modeVault(t, nil)
			before := tree(t, root)
			o := runBash(t, s, c.command, 0)
			switch {
			case o.err != nil:
				t.Fatalf("error: %v", o.err)
			case c.before != "":
				if o.deny == nil || !strings.Contains(o.deny.Reason, c.before) {
					t.Fatalf("deny %v, want one saying %q", o.deny, c.before)
				}
			case o.deny != nil:
				t.Fatalf("refused before it ran: %v", o.deny)
			case c.not != "":
				if o.res.NotApplied == "" || !strings.Contains(o.res.Text, c.not) {
					t.Errorf("result %q, want nothing applied because %q (real %v)", o.res.Text, c.not, o.res.Real)
				}
			case c.modes != nil:
				if o.res.NotApplied != "" {
					t.Fatalf("not applied: %s (real %v)", o.res.Text, o.res.Real)
				}
				for name, want := range c.modes {
					if got := modeOf(t, root, name); got != want {
						t.Errorf("%s has mode %s, want %s", name, got, want)
					}
				}
				return
			}
			if o.res != nil && !strings.Contains(o.res.Text, c.says) {
				t.Errorf("result %q, want it to say %q", o.res.Text, c.says)
			}
			if diff := changed(before, tree(t, root)); len(diff) > 0 {
				t.Errorf("the vault changed: %v", diff)
			}
		})
	}
}

// TestFileToolsAddNoModeBits: the file tools never set a setuid, setgid,
// sticky or world-writable bit: a new note gets none, and a replaced one
// keeps no more than the permission bits the person gave it.
func TestFileToolsAddNoModeBits(t *testing.T) {
	s, root := realVault(t)
	for name, mode := range map[string]fs.FileMode{
		"notes/suid.md": 0o755 | fs.ModeSetuid, "notes/sgid.md": 0o775 | fs.ModeSetgid, "notes/sticky.md": 0o644 | fs.ModeSticky,
		"notes/open.md": 0o666, "notes/private.md": 0o600,
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("old\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		setMode(t, root, name, mode)
	}
	if err := os.Mkdir(filepath.Join(root, "notes/shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	setMode(t, root, "notes/shared", 0o775|fs.ModeSetgid)
	was := map[string]fs.FileMode{}
	for _, name := range []string{"notes/suid.md", "notes/sgid.md", "notes/sticky.md", "notes/open.md", "notes/private.md"} {
		fi, _ := os.Lstat(filepath.Join(root, name))
		was[name] = fi.Mode()
	}
	check := func(name string, allowed fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || got.Perm()&^allowed != 0 {
			t.Errorf("%s has mode %s (%s), want no bit beyond %04o", name, got, octalMode(got), allowed)
		}
	}
	for _, name := range []string{"notes/suid.md", "notes/sgid.md", "notes/sticky.md", "notes/open.md", "notes/private.md"} {
		if _, d, err := do(t, s, "read", map[string]any{"path": name}); d != nil || err != nil {
			t.Fatalf("read %s: %v %v", name, d, err)
		}
		tool, args := "write", map[string]any{"path": name, "content": "new\n"}
		if name == "notes/open.md" || name == "notes/sticky.md" {
			tool, args = "edit", map[string]any{"path": name, "old_string": "old", "new_string": "new"}
		}
		if _, d, err := do(t, s, tool, args); d != nil || err != nil {
			t.Fatalf("%s %s: %v %v", tool, name, d, err)
		}
		if got := read(t, root, name); got != "new\n" {
			t.Fatalf("%s = %q", name, got)
		}
		check(name, was[name].Perm())
	}
	for _, name := range []string{"notes/new.md", "notes/shared/new.md", "notes/fresh/deep/new.md"} {
		if _, d, err := do(t, s, "write", map[string]any{"path": name, "content": "new\n"}); d != nil || err != nil {
			t.Fatalf("write %s: %v %v", name, d, err)
		}
		check(name, 0o644)
	}
	for _, dir := range []string{"notes/fresh", "notes/fresh/deep"} {
		check(dir, 0o755)
	}
}
