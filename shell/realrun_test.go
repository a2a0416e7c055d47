package shell

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/zones"
)

// entry is what a tree snapshot keeps of one path.
type entry struct {
	kind string // file, dir, link
	sum  string // file: sha256, mode and mtime; link: target; dir: mode
}

// snapshot records every path under root (links not followed).
func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = entry{"link", target}
		case fi.IsDir():
			out[p] = entry{"dir", fi.Mode().String()}
		default:
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			out[p] = entry{"file", fmt.Sprintf("%s %s %d", hex.EncodeToString(h[:]), fi.Mode(), fi.ModTime().UnixNano())}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// covered reports whether a change to p is one of the predicted effects.
func covered(p string, effects []Effect, ops ...zones.Op) bool {
	for _, e := range effects {
		ok := false
		for _, op := range ops {
			ok = ok || e.Op == op
		}
		if !ok {
			continue
		}
		if e.Unknown {
			return true // the analysis said it could not know: any path
		}
		if e.Op == zones.OpLink && e.Source == p {
			// a hard link made in the command aliases its source; the link
			// is allowed only when the source is in a write zone too
			return true
		}
		if e.Path == p || ((e.Subtree || e.Op == zones.OpMoveIn || e.Op == zones.OpMoveOut || e.Op == zones.OpCreate) && strings.HasPrefix(p, e.Path+"/")) {
			// a moved or newly made folder carries what lies inside it
			return true
		}
	}
	return false
}

// TestCorpusRealRuns runs every allowed corpus case that changes files, for
// real, in a fresh copy of the corpus vault, and fails on any change to the
// tree that the analysis did not predict. This is the analysis on its own
// (no wall): what it says a command touches must be all it touches.
func TestCorpusRealRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hundreds of real commands; not in -short")
	}
	f, err := os.Open(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	ran, skipped := 0, 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 3 || cols[1] != "allow" || !changesFiles(cols[2]) {
			continue
		}
		cmd := strings.NewReplacer("⏎", "\n", "⇥", "\t").Replace(cols[0])
		vault := sampleVault(t)
		root := filepath.Dir(vault) // the vault and the "outside" folder beside it
		an, err := Analyze(cmd, corpusOptions(vault))
		if err != nil {
			t.Errorf("line %d: %s: %v", line, cols[0], err)
			continue
		}
		if reason := unsafeToRun(an, root); reason != "" {
			// Without the wall nothing stops a real command but the
			// analysis under test: never let a case reach past the
			// temporary tree. Such cases are judged by the policy instead
			// (zones deny every path outside the vault, every unknown write).
			skipped++
			continue
		}
		before := snapshot(t, root)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := sandbox.Run(ctx, sandbox.Request{
			Command: asUnprivileged(t, root, cmd), Dir: vault, Env: []string{"PATH", "LANG"}, Environ: os.Environ(), Timeout: 5 * time.Second,
		})
		cancel()
		if err != nil {
			t.Errorf("line %d: %s: %v", line, cols[0], err)
			continue
		}
		ran++
		after := snapshot(t, root)
		var unpredicted []string
		for p, a := range after {
			b, existed := before[p]
			switch {
			case !existed && !covered(p, an.Effects, zones.OpCreate, zones.OpModify, zones.OpMoveIn, zones.OpLink):
				unpredicted = append(unpredicted, "created "+p)
			case existed && a != b && a.kind != "dir" && !covered(p, an.Effects, zones.OpModify, zones.OpMoveIn, zones.OpCreate, zones.OpLink):
				unpredicted = append(unpredicted, "changed "+p)
			case existed && a != b && a.kind == "dir" && !covered(p, an.Effects, zones.OpModify, zones.OpCreate, zones.OpMoveIn):
				unpredicted = append(unpredicted, "changed mode of "+p)
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok && !covered(p, an.Effects, zones.OpDelete, zones.OpMoveOut) {
				unpredicted = append(unpredicted, "removed "+p)
			}
		}
		if len(unpredicted) > 0 {
			t.Errorf("line %d: %s\n predicted: %s\n unpredicted: %s\n exit %d, stderr %q", line, cols[0], cols[2],
				strings.ReplaceAll(strings.Join(unpredicted, ", "), root+"/", ""), res.ExitCode, res.Stderr)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if ran < 100 {
		t.Errorf("only %d cases ran for real, want at least 100", ran)
	}
	t.Logf("%d cases ran for real; %d reach past the test's tree or write unknown paths and were not run", ran, skipped)
}

func changesFiles(effects string) bool {
	for _, e := range strings.Split(effects, " ; ") {
		op, _, _ := strings.Cut(e, " ")
		switch op {
		case "create", "modify", "delete", "move-in", "move-out", "link":
			return true
		}
	}
	return false
}

// unsafeToRun says why a case must not run for real: a write effect on a
// path outside root, or on a path the analysis could not know.
func unsafeToRun(an *Analysis, root string) string {
	for _, e := range an.Effects {
		if e.Op == zones.OpRead {
			continue
		}
		if e.Unknown {
			return "writes an unknown path"
		}
		for _, p := range []string{e.Path, e.Source} {
			if p != "" && p != root && !strings.HasPrefix(p, root+"/") {
				return "reaches " + p
			}
		}
	}
	return ""
}

// asUnprivileged wraps cmd to run as nobody when the test runs as root, and
// gives nobody the test's tree: a second guard, so that a command whose
// analysis is wrong can't harm the machine that runs the tests.
func asUnprivileged(t *testing.T, root, cmd string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return cmd
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running the corpus as root needs setpriv (util-linux) to drop to nobody: %v", err)
	}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			os.Lchown(p, 65534, 65534)
		}
		return nil
	})
	// nobody must be able to reach root through the test's temp folders
	for dir := filepath.Dir(root); dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(dir, fi.Mode().Perm()|0o711)
		}
	}
	return "exec " + setpriv + " --reuid=65534 --regid=65534 --clear-groups -- /bin/bash --noprofile --norc -c " + shellQuote(cmd)
}
