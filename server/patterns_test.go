package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
)

// patternVault is a vault whose config hides secrets by name at any
// depth, with some of them in it.
func patternVault(t *testing.T, wall string) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	for name, body := range map[string]string{
		".env": "TOKEN=root-secret\n", "config/.env.production": "TOKEN=prod-secret\n",
		"keys/id.pem": "-----BEGIN pem-secret\n", "notes/env.md": "a note about env\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, name)), 0o755)
		if err := os.WriteFile(filepath.Join(vault, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+filepath.Join(dir, "state", "audit.jsonl")+`"
[zones]
edit   = ["."]
hidden = ["**/.env", "**/.env.*", "**/*.pem"]
[bash]
wall = "`+wall+`"
`)
	return cfg, vault
}

// TestHiddenByName: what a name pattern hides is hidden from every entry
// point — the file tools, list and search, Claude Code's built-ins — and
// what it does not name is not (the positive controls).
func TestHiddenByName(t *testing.T) {
	cfg, vault := patternVault(t, "off")
	g := serverGate(t, cfg)
	p := cfg.Policy(config.DefaultAgent)
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}, Policy: p}
	call := func(tool string, args map[string]any) *Outcome {
		return g.Call(context.Background(), c, tool, args, Serve)
	}
	for _, path := range []string{".env", "config/.env.production", "keys/id.pem", "CONFIG/.ENV.production"} {
		if o := call("read", map[string]any{"path": path}); o.Decision != Deny {
			t.Errorf("read %s: %s %q", path, o.Decision, o.Text())
		}
		if o := call("write", map[string]any{"path": path, "content": "x"}); o.Decision != Deny {
			t.Errorf("write %s: %s", path, o.Decision)
		}
	}
	if o := call("read", map[string]any{"path": "notes/env.md"}); o.Decision != Allow || o.IsError() {
		t.Errorf("read notes/env.md: %s %q", o.Decision, o.Text())
	}
	list := call("list", map[string]any{"path": ".", "depth": 5})
	if list.IsError() || strings.Contains(list.Text(), ".env") || strings.Contains(list.Text(), ".pem") || !strings.Contains(list.Text(), "env.md") {
		t.Errorf("list shows what is hidden, or not the rest:\n%s", list.Text())
	}
	search := call("search", map[string]any{"query": "secret"})
	if strings.Contains(search.Text(), "secret\n") || strings.Contains(search.Text(), "-secret") {
		t.Errorf("search finds what is hidden:\n%s", search.Text())
	}
	if _, err := os.Stat(filepath.Join(vault, ".env")); err != nil {
		t.Fatal(err)
	}

	// Claude Code's built-ins, through the hook.
	hg := callGate(t, cfg, config.DefaultAgent)
	hook := func(tool string, input map[string]any) claude.HookAnswer {
		t.Helper()
		in := &claude.HookInput{SessionID: "h", Cwd: vault, HookEventName: "PreToolUse", ToolName: tool, ToolInput: input}
		a, err := hg.HookWith(context.Background(), p, in, HookOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := hook("Read", map[string]any{"file_path": filepath.Join(vault, "config/.env.production")}); a.Deny == "" {
		t.Error("the hook let Read of config/.env.production through")
	}
	if a := hook("Grep", map[string]any{"pattern": "TOKEN", "path": vault}); a.Deny == "" {
		t.Error("the hook let a vault-wide Grep through, past the hidden names")
	}
	if a := hook("Read", map[string]any{"file_path": filepath.Join(vault, "notes/env.md")}); a.Deny != "" {
		t.Errorf("Read of notes/env.md: %s", a.Deny)
	}
}

// TestWallHiddenByName: under the wall, what a name pattern hides can't
// be read by a named path, a glob or a program that walks the vault: the
// analysis refuses what it can see, the wall covers the rest.
func TestWallHiddenByName(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the walled run needs root (CI runs it)")
	}
	cfg, vault := patternVault(t, "required")
	// Inside a control folder, which the wall keeps read-only whole, a
	// hidden name needs a cover of its own.
	for _, name := range []string{".claude/.env", ".vscode/deep/.env.local", "notes/.claude/id.pem"} {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, name)), 0o755)
		os.WriteFile(filepath.Join(vault, name), []byte("TOKEN=control-secret\n"), 0o644)
	}
	g := serverGate(t, cfg)
	p := cfg.Policy(config.DefaultAgent)
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}, Policy: p}
	bash := func(command string) *Outcome {
		t.Helper()
		return g.Call(context.Background(), c, "bash", map[string]any{"command": command}, Serve)
	}
	for _, cmd := range []string{"cat .env", "head config/.env.production"} {
		if o := bash(cmd); o.Decision != Deny {
			t.Errorf("%s: %s %q", cmd, o.Decision, o.Text())
		}
	}
	// A glob the analysis leaves to the wall runs there, and finds the
	// hidden files covered: empty.
	for _, cmd := range []string{
		"cat .en?", "cat keys/*.pem", "cat */.env*", "cat .claude/.e*", "cat .vscode/*/.e*", "cat notes/.claude/*.p*",
		`grep -r TOKEN . || true`,
		`python3 -c "import os
for d, _, fs in os.walk('.'):
    for f in fs:
        try: print(open(os.path.join(d, f), errors='replace').read())
        except OSError: pass"`,
	} {
		o := bash(cmd)
		if o.Decision == Deny {
			continue // refused outright: nothing read
		}
		if o.Result == nil {
			t.Fatalf("%s: %s %q", cmd, o.Decision, o.Text())
		}
		if out := o.Result.Stdout; strings.Contains(out, "-secret") {
			t.Errorf("%s printed what is hidden:\n%s", cmd, out)
		}
	}
	if o := bash("cat notes/env.md"); o.IsError() || !strings.Contains(o.Result.Stdout, "a note about env") {
		t.Errorf("cat notes/env.md: %q", o.Text())
	}
}

