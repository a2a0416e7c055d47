package tools

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// corpusTxnVault is the layout the bash corpus is written against
// (shell/corpus_test.go's sampleVault, with a hidden folder), served
// walled on the overlay.
func corpusTxnVault(t *testing.T) (*Set, string, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "vault")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"notes/sub", "мета/бобер", "💬 чаты", ".obsidian", "write/d", "write/dash", "empty", "hidden", "../outside"} {
		must(os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	for _, f := range []string{"README.md", "notes/a.md", "notes/b.md", "notes/todo.md", "notes/sub/c.md",
		"мета/план.md", "мета/бобер/x.md", "💬 чаты/old.md", ".obsidian/app.json", "write/w.md", "write/d/e.md",
		"notes/script.sh", "hidden/h.md", "../outside/secret.txt",
		"write/dash/--target-directory=..", "write/dash/--checkpoint=1", "write/dash/--checkpoint-action=exec=sh s.sh", "write/dash/s.sh"} {
		must(os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644))
	}
	for link, target := range map[string]string{
		"notes/link": "../мета", "notes/ext": "../../outside", "write/tonotes": "../notes",
		"notes/planlink": "../мета/план.md", "notes/fd3": "/proc/self/fd/3", "notes/out": "/dev/stdout",
		"notes/up": ".", "мета/бобер/o": "../../.obsidian",
	} {
		must(os.Symlink(target, filepath.Join(root, link)))
	}
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected}, {Path: "мета/бобер", Mode: zones.Write},
		{Path: "💬 чаты", Mode: zones.Create}, {Path: ".obsidian", Mode: zones.Protected}, {Path: "write", Mode: zones.Write},
		{Path: "hidden", Mode: zones.Hidden},
	}, zones.Options{})
	must(err)
	rfs, err := vaultfs.Open(root)
	must(err)
	t.Cleanup(func() { rfs.Close() })
	b := &config.Bash{
		Enabled: true, Timeout: 3 * time.Second, MaxTimeout: time.Minute, Wall: config.WallRequired,
		Env: []string{"PATH"}, MaxChangedFiles: 1000, MaxChangedBytes: 64 << 20,
	}
	s := &Set{Vault: &Vault{Root: root, Fs: rfs, StateDir: filepath.Join(base, "state")}, Zones: tab, Lang: "en", State: policy.NewState(), Bash: b}
	return s, root, filepath.Join(base, "outside")
}

func corpusCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../testdata/bash-corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cmd, _, _ := strings.Cut(text, "\t")
		cmds = append(cmds, strings.NewReplacer("⏎", "\n", "⇥", "\t").Replace(cmd))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cmds) < 100 {
		t.Fatalf("only %d corpus commands", len(cmds))
	}
	return cmds
}

// TestWallTxnCorpus runs every command of the bash corpus through the
// transaction, each in a fresh vault: a call the analysis lets run is
// judged on what it really changed, and then either every real change is
// one the analysis predicted (or it ran a program the analysis can't
// see into, which the wall bounds) and the vault holds exactly them, or
// none is applied and the vault is as it was.
func TestWallTxnCorpus(t *testing.T) {
	requireOverlay(t)
	cmds := corpusCommands(t)
	const workers = 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran, applied, refused := 0, 0, 0
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(cmds); i += workers {
				cmd := cmds[i]
				s, root, outside := corpusTxnVault(t)
				before, outBefore := tree(t, root), tree(t, outside)
				o := runBash(t, s, cmd, 0)
				after := tree(t, root)
				diff := changed(before, after)
				if d := changed(outBefore, tree(t, outside)); len(d) > 0 {
					t.Errorf("%q changed outside the vault: %v", cmd, d)
				}
				if o.res == nil {
					if len(diff) > 0 {
						t.Errorf("%q did not run (deny %v, err %v), yet the vault changed: %v", cmd, o.deny, o.err, diff)
					}
					continue
				}
				mu.Lock()
				ran++
				mu.Unlock()
				if o.res.NotApplied != "" {
					mu.Lock()
					refused++
					mu.Unlock()
					if len(diff) > 0 {
						t.Errorf("%q: nothing applied (%s), yet the vault changed: %v", cmd, firstLine(o.res.NotApplied), diff)
					}
					continue
				}
				if len(o.res.Real) > 0 {
					mu.Lock()
					applied++
					mu.Unlock()
				}
				blind := runsUnseen(o.plan.Effects)
				real := map[string]bool{}
				for _, e := range o.res.Real {
					if e.Unpredicted && !blind {
						t.Errorf("%q: real %s was not predicted (predicted %v)", cmd, e, o.plan.Effects)
					}
					if e.Refused {
						t.Errorf("%q: %s was refused, yet the call was applied", cmd, e)
					}
					real[e.Path.String()] = true
					if !e.Source.IsZero() {
						real[e.Source.String()] = true
					}
				}
				for _, p := range diff {
					if !accountedFor(p, real) {
						t.Errorf("%q: %s changed on disk, but no real effect says so (real %v)", cmd, p, o.res.Real)
					}
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d commands: %d ran, %d applied changes, %d had their changes refused", len(cmds), ran, applied, refused)
}

// runsUnseen tells a plan that runs a program whose effects the analysis
// can't know: what it changes was never predicted, only bounded.
func runsUnseen(effects []policy.Effect) bool {
	for _, e := range effects {
		if e.Op == zones.OpExec || e.Unknown {
			return true
		}
	}
	return false
}

// accountedFor tells whether a path that changed on disk is a real
// effect, inside one (a folder created or removed with what it holds).
func accountedFor(p string, real map[string]bool) bool {
	for q := p; q != "." && q != "/" && q != ""; q = filepath.Dir(q) {
		if real[q] {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
