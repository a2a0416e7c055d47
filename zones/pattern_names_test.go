package zones

import (
	"path"
	"testing"
)

// TestPatternNamesAgreesWithCovers: a path is covered by the patterns
// exactly when they name it or a folder above it — what a walk that asks
// PatternNames of each name, folder first, relies on.
func TestPatternNamesAgreesWithCovers(t *testing.T) {
	vault := "/v"
	tab, err := New(vault, []Entry{{Path: ".", Mode: Edit}, {Path: "**/.env", Mode: Hidden}, {Path: "*.PEM", Mode: Hidden},
		{Path: "private*", Mode: Hidden}, {Path: "notes/**/*.tmp", Mode: Protected}, {Path: "a/**", Mode: Protected}, {Path: "x/y", Mode: Edit}, {Path: "Заметки/**/секрет?", Mode: Hidden}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", ".env", ".ENV", "k.pem", "private1", "notes", "x.tmp", "заметки", "Заметки", "секрет1", "y", "x"}
	var walk func(rel string, depth int)
	checked := 0
	walk = func(rel string, depth int) {
		for _, n := range names {
			p := n
			if rel != "" {
				p = rel + "/" + n
			}
			at, err := Normalize(vault, p)
			if err != nil {
				t.Fatal(err)
			}
			named := false
			for q := p; q != "."; q = path.Dir(q) {
				named = named || tab.PatternNames(vault, q)
			}
			if covers := tab.PatternCovers(at); covers != named {
				t.Errorf("%s: PatternCovers %v, named here or above %v", p, covers, named)
			}
			checked++
			if depth < 3 {
				walk(p, depth+1)
			}
		}
	}
	walk("", 0)
	if checked < 1000 {
		t.Fatalf("only %d paths checked", checked)
	}
}
