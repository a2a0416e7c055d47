package shell

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/zones"
)

var update = flag.Bool("update", false, "rewrite testdata/bash-corpus.txt with the actual results (review the diff!)")

const corpusFile = "../testdata/bash-corpus.txt"

// sampleVault builds the fixed layout the corpus is written against, and
// returns its root. Beside the vault lies "outside", a folder a link leads to.
func sampleVault(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	vault := filepath.Join(root, "vault")
	for _, d := range []string{"notes/sub", "мета/бобер", "💬 чаты", ".obsidian", "write/d", "write/dash", "empty", "fd", "../outside"} {
		if err := os.MkdirAll(filepath.Join(vault, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"README.md", "notes/a.md", "notes/b.md", "notes/todo.md", "notes/sub/c.md",
		"мета/план.md", "мета/бобер/x.md", "💬 чаты/old.md", ".obsidian/app.json", "write/w.md", "write/d/e.md",
		"notes/script.sh", "../outside/secret.txt",
		// names a glob expands to that are options
		"write/dash/--target-directory=..", "write/dash/--checkpoint=1", "write/dash/--checkpoint-action=exec=sh s.sh", "write/dash/s.sh"} {
		if err := os.WriteFile(filepath.Join(vault, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"notes/link":     "../мета",         // into a protected folder
		"notes/ext":      "../../outside",   // out of the vault
		"write/tonotes":  "../notes",        // from the write zone into an edit zone
		"notes/planlink": "../мета/план.md", // a file link
		"fd/3":           "/proc/self/fd/3", // whatever the command binds to 3
		"fd/out":         "/dev/stdout",
		"notes/up":       ".",               // notes/up/.. is the vault, notes/up/../.. outside it
		"мета/бобер/o":   "../../.obsidian", // a write zone's link into a protected folder
	} {
		if err := os.Symlink(target, filepath.Join(vault, link)); err != nil {
			t.Fatal(err)
		}
	}
	return vault
}

// corpusOptions analyses against the real disk, as the bash tool does.
func corpusOptions(vault string) Options {
	return Options{Vault: vault}
}

// render prints an analysis in the corpus's form: decision, then effects.
func render(vault string, an *Analysis, err error) (string, string) {
	var r *Refusal
	if errors.As(err, &r) {
		return "refuse", r.Code.String()
	}
	if err != nil {
		return "error", err.Error()
	}
	decision := "allow"
	var effs []string
	outside := filepath.Dir(vault)
	for _, e := range an.Effects {
		if e.Op == zones.OpExec {
			decision = "exec"
		}
		s := e.Format(vault)
		s = strings.ReplaceAll(s, outside+"/", "@/")
		effs = append(effs, s)
	}
	if len(effs) == 0 {
		return decision, "-"
	}
	return decision, strings.Join(effs, " ; ")
}

// The corpus: one case per line, three tab-separated columns:
//
//	command <TAB> allow|exec|refuse <TAB> effects joined by " ; " (or the refusal code, or "-")
//
// In the command, ⏎ stands for a newline and ⇥ for a tab. Lines starting with # are comments.
func TestCorpus(t *testing.T) {
	vault := sampleVault(t)
	f, err := os.Open(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			out = append(out, text)
			continue
		}
		cols := strings.Split(text, "\t")
		if len(cols) != 3 {
			t.Errorf("line %d: want 3 tab-separated columns, have %d", line, len(cols))
			out = append(out, text)
			continue
		}
		n++
		cmd := strings.NewReplacer("⏎", "\n", "⇥", "\t").Replace(cols[0])
		an, err := Analyze(cmd, corpusOptions(vault))
		dec, effs := render(vault, an, err)
		if *update {
			out = append(out, cols[0]+"\t"+dec+"\t"+effs)
			continue
		}
		if dec != cols[1] || effs != cols[2] {
			t.Errorf("line %d: %s\n got: %s\t%s\nwant: %s\t%s", line, cols[0], dec, effs, cols[1], cols[2])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(corpusFile, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n < 300 {
		t.Errorf("the corpus has %d cases, want at least 300", n)
	}
	t.Logf("%d cases", n)
}

func TestFormat(t *testing.T) {
	e := Effect{Op: zones.OpMoveIn, Path: "/v/write/b", Source: "/v/notes/a", ByRename: true}
	if got, want := e.Format("/v"), "move-in write/b <- notes/a (rename)"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	e = Effect{Op: zones.OpExec, Why: VersionControl, Detail: "git"}
	if got, want := e.Format("/v"), "exec version-control git"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

func TestRefusalIsTyped(t *testing.T) {
	_, err := Analyze("echo 'open", Options{Vault: "/v"})
	var r *Refusal
	if !errors.As(err, &r) || r.Code != ParseError || r.Detail == "" {
		t.Fatalf("want a ParseError refusal with the parser's message, got %v", err)
	}
	_, err = Analyze(strings.Repeat("x", MaxCommandSize+1), Options{Vault: "/v"})
	if !errors.As(err, &r) || r.Code != TooLarge {
		t.Fatalf("want TooLarge, got %v", err)
	}
	for c := ParseError; c < numCodes; c++ {
		if c.String() == "unknown" {
			t.Errorf("code %d has no name", c)
		}
	}
	for w := ExecWhy(1); w < numWhys; w++ {
		if w.String() == "unknown" {
			t.Errorf("why %d has no name", w)
		}
	}
}

func TestPrograms(t *testing.T) {
	an, err := Analyze("cd notes && grep -rn todo . | sort | head -20; env git status; /usr/bin/gh x", Options{Vault: "/v"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(an.Programs), "[env gh git grep head sort]"; got != want {
		t.Errorf("Programs = %s, want %s", got, want)
	}
}

func TestDepthLimit(t *testing.T) {
	cmd := "rm x"
	for range 7 {
		cmd = "bash -c " + shellQuote(cmd)
	}
	_, err := Analyze(cmd, Options{Vault: "/v"})
	var r *Refusal
	if !errors.As(err, &r) || r.Code != TooDeep {
		t.Fatalf("want TooDeep, got %v", err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
