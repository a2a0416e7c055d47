package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

// corpusVault is the layout the bash corpus (testdata/bash-corpus.txt) is
// written against (shell/corpus_test.go's sampleVault), with a hidden
// folder added, and its zone table.
func corpusVault(t *testing.T) (string, *zones.Table, []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	vault := filepath.Join(root, "vault")
	for _, d := range []string{"notes/sub", "мета/бобер", "💬 чаты", ".obsidian", "write/d", "empty", "hidden", "../outside"} {
		must(t, os.MkdirAll(filepath.Join(vault, d), 0o755))
	}
	for _, f := range []string{"README.md", "notes/a.md", "notes/b.md", "notes/todo.md", "notes/sub/c.md",
		"мета/план.md", "мета/бобер/x.md", "💬 чаты/old.md", ".obsidian/app.json", "write/w.md", "write/d/e.md",
		"notes/script.sh", "hidden/h.md", "../outside/secret.txt"} {
		must(t, os.WriteFile(filepath.Join(vault, f), []byte("x\n"), 0o644))
	}
	for link, target := range map[string]string{
		"notes/link": "../мета", "notes/ext": "../../outside", "write/tonotes": "../notes",
		"notes/planlink": "../мета/план.md", "notes/fd3": "/proc/self/fd/3", "notes/out": "/dev/stdout",
	} {
		must(t, os.Symlink(target, filepath.Join(vault, link)))
	}
	tab, err := zones.New(vault, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected}, {Path: "мета/бобер", Mode: zones.Write},
		{Path: "💬 чаты", Mode: zones.Create}, {Path: ".obsidian", Mode: zones.Protected}, {Path: "write", Mode: zones.Write},
		{Path: "hidden", Mode: zones.Hidden},
	}, zones.Options{})
	must(t, err)
	// What must never change: protected and hidden files, and the outside.
	keep := []string{
		filepath.Join(vault, "мета/план.md"), filepath.Join(vault, ".obsidian"), filepath.Join(vault, "hidden"),
		filepath.Join(root, "outside"),
	}
	return vault, tab, keep
}

// TestWallCorpus runs every command of the bash corpus for real under the
// wall, whatever the analysis says of it (the wall must hold where the
// analysis would refuse): after each, the protected and hidden files and
// the folder outside the vault are as they were.
func TestWallCorpus(t *testing.T) {
	requireWall(t)
	f, err := os.Open("../testdata/bash-corpus.txt")
	must(t, err)
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
		cmd = strings.NewReplacer("⏎", "\n", "⇥", "\t").Replace(cmd)
		cmds = append(cmds, cmd)
	}
	must(t, sc.Err())
	if len(cmds) < 100 {
		t.Fatalf("only %d corpus commands", len(cmds))
	}
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			vault, tab, keep := corpusVault(t)
			for i := w; i < len(cmds); i += workers {
				before := snapshot(t, keep...)
				res := walled(t, tab, vault, cmds[i], func(r *Request) { r.Timeout = 3 * time.Second })
				after := snapshot(t, keep...)
				for p, b := range before {
					if a := after[p]; a != b {
						t.Errorf("%q: %s changed: %q → %q (stderr %q)", cmds[i], p, b, a, res.Stderr)
					}
				}
				for p := range after {
					if _, ok := before[p]; !ok {
						t.Errorf("%q: %s appeared", cmds[i], p)
					}
				}
			}
		})
	}
	wg.Wait()
}
