package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// folderVault is a vault on disk for folder effects:
//
//	.   edit    notes/plain/{a,b}.md  notes/repo/{n.md,.git/HEAD}
//	w   write   w/repo/{n.md,.git/HEAD}  w/two/{a,b}.md  w/fifty/f00…f49.md
func folderVault(t *testing.T) (*Set, string) {
	t.Helper()
	root := t.TempDir()
	files := []string{"notes/plain/a.md", "notes/plain/b.md", "notes/repo/n.md", "notes/repo/.git/HEAD",
		"w/repo/n.md", "w/repo/.git/HEAD", "w/two/a.md", "w/two/b.md"}
	for i := range 50 {
		files = append(files, fmt.Sprintf("w/fifty/f%02d.md", i))
	}
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := zones.New(root, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "w", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rfs, err := vaultfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rfs.Close() })
	b := &config.Bash{MaxChangedFiles: 1000, MaxChangedBytes: 1 << 20}
	return &Set{Vault: &Vault{Root: root, Fs: rfs}, Zones: tab, Lang: "en", State: policy.NewState(), Bash: b}, root
}

// TestFolderEffectsCover: the move and delete tools judge a folder on
// every path inside it (a nested .git, a control path, refuses the
// folder), the folder's own effect marked with how many paths it covers;
// a plain folder goes (the positive control). A folder past the call's
// bound is refused whole, never judged in part.
func TestFolderEffectsCover(t *testing.T) {
	for _, c := range []struct {
		name   string
		tool   string
		args   map[string]any
		refuse string // "" allowed
		covers int    // the folder effect's count (the first effect's)
		gone   string // a path the call removes, when allowed
	}{
		{"move a folder holding .git", "move", map[string]any{"source": "notes/repo", "destination": "notes/r2"}, `"notes/repo/.git"`, 3, ""},
		{"move a plain folder", "move", map[string]any{"source": "notes/plain", "destination": "notes/p2"}, "", 2, "notes/plain/a.md"},
		{"delete a folder holding .git", "delete", map[string]any{"path": "w/repo", "recursive": true}, `"w/repo/.git"`, 3, ""},
		{"delete a plain folder", "delete", map[string]any{"path": "w/two", "recursive": true}, "", 2, "w/two/a.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, root := folderVault(t)
			p, err := s.Plan(c.tool, c.args)
			if err != nil {
				t.Fatal(err)
			}
			f := p.Effects[0]
			if !f.Subtree || f.Covers != c.covers || !f.Folder.IsZero() {
				t.Errorf("the folder's effect %+v, want covering %d", f, c.covers)
			}
			inside := 0
			for _, e := range p.Effects {
				if !e.Folder.IsZero() {
					inside++
					if e.Subtree || e.Folder != f.Path && e.Op != zones.OpMoveIn {
						t.Errorf("an inside effect %+v", e)
					}
				}
			}
			if want := c.covers; c.tool == "move" && inside != 2*want || c.tool == "delete" && inside != want {
				t.Errorf("%d inside effects for %d paths", inside, want)
			}
			_, d, err := do(t, s, c.tool, c.args)
			switch {
			case err != nil:
				t.Fatal(err)
			case c.refuse == "" && d != nil:
				t.Fatalf("refused: %s", d.Reason)
			case c.refuse != "" && (d == nil || !strings.Contains(d.Reason, c.refuse)):
				t.Fatalf("deny %v, want one naming %s", d, c.refuse)
			}
			if c.gone != "" {
				if _, err := os.Lstat(filepath.Join(root, c.gone)); err == nil {
					t.Errorf("%s is still there", c.gone)
				}
			} else if _, err := os.Lstat(filepath.Join(root, filepath.Dir(strings.Trim(c.refuse, `"`)), ".git/HEAD")); err != nil {
				t.Errorf("the refused call changed the vault: %v", err)
			}
		})
	}
}

// TestFolderBound: a folder effect covers at most what one call may
// change ([bash] max_changed_files); past it the call fails whole with a
// reason that names the folder and the key, and nothing is done.
func TestFolderBound(t *testing.T) {
	s, root := folderVault(t)
	s.Bash.MaxChangedFiles = 10
	_, d, err := do(t, s, "delete", map[string]any{"path": "w/fifty", "recursive": true})
	if d != nil || err == nil || !strings.Contains(err.Error(), `"w/fifty" holds more paths than one call may cover (10, [bash] max_changed_files)`) {
		t.Fatalf("a folder past the bound: deny %v, err %v", d, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "w/fifty")); len(ents) != 50 {
		t.Errorf("%d files left of 50", len(ents))
	}
	// the bound is the call's: folders of 2 and 3 paths are past 4 together
	s.Bash.MaxChangedFiles = 4
	two := policy.Effect{Op: zones.OpDelete, Path: mustNormalize(t, root, "w/two"), Subtree: true}
	repo := policy.Effect{Op: zones.OpDelete, Path: mustNormalize(t, root, "w/repo"), Subtree: true}
	if _, err := s.coverFolders([]policy.Effect{two, repo}); err == nil || !strings.Contains(err.Error(), `"w/repo" holds more paths than one call may cover (4,`) {
		t.Errorf("two folders past the bound together: %v", err)
	}
	for _, e := range []policy.Effect{two, repo} {
		if _, err := s.coverFolders([]policy.Effect{e}); err != nil {
			t.Errorf("%s alone: %v", e.Path, err)
		}
	}
	// a move's two halves cover the same paths: counted once
	s.Bash.MaxChangedFiles = 3
	if _, d, err := do(t, s, "move", map[string]any{"source": "w/repo", "destination": "w/r2"}); d == nil || err != nil {
		t.Errorf("a move of a folder of 3 paths under a bound of 3: %v %v", d, err) // refused for its .git, not the bound
	}
	s.Bash.MaxChangedFiles = 2
	if _, d, err := do(t, s, "move", map[string]any{"source": "w/two", "destination": "w/t2"}); d != nil || err != nil {
		t.Errorf("a move of a folder of 2 paths under a bound of 2: %v %v", d, err)
	}
}

// TestVaultNames: the vault's name of what each change of a list changes,
// the folder moves before it undone.
func TestVaultNames(t *testing.T) {
	for _, c := range []struct {
		changes []txn.Change
		want    string
	}{
		{[]txn.Change{{Op: txn.Delete, Path: "p", Dir: true}}, "p"},
		{[]txn.Change{{Op: txn.Move, From: "a", Path: "x", Dir: true}, {Op: txn.Delete, Path: "x/f", Dir: true}}, "a a/f"},
		{[]txn.Change{{Op: txn.Move, From: "a", Path: "x", Dir: true}, {Op: txn.Move, From: "x/b", Path: "y", Dir: true},
			{Op: txn.Delete, Path: "y/c", Dir: true}, {Op: txn.Modify, Path: "x", Dir: true}}, "a a/b a/b/c a"},
		{[]txn.Change{{Op: txn.Move, From: "a/f", Path: "g"}, {Op: txn.Delete, Path: "a/g", Dir: true}}, "a/f a/g"},
		{[]txn.Change{{Op: txn.Move, From: "a", Path: "ab", Dir: true}, {Op: txn.Delete, Path: "abc", Dir: true}}, "a abc"},
	} {
		if got := strings.Join(vaultNames(c.changes), " "); got != c.want {
			t.Errorf("%v: %q, want %q", c.changes, got, c.want)
		}
	}
}
