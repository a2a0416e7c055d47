package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	claudecode "github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// starterUser is the agent's user that `vaultgate init` names as root.
const starterUser = "vaultgate-agent"

// npmInstallClaude installs the pinned Claude Code as a person would,
// under home: `npm install -g --prefix ~/.local`, from npm's cache where
// the repository's own install (interop/claude) put it, else from the
// registry.
func npmInstallClaude(t *testing.T, home string) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skipf("npm is not installed (CI installs it): %v", err)
	}
	cache, err := exec.Command(npm, "config", "get", "cache").Output()
	if err != nil {
		t.Fatalf("npm config get cache: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "-g", "--prefix", filepath.Join(home, ".local"),
		"--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", "@anthropic-ai/claude-code@"+claudeVersion)
	// npm keeps the test's own environment (a proxy, its certificates),
	// with the person's home.
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(strings.ToLower(kv), "npm_config_")
	}), "HOME="+home, "npm_config_cache="+strings.TrimSpace(string(cache)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install -g --prefix ~/.local @anthropic-ai/claude-code@%s: %v\n%s", claudeVersion, err, out)
	}
}

// TestClaudeCodeRunStarter is a person's `vaultgate run --claude` from
// scratch, as root: Claude Code installed by npm under their home
// (~/.local, beside the state folder init puts in ~/.local/state), a
// config written by `vaultgate init` and not edited, the agent's user
// created with the command init printed, and the model's key and address
// given through the variables init named. The real Claude Code, driven by
// the scripted model on 127.0.0.1, must: be offered the vault's tools and
// none of its file built-ins; read a note and write one through the
// vault's tools; have its calls of Write and Bash, which it was not
// offered, refused and in the audit log. The run id run prints must be
// what `audit tail`, `history` and `undo --session` take, and the view
// must have shown Claude Code's package folder only, never ~/.local.
func TestClaudeCodeRunStarter(t *testing.T) {
	needClaude(t) // the pinned version is in npm's cache, and CI has it
	needRootForRun(t)
	bin := bundle(t)
	if err := os.Chmod(bin, 0o755); err != nil { // the agent runs vaultgate connect from it
		t.Fatal(err)
	}
	vg := filepath.Join(bin, "vaultgate")

	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	home, vault := filepath.Join(root, "home"), filepath.Join(root, "home", "Notes")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	npmInstallClaude(t, home)
	pkg := filepath.Join(home, ".local", "lib", "node_modules", "@anthropic-ai", "claude-code")

	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8"}
	vaultgate := func(t *testing.T, extra []string, args ...string) (string, string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, vg, args...)
		cmd.Env = append(slices.Clone(env), extra...)
		cmd.Dir = home
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	out, errOut, err := vaultgate(t, nil, "init", vault)
	if err != nil {
		t.Fatalf("vaultgate init: %v\n%s%s", err, out, errOut)
	}
	cfg := filepath.Join(home, ".config", "vaultgate", "Notes.toml")
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatalf("init wrote no %s: %v\n%s", cfg, err, out)
	}
	if strings.Contains(string(body), "read_only") {
		t.Errorf("the starter config names read_only:\n%s", body)
	}
	for _, want := range []string{"VAULTGATE_AGENT_ANTHROPIC_API_KEY as ANTHROPIC_API_KEY", "VAULTGATE_AGENT_ANTHROPIC_BASE_URL as ANTHROPIC_BASE_URL", "/login", "vaultgate run --config " + cfg + " --claude"} {
		if !strings.Contains(out, want) {
			t.Errorf("init does not say %q:\n%s", want, out)
		}
	}
	useradd := "useradd --system --user-group --no-create-home --shell /usr/sbin/nologin " + starterUser
	if _, err := user.Lookup(starterUser); err != nil {
		// The agent's user is missing: init and run say how to make it,
		// and run starts nothing.
		if !strings.Contains(out, "\n  "+useradd+"\n") {
			t.Errorf("init does not print %q:\n%s", useradd, out)
		}
		if _, e, err := vaultgate(t, nil, "run", "--config", cfg, "--claude", "--", "-p", "hi"); err == nil || !strings.Contains(e, useradd) {
			t.Errorf("run without the agent's user: %v, %s", err, e)
		}
		f := strings.Fields(useradd)
		if o, err := exec.Command(f[0], f[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", useradd, err, o)
		}
	} else if !strings.Contains(out, "As root, run starts Claude Code as the user "+starterUser+".") {
		t.Errorf("init does not name the agent's user:\n%s", out)
	}

	note := "notes/from-run.md"
	steps := []modelStep{
		{"mcp__vault__read", map[string]any{"path": "Welcome.md"}},
		{"mcp__vault__write", map[string]any{"path": note, "content": "written by Claude Code under vaultgate run\n"}},
		{"Write", map[string]any{"file_path": filepath.Join(vault, "Welcome.md"), "content": "must not land\n"}},
		{"Bash", map[string]any{"command": "cat " + cfg}},
	}
	model, url := newScriptedModel(t, steps)
	welcome, _ := os.ReadFile(filepath.Join(vault, "Welcome.md"))

	out, errOut, err = vaultgate(t, []string{"VAULTGATE_AGENT_ANTHROPIC_API_KEY=sk-ant-test-not-a-key", "VAULTGATE_AGENT_ANTHROPIC_BASE_URL=" + url},
		"run", "--config", cfg, "--claude", "--", "-p", "work in the vault", "--output-format", "json")
	if err != nil {
		t.Fatalf("vaultgate run --claude: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	m := regexp.MustCompile(`vaultgate: run ([0-9a-f-]+): `).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("run printed no run id:\n%s", errOut)
	}
	runID := m[1]
	if !strings.Contains(errOut, "shown read-only for it to start: "+pkg+"\n") {
		t.Errorf("run did not show Claude Code's package folder alone (%s):\n%s", pkg, errOut)
	}

	// What the model was offered: the vault's tools, none of the file built-ins.
	offered := model.tools
	for _, tool := range []string{"mcp__vault__read", "mcp__vault__write", "mcp__vault__edit", "mcp__vault__bash"} {
		if !slices.Contains(offered, tool) {
			t.Errorf("Claude Code did not offer %s: %v", tool, offered)
		}
	}
	for _, tool := range claudecode.RunDenied() {
		if slices.Contains(offered, tool) {
			t.Errorf("Claude Code offered %s under run: %v", tool, offered)
		}
	}
	if r, ok := model.result(0); !ok || r.IsError || !strings.Contains(r.Text, "This is the sample vault for vaultgate.") {
		t.Errorf("mcp__vault__read: %+v (came back: %v)", r, ok)
	}
	if r, ok := model.result(1); !ok || r.IsError {
		t.Errorf("mcp__vault__write: %+v (came back: %v)", r, ok)
	}
	if got, err := os.ReadFile(filepath.Join(vault, note)); err != nil || !strings.Contains(string(got), "under vaultgate run") {
		t.Errorf("%s: %q %v", note, got, err)
	}
	for i, tool := range []string{"Write", "Bash"} {
		if r, ok := model.result(2 + i); !ok || !r.IsError {
			t.Errorf("%s was not refused: %+v (came back: %v)", tool, r, ok)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(vault, "Welcome.md")); string(got) != string(welcome) {
		t.Errorf("Welcome.md changed: %q", got)
	}

	// The audit log: every line the run's, under its id; the refused
	// built-ins there too.
	statePath := stateFolder(t, body, home)
	lines := readAudit(t, filepath.Join(statePath, "audit.jsonl"))
	for _, l := range lines {
		if l.Via != "run" || l.Session != runID {
			t.Errorf("a line not of the run %s: %+v", runID, l)
		}
	}
	for _, tool := range []string{"read", "write", "Write", "Bash"} {
		if !slices.ContainsFunc(lines, func(l auditLine) bool {
			want := "deny" // a built-in the run did not offer: refused, with a reason
			if tool == "read" || tool == "write" {
				want = "allow"
			}
			return l.Tool == tool && l.Decision == want
		}) {
			t.Errorf("no audit line for %s: %+v", tool, lines)
		}
	}

	// The run id as --session: audit tail, history, undo.
	tail, e, err := vaultgate(t, nil, "audit", "tail", "--config", cfg, "--session", runID, "--json")
	if err != nil {
		t.Fatalf("audit tail --session: %v %s", err, e)
	}
	var tools []string
	sc := bufio.NewScanner(strings.NewReader(tail))
	for sc.Scan() {
		var c struct{ Tool string }
		json.Unmarshal(sc.Bytes(), &c)
		tools = append(tools, c.Tool)
	}
	for _, tool := range []string{"read", "write", "Write", "Bash"} {
		if !slices.Contains(tools, tool) {
			t.Errorf("audit tail --session %s lacks %s: %v", runID, tool, tools)
		}
	}
	hist, e, err := vaultgate(t, nil, "history", "--config", cfg, "--session", runID)
	if err != nil || !strings.Contains(hist, note) {
		t.Errorf("history --session %s: %v %s\n%s", runID, err, e, hist)
	}
	if o, e, err := vaultgate(t, nil, "undo", "--config", cfg, "--session", runID); err != nil {
		t.Errorf("undo --session %s: %v\n%s%s", runID, err, o, e)
	}
	if _, err := os.Stat(filepath.Join(vault, note)); !os.IsNotExist(err) {
		t.Errorf("undo --session %s left %s: %v", runID, note, err)
	}
	if t.Failed() {
		t.Logf("claude's output: %s\nrun's stderr: %s\nconfig:\n%s", out, errOut, body)
	}
}

// stateFolder is the folder of the audit log a starter config names.
func stateFolder(t *testing.T, body []byte, home string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^path = "([^"]+)/audit\.jsonl"`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no [audit] path in the starter config:\n%s", body)
	}
	if rest, ok := strings.CutPrefix(string(m[1]), "~/"); ok {
		return filepath.Join(home, rest)
	}
	return string(m[1])
}
