package sandbox

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vaultgate/vaultgate/zones"
)

// The index answers what the walk answers, for tables with and without
// name patterns, after any mix of changes, with no wait between a change
// and the call that asks.
func TestNameIndexAnswersAsTheWalk(t *testing.T) {
	vault := t.TempDir()
	outside := t.TempDir()
	plain, err := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	patterned, err := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Write}, {Path: "**/.env", Mode: zones.Hidden}, {Path: "private*", Mode: zones.Hidden}, {Path: "a/**/*.key", Mode: zones.Protected}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := WatchNames(vault, []*zones.Table{plain, patterned})
	t.Cleanup(func() { x.Close() })

	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "b", ".git", ".claude", ".obsidian", "private1", "заметки", ".env", "k.key", ".mcp.json"}
	pick := func(base string) string {
		p := base
		for range 1 + rng.IntN(4) {
			p = filepath.Join(p, parts[rng.IntN(len(parts))])
		}
		return p
	}
	seen := map[string]bool{} // the last names of what was covered, to know the test reached them
	for round := range 200 {
		for range 1 + rng.IntN(5) {
			p := pick(vault)
			switch rng.IntN(6) {
			case 0, 1:
				os.MkdirAll(p, 0o755)
			case 2:
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, nil, 0o644)
			case 3:
				os.RemoveAll(p)
			case 4:
				os.Rename(p, pick(vault))
			case 5:
				src := filepath.Join(outside, fmt.Sprint(round, rng.Int()))
				os.MkdirAll(pick(src), 0o755)
				os.Rename(src, p)
			}
		}
		for _, tab := range []*zones.Table{plain, patterned} {
			got, err := x.Covered(tab)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			want, err := controlNames(vault, tab)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, patterns %v: index %q, walk %q", round, len(tab.Patterns()) > 0, got, want)
			}
			for _, p := range got {
				seen[filepath.Base(p)] = true
			}
		}
	}
	for _, name := range []string{".git", ".claude", ".env", "private1", "k.key"} {
		if !seen[name] {
			t.Errorf("no %s was ever covered: the changes never reached it", name)
		}
	}
	if st := x.Status(); !st.Exact {
		t.Fatalf("status %+v", st)
	}
	other, _ := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Write}}, zones.Options{})
	if _, err := x.Covered(other); err == nil {
		t.Fatal("a table the index was not opened for was answered")
	}
}

// Where the index can't answer, the call walks, and finds what the index
// would have.
func TestNameIndexFallsBackToTheWalk(t *testing.T) {
	vault := t.TempDir()
	os.MkdirAll(filepath.Join(vault, "a/.git"), 0o755)
	tab, err := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := WatchNames(vault, []*zones.Table{tab})
	x.Close()
	if _, err := x.Covered(tab); err == nil {
		t.Fatal("a closed index answered")
	}
	got, err := coveredByName(x, vault, tab)
	if err != nil || !slices.Equal(got, []string{"a/.git"}) {
		t.Fatalf("got %q, %v; want the walk's a/.git", got, err)
	}
}