// TestWallGitHoldsNoHiddenCopy: a hidden note that git ever committed is
// not read back through .git — not by git inside the wall (which finds no
// repository there), nor by reading git's files — while a vault with no
// hidden zone keeps its repository readable (the positive control).
func TestWallGitHoldsNoHiddenCopy(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the walled run needs root (CI runs it)")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is missing: %v", err)
	}
	for _, hidden := range []bool{true, false} {
		cfg, vault := patternVault(t, "required")
		if !hidden {
			body, _ := os.ReadFile(cfg.File)
			os.WriteFile(cfg.File, []byte(strings.Replace(string(body), `hidden = ["**/.env", "**/.env.*", "**/*.pem"]`, "", 1)), 0o644)
			if cfg, err = config.Load(cfg.File); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "all"}} {
			cmd := exec.Command(git, args...)
			cmd.Dir = vault
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
		time.Sleep(30 * time.Millisecond) // the commit's files older than a call's start
		g := serverGate(t, cfg)
		p := cfg.Policy(config.DefaultAgent)
		c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}, Policy: p}
		o := g.Call(context.Background(), c, "bash", map[string]any{"command": "git show HEAD:.env; git log --oneline | head -1; cat .git/HEAD"}, Serve)
		out := ""
		if o.Result != nil {
			out = o.Result.Stdout
		}
		switch {
		case hidden && strings.Contains(out, "root-secret"):
			t.Errorf("git printed a hidden note from its objects:\n%s", out)
		case hidden && strings.Contains(out, "refs/heads"):
			t.Errorf("the wall let .git be read with a hidden zone in the vault:\n%s", out)
		case !hidden && (!strings.Contains(out, "all") || !strings.Contains(out, "refs/heads")):
			t.Errorf("without a hidden zone, git and .git are not there: %s %q", o.Decision, o.Text())
		}
		r := g.Call(context.Background(), c, "read", map[string]any{"path": ".git/HEAD"}, Serve)
		if hidden != (r.Decision == Deny) {
			t.Errorf("hidden %v: read .git/HEAD: %s %q", hidden, r.Decision, r.Text())
		}
	}
}

// TestWallCoversWhatAppearsBetweenCalls: a hidden name that appears
// between two walled calls — written by a person's editor, renamed into
// the vault from outside, brought by a git clone — is covered on the very
// next call, with no wait: the wall's index of names is brought up to date
// before each call, not trusted as it stands.
func TestWallCoversWhatAppearsBetweenCalls(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the walled run needs root (CI runs it)")
	}
	cfg, vault := patternVault(t, "required")
	g := serverGate(t, cfg)
	p := cfg.Policy(config.DefaultAgent)
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}, Policy: p}
	bash := func(command string) string {
		t.Helper()
		o := g.Call(context.Background(), c, "bash", map[string]any{"command": command}, Serve)
		if o.Result == nil {
			t.Fatalf("%s: %s %q", command, o.Decision, o.Text())
		}
		return o.Result.Stdout
	}
	bash("true") // the index has read the vault
	outside := t.TempDir()
	steps := []struct {
		route string
		make  func() error
		shown string // a name beside it the wall shows (the positive control)
	}{
		{"a person's editor", func() error {
			os.MkdirAll(filepath.Join(vault, "deep/er/still"), 0o755)
			os.WriteFile(filepath.Join(vault, "deep/er/still/plain.md"), []byte("plain-one\n"), 0o644)
			return os.WriteFile(filepath.Join(vault, "deep/er/still/.env"), []byte("TOKEN=edited-secret\n"), 0o644)
		}, "plain-one"},
		{"a rename into the vault", func() error {
			os.MkdirAll(filepath.Join(outside, "proj/sub"), 0o755)
			os.WriteFile(filepath.Join(outside, "proj/sub/id.pem"), []byte("moved-secret\n"), 0o644)
			os.WriteFile(filepath.Join(outside, "proj/sub/readme.md"), []byte("plain-two\n"), 0o644)
			return os.Rename(filepath.Join(outside, "proj"), filepath.Join(vault, "notes/proj"))
		}, "plain-two"},
		{"a git clone", func() error {
			src := filepath.Join(outside, "repo")
			os.MkdirAll(src, 0o755)
			os.WriteFile(filepath.Join(src, "readme.md"), []byte("plain-three\n"), 0o644)
			os.WriteFile(filepath.Join(src, "notes.md"), []byte("cloned-secret\n"), 0o644)
			for _, args := range [][]string{{"-C", src, "init", "-q"}, {"-C", src, "add", "-A"}, {"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}, {"-C", src, "rm", "-q", "notes.md"}, {"-C", src, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "y"}, {"clone", "-q", src, filepath.Join(vault, "notes/clone")}} {
				if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
					return fmt.Errorf("git %v: %v %s", args, err, out)
				}
			}
			return nil
		}, "plain-three"},
	}
	for _, s := range steps {
		if err := s.make(); err != nil {
			t.Fatalf("%s: %v", s.route, err)
		}
		// No wait: the very next call.
		out := bash(`grep -r . . 2>/dev/null; cd notes/clone 2>/dev/null && git log -p 2>&1 | grep secret; true`)
		if strings.Contains(out, "-secret") {
			t.Errorf("after %s, the next walled call read a hidden name:\n%s", s.route, out)
		}
		if !strings.Contains(out, s.shown) {
			t.Errorf("after %s, the next walled call did not see %s beside it", s.route, s.shown)
		}
	}
	if st := g.vault.Names.Status(); !st.Exact {
		t.Errorf("the name index is not exact: %+v", st)
	}
}
