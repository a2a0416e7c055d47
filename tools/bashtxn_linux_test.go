package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/zones"
)

// requireOverlay skips a test where the wall, with its overlay, can't be
// raised; .ci/run fails a skipped TestWall… test on the machines that can.
func requireOverlay(t *testing.T) {
	t.Helper()
	if _, err := sandbox.ProbeWall("").For(false, false, true); err != nil {
		t.Skipf("wall with overlay unavailable: %v", err)
	}
}

// txnVault is a vault on disk for bash on the overlay, and the set that
// serves it walled, judged by the built-in chain:
//
//	.               edit        notes/a.md notes/b.md notes/sub/c.md
//	мета            protected   мета/план.md
//	write           write       write/w.md
//	💬 чаты         create      💬 чаты/old.md
//	hidden          hidden      hidden/h.md ("secret-text")
func txnVault(t *testing.T) (*Set, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "vault")
	files := map[string]string{
		"notes/a.md": "b\na\nc\n", "notes/b.md": "bee\n", "notes/sub/c.md": "sea\n", "мета/план.md": "plan\n",
		"write/w.md": "w\n", "💬 чаты/old.md": "old chat\n", "hidden/h.md": "secret-text\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A file whose ctime is within the commit's margin of the call's start
	// counts as changed meanwhile; the vault is older than that in life.
	time.Sleep(30 * time.Millisecond)
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected}, {Path: "write", Mode: zones.Write},
		{Path: "💬 чаты", Mode: zones.Create}, {Path: "hidden", Mode: zones.Hidden},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rfs, err := OpenNoFollowFs(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rfs.Close() })
	state := filepath.Join(base, "state")
	b := &config.Bash{
		Enabled: true, Timeout: 20 * time.Second, MaxTimeout: time.Minute, Wall: config.WallRequired,
		Env: []string{"PATH"}, MaxChangedFiles: 1000, MaxChangedBytes: 64 << 20,
	}
	s := &Set{Vault: &Vault{Root: root, Fs: rfs, StateDir: state}, Zones: tab, Lang: "en", State: policy.NewState(), Bash: b}
	chain := txnChain(b)
	s.Judge = func(c *policy.ToolCall) *policy.Deny {
		c.Zones, c.Lang = tab, "en"
		return chain.Judge(c)
	}
	return s, root
}

func txnChain(b *config.Bash) policy.Chain {
	return append(policy.Chain{BashRule(b.Allow)}, policy.Builtin(false)...)
}

// bashOutcome is what one bash call came to.
type bashOutcome struct {
	deny *policy.Deny // the analysis' effects refused: nothing ran
	res  *Result
	err  error
	plan *Plan
}

// runBash plans, judges and runs a bash call as the gate does.
func runBash(t *testing.T, s *Set, command string, timeout int) bashOutcome {
	t.Helper()
	args := map[string]any{"command": command}
	if timeout > 0 {
		args["timeout"] = timeout
	}
	p, err := s.Plan("bash", args)
	if err != nil {
		return bashOutcome{err: err}
	}
	c := &policy.ToolCall{Tool: "bash", Args: args, Effects: p.Effects, Zones: s.Zones, Lang: "en", TellAll: p.TellAll, Facts: p.Facts}
	if d := txnChain(s.Bash).Judge(c); d != nil {
		return bashOutcome{deny: d, plan: p}
	}
	res, err := p.Run(context.Background())
	return bashOutcome{res: res, err: err, plan: p}
}

// tree is the vault on disk: each path with its kind, mode and content's hash.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:8])
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changed lists the paths whose entries differ between two trees.
func changed(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if after[p] != v {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func read(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func layersLeft(t *testing.T, s *Set) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(s.Vault.StateDir, "txn"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestWallTxnEveryday: ordinary work that the wall refused before the
// overlay is allowed, and does exactly what it says.
func TestWallTxnEveryday(t *testing.T) {
	requireOverlay(t)
	for _, c := range []struct {
		command string
		want    map[string]string // file → content after; "" = gone
		changed []string          // every path that changes
	}{
		{"sed -i 's/bee/BEE/' notes/b.md", map[string]string{"notes/b.md": "BEE\n"}, []string{"notes/b.md"}},
		{"sort -o notes/a.md notes/a.md", map[string]string{"notes/a.md": "a\nb\nc\n"}, []string{"notes/a.md"}},
		{"cat notes/b.md > notes/.b.tmp && echo more >> notes/.b.tmp && mv notes/.b.tmp notes/b.md",
			map[string]string{"notes/b.md": "bee\nmore\n", "notes/.b.tmp": ""}, []string{"notes/b.md"}},
		{"mv notes/b.md notes/b2.md", map[string]string{"notes/b.md": "", "notes/b2.md": "bee\n"}, []string{"notes/b.md", "notes/b2.md"}},
		{`python3 -c "import os; os.rename('notes/b.md','notes/b2.md')"`, map[string]string{"notes/b.md": "", "notes/b2.md": "bee\n"}, []string{"notes/b.md", "notes/b2.md"}},
	} {
		t.Run(c.command, func(t *testing.T) {
			s, root := txnVault(t)
			before := tree(t, root)
			o := runBash(t, s, c.command, 0)
			if o.deny != nil || o.err != nil {
				t.Fatalf("refused: deny %v, err %v", o.deny, o.err)
			}
			if o.res.NotApplied != "" {
				t.Fatalf("not applied: %s\nreal %v", o.res.Text, o.res.Real)
			}
			for name, want := range c.want {
				got := read(t, root, name)
				if want == "" {
					if !strings.HasPrefix(got, "<") {
						t.Errorf("%s is still there: %q", name, got)
					}
				} else if got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if got := changed(before, tree(t, root)); strings.Join(got, ",") != strings.Join(c.changed, ",") {
				t.Errorf("changed %v, want %v (real %v)", got, c.changed, o.res.Real)
			}
			if left := layersLeft(t, s); len(left) > 0 {
				t.Errorf("layers left in the state folder: %v", left)
			}
		})
	}
}
