package zones

import (
	"errors"
	"testing"
)

// TestPatterns: a name pattern hides by name at any depth (or from the
// root, with a '/' inside), as the stricter of it and the folder entry;
// it never opens what the folders keep shut; Within names it inside any
// folder it could match in.
func TestPatterns(t *testing.T) {
	tab, err := New("/v", []Entry{
		{Path: ".", Mode: Write}, {Path: "мета", Mode: Protected},
		{Path: "**/.env", Mode: Hidden}, {Path: "**/.env.*", Mode: Hidden}, {Path: "*.pem", Mode: Hidden},
		{Path: "notes/**/*.tmp", Mode: Protected}, {Path: "**/secrets", Mode: Hidden}, {Path: "**/*.open", Mode: Write},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) Path { p, _ := Normalize("/v", s); return p }
	for _, c := range []struct {
		path string
		want Mode
	}{
		{".env", Hidden},
		{"config/.env", Hidden},
		{"a/b/c/.ENV", Hidden}, // folded
		{"config/.env.production", Hidden},
		{".env.local/x", Hidden}, // a folder it matches covers what is in it
		{"keys/id.pem", Hidden},
		{"id.pem", Hidden},
		{"мета/k.pem", Hidden},     // the stricter of protected and hidden
		{"мета/x.md", Protected},   // not matched: the folder's
		{"мета/y.open", Protected}, // a pattern never opens
		{"notes/a/b.tmp", Protected},
		{"notes/b.tmp", Protected}, // ** is zero folders too
		{"other/b.tmp", Write},     // anchored at the root
		{"x/secrets/deep/note.md", Hidden},
		{"x/secretsx/note.md", Write},
		{".envrc.md", Write},
		{"env", Write},
		{"notes/a.md", Write},
	} {
		if got := tab.Zone(at(c.path)); got != c.want {
			t.Errorf("Zone(%q) = %s, want %s", c.path, got, c.want)
		}
		if cov := tab.PatternCovers(at(c.path)); cov != (c.want != Write && c.path != "мета/x.md" || c.path == "мета/y.open") {
			t.Errorf("PatternCovers(%q) = %v", c.path, cov)
		}
	}
	inside := func(dir string) []string {
		var out []string
		for _, r := range tab.Within(at(dir)) {
			if r.Pattern {
				out = append(out, r.Path.String())
			}
		}
		return out
	}
	if got := inside("."); len(got) != 6 {
		t.Errorf("Within(.) names patterns %v", got)
	}
	if got := inside("other"); len(got) != 5 { // not notes/**/*.tmp
		t.Errorf("Within(other) names patterns %v", got)
	}
	if got := inside("notes/a"); len(got) != 6 {
		t.Errorf("Within(notes/a) names patterns %v", got)
	}
	for _, p := range tab.Entries() {
		if IsPattern(p.Path.String()) {
			t.Errorf("Entries lists the pattern %s", p.Path)
		}
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"**/", "/abs/*.pem", "**/[x", "a/../*.md", "notes//*.md", "./*.md"} {
		_, err := New("/v", []Entry{{Path: ".", Mode: Write}, {Path: p, Mode: Hidden}}, Options{})
		if !errors.Is(err, errPattern) {
			t.Errorf("%q: %v, want a pattern error", p, err)
		}
	}
}
