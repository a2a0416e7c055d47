package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// TestMoveToolCarriesNoLinkOut: no file tool makes a symlink, and the move
// tool, which carries one (or a folder holding some) to a new place, may
// not make it lead where the agent may not read from there. A link that
// leads where it led stays movable, the person's link out included: it is
// not the agent's making.
func TestMoveToolCarriesNoLinkOut(t *testing.T) {
	for _, c := range []struct {
		src, dst string
		refused  string // "" for allowed
	}{
		{src: "notes/sub/up", dst: "notes/up", refused: `symbolic link "notes/up" → "../../x.md": it leads out of the vault`},
		{src: "notes/sub", dst: "sub2", refused: `symbolic link "sub2/up" → "../../x.md": it leads out of the vault`},
		{src: "notes/sub/rel", dst: "rel", refused: `symbolic link "rel" → "секрет/s.md": it leads where you may not read`},
		// positive controls
		{src: "notes/sub/up", dst: "notes/sub/up2"},
		{src: "notes/last.md", dst: "notes/last2.md"},
		{src: "notes/out", dst: "notes/out2"},
		{src: "notes/sub", dst: "notes/sub2"},
	} {
		t.Run(c.src+"→"+c.dst, func(t *testing.T) {
			s, root := realVault(t)
			if err := os.MkdirAll(filepath.Join(root, "notes/sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			for link, target := range map[string]string{"notes/sub/up": "../../x.md", "notes/sub/rel": "секрет/s.md"} {
				if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
					t.Fatal(err)
				}
			}
			_, deny, err := do(t, s, "move", map[string]any{"source": c.src, "destination": c.dst})
			if err != nil {
				t.Fatal(err)
			}
			_, lerr := os.Lstat(filepath.Join(root, c.dst))
			if c.refused == "" {
				if deny != nil || lerr != nil {
					t.Fatalf("deny %v, destination %v: want it moved", deny, lerr)
				}
				return
			}
			if deny == nil || !strings.Contains(deny.Reason, c.refused) {
				t.Fatalf("deny %v, want one saying %q", deny, c.refused)
			}
			if lerr == nil {
				t.Errorf("%s was made", c.dst)
			}
		})
	}
}

// TestLeadsJudged: the zones rule's one judgement of where a symlink left
// in the vault leads, on the leads a planner finds.
func TestLeadsJudged(t *testing.T) {
	s, root := realVault(t)
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected},
		{Path: "секрет", Mode: zones.Hidden}, {Path: "notes/later", Mode: zones.Hidden},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Zones = tab
	for _, c := range []struct {
		at, target, want string // want: the refusal's words, "" for allowed
	}{
		{"notes/x", "/etc/passwd", "leads out of the vault"},
		{"notes/x", "../../etc", "leads out of the vault"},
		{"x", "../" + filepath.Base(root) + "/notes/a.md", "leads out of the vault"}, // out and back in
		{"notes/x", "../секрет/s.md", "where you may not read"},
		{"notes/x", "../секрет/none-yet.md", "where you may not read"},
		{"notes/x", "to-secret.md", "where you may not read"}, // through the person's link
		{"notes/x", "out/passwd", "leads out of the vault"},   // through the person's link out
		{"x", ".", "where you may not read"},                  // the vault holds a hidden zone
		{"x", "notes", "where you may not read"},              // a hidden zone's entry inside, not made yet
		{"x", "../" + filepath.Base(root), "leads out of the vault"},
		{"notes/x", "../.git/config", "control path|where you may not read"}, // .git is hidden beside a hidden zone
		{"notes/x", "../.codex/config.toml", "control path"},
		{"notes/x", "../.obsidian/plugins", "control path"},
		{"notes/x", ".vaultgate-tmp-1", "control path"},
		{"notes/x", "sub/../a.md", "can't tell where it leads"},
		{"notes/x", "loop", "can't tell where it leads"},
		{"notes/x", "", "can't tell where it leads"},
		// allowed
		{"notes/x", "a.md", ""},
		{"notes/x", "../мета/p.md", ""}, // protected may be read
		{"notes/x", "link-meta/p.md", ""},
		{"notes/x", "../мета", ""},
		{"notes/x", "not-yet/new.md", ""},
		{"notes/x", "./a.md", ""},
		{"x", root + "/notes/a.md", ""},
	} {
		t.Run(c.at+"→"+c.target, func(t *testing.T) {
			if err := os.Symlink("loop", filepath.Join(root, "notes/loop")); err != nil && !os.IsExist(err) {
				t.Fatal(err)
			}
			at := mustPath(t, c.at)
			e := policy.Effect{Op: zones.OpCreate, Path: at, Leads: []policy.Lead{s.lead(at, c.target)}}
			call := &policy.ToolCall{Tool: "bash", Effects: []policy.Effect{e}, Zones: tab, Lang: "en"}
			policy.Zoned(tab, call.Effects)
			d := policy.ZonesRule.Check(call)
			switch {
			case c.want == "" && d != nil:
				t.Errorf("refused: %s", d.Reason)
			case c.want != "" && (d == nil || !containsAny(d.Reason, c.want)):
				t.Errorf("deny %v, want one saying %q", d, c.want)
			case d != nil && strings.Contains(d.Reason, "секрет/s.md") && !strings.Contains(c.target, "секрет"):
				t.Errorf("the reason names where a link on the way led: %s", d.Reason)
			}
		})
	}
}

// TestLeadsJudgedByNamePattern: a name pattern's hidden files are hidden
// to links too, the one named and those in a folder linked to; a folder
// where the pattern covers nothing may be linked to.
func TestLeadsJudgedByNamePattern(t *testing.T) {
	s, root := realVault(t)
	if err := os.WriteFile(filepath.Join(root, "notes/.env"), []byte("KEY=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "**/.env", Mode: zones.Hidden},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Zones = tab
	for target, refused := range map[string]bool{"notes/.env": true, "мета/.env": true, "notes": true, "мета": false, "notes/a.md": false} {
		at := mustPath(t, "x")
		e := policy.Effect{Op: zones.OpCreate, Path: at, Leads: []policy.Lead{s.lead(at, target)}}
		call := &policy.ToolCall{Tool: "bash", Effects: []policy.Effect{e}, Zones: tab, Lang: "en"}
		policy.Zoned(tab, call.Effects)
		if d := policy.ZonesRule.Check(call); (d != nil) != refused {
			t.Errorf("x → %s: deny %v, want refused %v", target, d, refused)
		}
	}
}

func mustPath(t *testing.T, rel string) zones.Path {
	t.Helper()
	p, err := zones.Normalize("/v", rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// containsAny tells whether text holds one of the |-separated words.
func containsAny(text, words string) bool {
	for _, w := range strings.Split(words, "|") {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// A link whose name the disk spells in another form (NFD) than the zones
// judge it (NFC) is still found, and judged, when its folder is moved.
func TestMoveToolCarriesNoLinkOutUnderAnotherSpelling(t *testing.T) {
	s, root := realVault(t)
	if err := os.MkdirAll(filepath.Join(root, "notes/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../x.md", filepath.Join(root, "notes/sub/e\u0301up")); err != nil {
		t.Fatal(err)
	}
	_, deny, err := do(t, s, "move", map[string]any{"source": "notes/sub", "destination": "sub2"})
	if err != nil {
		t.Fatal(err)
	}
	if deny == nil || !strings.Contains(deny.Reason, "it leads out of the vault") {
		t.Fatalf("deny %v, want the carried link refused", deny)
	}
	if _, err := os.Lstat(filepath.Join(root, "sub2")); err == nil {
		t.Error("sub2 was made")
	}
}
