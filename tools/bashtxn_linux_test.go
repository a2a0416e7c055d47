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
	"github.com/vaultgate/vaultgate/vaultfs"
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
func txnVault(t testing.TB) (*Set, string) {
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
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected}, {Path: "write", Mode: zones.Write},
		{Path: "💬 чаты", Mode: zones.Create}, {Path: "hidden", Mode: zones.Hidden},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rfs, err := vaultfs.Open(root)
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
	if err == nil {
		res = settle(txnChain(s.Bash), c, res)
	}
	return bashOutcome{res: res, err: err, plan: p}
}

// settle does with a run's pending changes what the gate does: judges
// them with chain, as a call of their own, and commits or refuses them.
func settle(chain policy.Chain, call *policy.ToolCall, res *Result) *Result {
	p := res.Pending
	if p == nil {
		return res
	}
	real := *call
	real.Effects, real.TellAll, real.Facts = p.Effects(), true, p.Facts()
	if d, refused, reasons := chain.JudgeEach(&real); d != nil {
		return p.Refuse(d, refused, reasons)
	}
	return p.Commit()
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

// TestWallTxnRefused: what the command really did is judged, and a
// refused change keeps every change of the call out of the vault.
func TestWallTxnRefused(t *testing.T) {
	requireOverlay(t)
	for _, c := range []struct {
		name, command string
		setup         func(t *testing.T, root string)
		before        string // the analysis refuses it before anything runs, with this reason; or
		not           string // it ran, and nothing was applied, for this reason
		refused       []string
	}{
		{name: "a program rewrites a file of a create zone",
			command: `python3 -c "open('💬 чаты/old.md','w').write('x')"`,
			not:     `change "💬 чаты/old.md": zone create`, refused: []string{"modify 💬 чаты/old.md"}},
		{name: "a link leads a redirect into a create zone",
			command: `ln -s ../notes notes/r; echo x > 'notes/r/../💬 чаты/old.md'`,
			not:     `change "💬 чаты/old.md": zone create`},
		{name: "a glob expands to an option",
			setup: func(t *testing.T, root string) {
				dir := filepath.Join(root, "💬 чаты", "in")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"--target-directory=..", "old.md"} {
					if err := os.WriteFile(filepath.Join(dir, name), []byte("evil\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			},
			command: `cd '💬 чаты/in' && cp * ../../notes/`,
			not:     `change "💬 чаты/old.md": zone create`},
		{name: "laundering by rename, edit to write",
			command: `python3 -c "import os; os.rename('notes/b.md','write/b.md')"`,
			not:     `move "notes/b.md" to "write/b.md": the content would go from zone edit to zone write`,
			refused: []string{"move-in write/b.md <- notes/b.md"}},
		{name: "laundering by hard link",
			command: `python3 -c "import os; os.link('notes/b.md','write/b.md')"`,
			not:     `hard-link "notes/b.md" as "write/b.md"`, refused: []string{"link write/b.md <- notes/b.md"}},
		{name: "one refused change keeps the others out",
			command: `echo new > notes/new.md; echo x > write/new.md; python3 -c "open('💬 чаты/old.md','w').write('x')"`,
			not:     `change "💬 чаты/old.md": zone create`, refused: []string{"modify 💬 чаты/old.md"}},
		{name: "a control name at the vault root (no placeholder on the overlay)",
			command: `python3 -c "import os; os.makedirs('.claude'); open('.claude/settings.json','w').write('{}')"`,
			not:     `.claude`},
		{name: "a control name at a write zone's root",
			command: `python3 -c "open('write/.mcp.json','w').write('{}')"`,
			not:     `write/.mcp.json`},
		{name: "a missing hidden zone's name made and written",
			setup: func(t *testing.T, root string) {
				if err := os.RemoveAll(filepath.Join(root, "hidden")); err != nil {
					t.Fatal(err)
				}
			},
			command: `python3 -c "import os; os.makedirs('hidden'); open('hidden/x.md','w').write('x')"`,
			not:     `hidden`},
		{name: "git init below the top level",
			command: `git init -q notes/proj`,
			not:     `notes/proj/.git`},
		{name: "a FIFO",
			command: `python3 -c "import os; os.mkfifo('notes/fifo')"`,
			not:     `create "notes/fifo": it is a FIFO, socket or device`, refused: []string{"create notes/fifo"}},
		{name: "a protected file is refused before anything runs",
			command: `rm мета/план.md`,
			before:  `delete "мета/план.md": zone protected`},
		{name: "a removal in an edit zone is still refused before it runs",
			command: `rm notes/b.md`,
			before:  `delete "notes/b.md": zone edit`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, root := txnVault(t)
			if c.setup != nil {
				c.setup(t, root)
			}
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
				// the analysis caught it first: also right, as long as nothing changed
				t.Logf("refused before it ran: %s", o.deny.Reason)
			default:
				if o.res.NotApplied == "" || !strings.Contains(o.res.Text, c.not) {
					t.Errorf("result %q, want nothing applied because %q (real %v)", o.res.Text, c.not, o.res.Real)
				}
				if !strings.HasPrefix(o.res.Text, "The command ran, but nothing in the vault was changed") {
					t.Errorf("result does not say first that nothing changed: %q", o.res.Text)
				}
				if c.refused != nil {
					var got []string
					for _, e := range o.res.Real {
						if e.Refused {
							got = append(got, e.String())
						}
					}
					if strings.Join(got, ";") != strings.Join(c.refused, ";") {
						t.Errorf("refused %v, want %v (real %v)", got, c.refused, o.res.Real)
					}
				}
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

// TestWallTxnHiddenRead: a read of the whole vault runs under the wall,
// which covers the hidden zone; its text is never shown.
func TestWallTxnHiddenRead(t *testing.T) {
	requireOverlay(t)
	s, root := txnVault(t)
	before := tree(t, root)
	for _, cmd := range []string{"grep -rn e .", "find . -name '*.md'", "ls -R", "du -sh ."} {
		o := runBash(t, s, cmd, 0)
		if o.deny != nil || o.err != nil || o.res == nil {
			t.Fatalf("%s: deny %v, err %v", cmd, o.deny, o.err)
		}
		if strings.Contains(o.res.Text, "secret-text") || strings.Contains(o.res.Text, "h.md") {
			t.Errorf("%s shows the hidden zone: %q", cmd, o.res.Text)
		}
		if cmd == "grep -rn e ." && !strings.Contains(o.res.Text, "notes/b.md:1:bee") {
			t.Errorf("%s: %q", cmd, o.res.Text)
		}
	}
	if diff := changed(before, tree(t, root)); len(diff) > 0 {
		t.Errorf("the vault changed: %v", diff)
	}
}

// TestWallTxnEnds: a command that does not end by itself, or changes more
// than a call may, commits nothing.
func TestWallTxnEnds(t *testing.T) {
	requireOverlay(t)
	s, root := txnVault(t)
	before := tree(t, root)
	o := runBash(t, s, "echo x > notes/t.md; sleep 30", 1)
	if o.deny != nil || o.err != nil || !strings.Contains(o.res.Text, "did not finish by itself") {
		t.Fatalf("timeout: deny %v, err %v, result %+v", o.deny, o.err, o.res)
	}
	s.Bash.MaxChangedFiles = 3
	o = runBash(t, s, "touch notes/n1.md notes/n2.md notes/n3.md notes/n4.md notes/n5.md", 0)
	if o.deny != nil || o.err != nil || !strings.Contains(o.res.Text, "[bash] max_changed_files = 3") {
		t.Fatalf("over the cap: deny %v, err %v, result %+v", o.deny, o.err, o.res)
	}
	// In memory the kernel stops a write well past the byte cap while the
	// command runs (the tmpfs has a page per file of slack); what it left
	// (a cut file, the rest of its work) is not applied.
	s.Bash.MaxChangedFiles, s.Bash.MaxChangedBytes = 1000, 64<<10
	o = runBash(t, s, "echo kept > notes/n1.md; head -c 10000000 /dev/zero > notes/big.bin; echo done", 0)
	if o.deny != nil || o.err != nil || !strings.Contains(o.res.Text, "[bash] max_changed_bytes = 65536") ||
		!strings.Contains(o.res.Text, "No space left on device") {
		t.Fatalf("past the byte cap, in memory: deny %v, err %v, result %+v", o.deny, o.err, o.res)
	}
	if diff := changed(before, tree(t, root)); len(diff) > 0 {
		t.Errorf("the vault changed: %v", diff)
	}
	if left := layersLeft(t, s); len(left) > 0 {
		t.Errorf("layers left in the state folder: %v", left)
	}
}

// TestWallTxnConflict: a file changed from outside while the command ran
// is left as the outside wrote it, and nothing of the call is applied;
// with the layer in memory and on disk.
func TestWallTxnConflict(t *testing.T) {
	requireOverlay(t)
	for _, disk := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "disk"}[disk], func(t *testing.T) {
			s, root := txnVault(t)
			s.diskLayer = disk
			wrote := make(chan error, 1)
			go func() {
				// Once the command has written its copy (in the call's layer),
				// the person's editor saves the same note.
				for {
					if commandWrote(s, root, "notes/a.md", "mine\n") {
						wrote <- os.WriteFile(filepath.Join(root, "notes/a.md"), []byte("the person's\n"), 0o644)
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}()
			o := runBash(t, s, "echo new > notes/new.md; echo mine > notes/a.md; exec sleep 2", 0)
			if err := <-wrote; err != nil {
				t.Fatal(err)
			}
			if o.deny != nil || o.err != nil || !strings.Contains(o.res.Text, `"notes/a.md" changed in the vault while the command ran`) {
				t.Fatalf("deny %v, err %v, result %+v", o.deny, o.err, o.res)
			}
			if got := read(t, root, "notes/a.md"); got != "the person's\n" {
				t.Errorf("notes/a.md = %q, want what the person wrote", got)
			}
			if got := read(t, root, "notes/new.md"); !strings.HasPrefix(got, "<") {
				t.Errorf("notes/new.md was applied: %q", got)
			}
		})
	}
}

// commandWrote tells whether a running call of s shows body at name: in
// its layer on disk, or (in memory) in the vault as the command sees it,
// through the root of its `sleep 2` (root may look there).
func commandWrote(s *Set, root, name, body string) bool {
	m, _ := filepath.Glob(filepath.Join(s.Vault.StateDir, "txn", "*", "upper", name))
	if len(m) > 0 {
		return true
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if c, _ := os.ReadFile(p); string(c) != "sleep\x002\x00" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(p), "root", root, name))
		if err == nil && string(b) == body {
			return true
		}
	}
	return false
}

// TestWallTxnBackToBack: a call right after one that changed a file may
// change it again: the server's own commit is not a change made meanwhile.
func TestWallTxnBackToBack(t *testing.T) {
	requireOverlay(t)
	s, root := txnVault(t)
	for i, want := range []string{"bee\n1\n", "bee\n1\n2\n", "bee\n1\n2\n3\n"} {
		o := runBash(t, s, "echo "+string(rune('1'+i))+" >> notes/b.md", 0)
		if o.deny != nil || o.err != nil || o.res.NotApplied != "" {
			t.Fatalf("call %d: deny %v, err %v, result %+v", i, o.deny, o.err, o.res)
		}
		if got := read(t, root, "notes/b.md"); got != want {
			t.Fatalf("call %d: notes/b.md = %q, want %q", i, got, want)
		}
	}
}
