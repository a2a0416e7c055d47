package tools

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// TestRgGlobReadAsRipgrep: a glob's literal leading folders are read as
// ripgrep reads them — escapes unescaped, classes, braces and ** not
// literal, a name without a / matched at any depth, a leading ! or # not
// an include.
func TestRgGlobReadAsRipgrep(t *testing.T) {
	for _, c := range []struct {
		glob string
		kind rgGlobKind
		lead []string
	}{
		{`секрет\ы/*`, rgGlobInclude, []string{"секреты"}},
		{`секрет[ы]/*`, rgGlobInclude, nil},
		{`{notes,секреты}/*`, rgGlobInclude, nil},
		{`**/*.md`, rgGlobInclude, nil},
		{`*.md`, rgGlobInclude, nil},
		{`секреты`, rgGlobInclude, nil},  // a name at any depth
		{`секреты/`, rgGlobInclude, nil}, // a folder's name at any depth
		{`/секреты`, rgGlobInclude, []string{"секреты"}},
		{`notes/секреты/**`, rgGlobInclude, []string{"notes", "секреты"}},
		{`notes/a\*b/x.md`, rgGlobInclude, []string{"notes", "a*b", "x.md"}},
		{`notes/x.md   `, rgGlobInclude, []string{"notes", "x.md"}}, // trailing white space dropped
		{`notes/x\ `, rgGlobInclude, []string{"notes", "x "}},       // unless escaped
		{`notes\/x/*`, rgGlobInclude, nil},                          // an escaped separator: not narrowed
		{`notes/x\`, rgGlobInclude, []string{"notes"}},              // a dangling escape: ripgrep refuses it
		{`a]b/*`, rgGlobInclude, nil},
		{`!секреты/*`, rgGlobExclude, nil},
		{`\!x/*`, rgGlobInclude, []string{"!x"}},
		{`#x/*`, rgGlobNone, nil},
		{`\#x/*`, rgGlobInclude, []string{"#x"}},
		{"   ", rgGlobNone, nil},
		{`../../*`, rgGlobInclude, []string{"..", ".."}},
	} {
		g := parseRgGlob(c.glob)
		if g.kind != c.kind || !slices.Equal(g.lead, c.lead) {
			t.Errorf("%q: kind %d, lead %q; want %d, %q", c.glob, g.kind, g.lead, c.kind, c.lead)
		}
	}
}

// TestRgReach: the folders a walk of dir with globs can list from, whatever
// folder ripgrep matches the globs from and however Claude Code drops a
// repeated leading folder.
func TestRgReach(t *testing.T) {
	const dir = "/v/notes"
	for _, c := range []struct {
		globs []string
		want  []string
	}{
		{nil, []string{dir}},
		{[]string{`секрет\ы/*`}, []string{"/v/notes/секреты"}},
		{[]string{`секрет[ы]/*`}, []string{dir}},
		{[]string{`projects/**`, `*.md`}, []string{dir}}, // one include at any depth: all of dir
		{[]string{`projects/**`, `!projects/x`}, []string{"/v/notes/projects"}},
		{[]string{`!private/**`}, []string{dir}}, // excludes only
		{[]string{`projects/**`, `ideas.md`}, []string{dir}},
		{[]string{`projects/**`, `/ideas.md`}, []string{"/v/notes/projects", "/v/notes/ideas.md"}},
		// Claude Code drops a leading folder that repeats dir's last
		{[]string{`notes/private/*`}, []string{"/v/notes/notes/private", "/v/notes/private"}},
		{[]string{`v/notes/private/*`}, []string{"/v/notes/v/notes/private", "/v/notes/private"}},
		// matched from a folder above dir, a glob that runs along dir's
		// own folders covers all of it
		{[]string{`v/**`}, []string{"/v/notes/v", dir}},
		{[]string{`../*`}, []string{"/v"}},
	} {
		if got := rgReach(dir, c.globs); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.globs, got, c.want)
		}
	}
}

// TestClaudeSplitsAsClaudeCode: an absolute Glob pattern's folder, and
// Grep's glob field cut into ripgrep's globs, as Claude Code makes them.
func TestClaudeSplitsAsClaudeCode(t *testing.T) {
	for _, c := range []struct{ pattern, dir, glob string }{
		{`/v/notes/**/*.md`, "/v/notes", "**/*.md"},
		{`/v/секрет\ы/*`, `/v/секрет\ы`, "*"}, // Claude Code does not unescape the folder
		{`/v/{a,b}/*`, "/v", "{a,b}/*"},
		{`/*`, "/", "*"},
		{`/v/notes/x.md`, "/v/notes", "x.md"},
		{`/v/notes/`, "/v", "notes"},
	} {
		dir, glob, ok := claudeGlobBase(c.pattern)
		if !ok || dir != c.dir || glob != c.glob {
			t.Errorf("%q: %q %q %v, want %q %q", c.pattern, dir, glob, ok, c.dir, c.glob)
		}
	}
	if _, _, ok := claudeGlobBase(`notes/*`); ok {
		t.Error("a relative pattern has a folder of its own")
	}
	for field, want := range map[string][]string{
		"*.md":                {"*.md"},
		"*.{ts,tsx}":          {"*.{ts,tsx}"},
		"*.md,notes/*  x/** ": {"*.md", "notes/*", "x/**"},
		"a,,b\u00a0c":         {"a", "b", "c"},
		"":                    nil,
	} {
		if got := claudeGrepGlobs(field); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", field, got, want)
		}
	}
}

// TestFolderReadFindsWhatPatternsHide: Claude Code's Grep and Glob over a
// folder are refused by a name pattern ("**/.env") only when a path it
// hides is there now — found by the wall's index of names as a server
// keeps it, or by a walk — including inside a control folder the agent may
// read (.claude); a pattern that hides nothing there refuses nothing, and
// one that protects (read only) never refuses a read.
func TestFolderReadFindsWhatPatternsHide(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		root := t.TempDir()
		for _, d := range []string{"notes/deep", "other", ".claude"} {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(root, "notes/a.md"), []byte("a\n"), 0o644)
		os.WriteFile(filepath.Join(root, "other/x.lock"), []byte("l\n"), 0o644)
		tab, err := zones.New(root, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "**/.env", Mode: zones.Hidden}, {Path: "**/*.lock", Mode: zones.Protected}}, zones.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rfs, err := vaultfs.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rfs.Close() })
		s := &Set{Vault: &Vault{Root: root, Fs: rfs}, Zones: tab, Lang: "en", State: policy.NewState(), Hook: &HookCall{Cwd: root, ServerName: "vault"}}
		if indexed {
			x := sandbox.WatchNames(root, []*zones.Table{tab})
			t.Cleanup(func() { x.Close() })
			s.Vault.Names = x
		}
		refused := func(tool string, args map[string]any) bool {
			t.Helper()
			p, err := s.Plan(tool, args)
			if err != nil {
				t.Fatal(err)
			}
			return policy.Builtin(true).Judge(&policy.ToolCall{Tool: tool, Effects: p.Effects, Zones: tab, Lang: "en", Session: &policy.Session{State: s.State}}) != nil
		}
		check := func(when string, want map[string]bool) {
			t.Helper()
			for dir, refuse := range want {
				if got := refused("Grep", map[string]any{"pattern": "x", "path": filepath.Join(root, dir)}); got != refuse {
					t.Errorf("indexed %v, %s: Grep %s refused %v, want %v", indexed, when, dir, got, refuse)
				}
				if got := refused("Glob", map[string]any{"pattern": "**/*", "path": filepath.Join(root, dir)}); got != refuse {
					t.Errorf("indexed %v, %s: Glob %s refused %v, want %v", indexed, when, dir, got, refuse)
				}
			}
		}
		check("no secret in the vault", map[string]bool{".": false, "notes": false, "other": false, ".claude": false})
		os.WriteFile(filepath.Join(root, "notes/deep/.ENV"), []byte("TOKEN=1\n"), 0o644)
		check("notes/deep/.ENV", map[string]bool{".": true, "notes": true, "notes/deep": true, "other": false})
		os.Remove(filepath.Join(root, "notes/deep/.ENV"))
		os.WriteFile(filepath.Join(root, ".claude/.env"), []byte("TOKEN=1\n"), 0o644)
		check(".claude/.env", map[string]bool{".": true, ".claude": true, "notes": false})
	}
}
