package interop

import (
	"bufio"
	"context"
	"encoding/json"
	claudecode "github.com/vaultgate/vaultgate/claude"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/tools"
)

// claudeVersion is the Claude Code the test drives, pinned in
// interop/claude/package.json.
const claudeVersion = "2.1.332"

// needClaude returns the pinned Claude Code CLI, or stops the test: in CI
// (CI=true) a missing one fails it, elsewhere it skips, saying what to run.
func needClaude(t *testing.T) string {
	t.Helper()
	const fix = "run `npm ci --prefix interop/claude` (it brings Claude Code " + claudeVersion + "'s own Linux binary)"
	stop := t.Skipf
	if os.Getenv("CI") == "true" {
		stop = t.Fatalf
	}
	bin, err := filepath.Abs("claude/node_modules/.bin/claude")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		stop("Claude Code is not installed in interop/claude/node_modules: %s (%v)", fix, err)
		return ""
	}
	if !strings.HasPrefix(string(out), claudeVersion+" ") {
		stop("interop/claude holds Claude Code %q, not %s: %s", strings.TrimSpace(string(out)), claudeVersion, fix)
		return ""
	}
	return bin
}

var (
	bundleOnce sync.Once
	bundleDir  string
	bundleErr  error
)

// bundle builds vaultgate, vaultgate-hook and vaultgate-wall side by side,
// as `go install ./cmd/...` installs them.
func bundle(t *testing.T) string {
	t.Helper()
	bundleOnce.Do(func() {
		bundleDir, bundleErr = os.MkdirTemp("", "vaultgate-claude-")
		if bundleErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", bundleDir+"/", "../cmd/vaultgate", "../cmd/vaultgate-hook", "../cmd/vaultgate-wall").CombinedOutput()
		if err != nil {
			bundleErr = &buildError{err, out}
		}
	})
	if bundleErr != nil {
		t.Fatal(bundleErr)
	}
	return bundleDir
}

// claudeVault is a fresh copy of the sample vault with a config beside it
// (outside it), and Claude Code's files written by `vaultgate init
// --claude` into the vault, which is the folder Claude Code starts in.
type claudeVault struct {
	dir, cfg, audit, home string
}

func newClaudeVault(t *testing.T) *claudeVault {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	v := &claudeVault{dir: filepath.Join(root, "vault"), cfg: filepath.Join(root, "vault.toml"),
		audit: filepath.Join(root, "state", "audit.jsonl"), home: filepath.Join(root, "home")}
	vaulttest.CopyDir(t, "../testdata/vault", v.dir)
	body := `vault = "vault"
lang  = "en"
[audit]
path = "state/audit.jsonl"
[zones]
write     = ["мета/бобер"]
create    = ["💬 чаты"]
edit      = ["."]
protected = [".obsidian", "мета"]
[bash]
wall = "best-effort"
`
	if err := os.WriteFile(v.cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bundle(t), "vaultgate"), "init", "--config", v.cfg, "--claude", v.dir, v.dir).CombinedOutput()
	if err != nil {
		t.Fatalf("vaultgate init --claude: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kept "+v.cfg) {
		t.Fatalf("init did not keep the existing config:\n%s", out)
	}
	// A fresh HOME in which the person has accepted the workspace-trust
	// dialog for the vault, and nothing else.
	os.MkdirAll(v.home, 0o700)
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{v.dir: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(v.home, ".claude.json"), trust, 0o600); err != nil {
		t.Fatal(err)
	}
	return v
}

// runClaude runs `claude -p` in the vault against the scripted model and
// waits for it to end.
func (v *claudeVault) runClaude(t *testing.T, claude, modelURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "work in the vault", "--output-format", "json")
	cmd.Dir = v.dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + v.home, "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + modelURL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"ENABLE_TOOL_SEARCH=false", // the vault's tools are offered, not deferred
	}
	if os.Geteuid() == 0 {
		cmd.Env = append(cmd.Env, "IS_SANDBOX=1")
	}
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("claude -p: %v\nstdout: %s\nstderr: %s", err, out, stderr)
	}
	return string(out)
}

type auditLine struct {
	ID, Session, Via, Tool, Decision, Rule, Reason, Event, Outcome string
	ToolUseID                                                      string `json:"tool_use_id"`
	Effects                                                        []struct{ Op, Path, Zone string }
	Args                                                           map[string]any
}

func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []auditLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

// TestClaudeCode starts the real Claude Code (pinned, from npm) in -p mode
// in a vault set up by `vaultgate init --claude`, with nothing but the
// files init wrote and a trusted workspace, and drives it with a scripted
// model through every kind of call: the vault's tools reading, writing
// and refused; the built-in Read, Write, Edit and Bash allowed and
// refused by the hook; Claude Code's own tools that touch no file; and
// tools refused on purpose. Each is checked in the tool_result Claude Code
// sent back, on disk and in the audit log. No call may end in a permission
// prompt (in -p mode, a refusal "you haven't granted it yet").
func TestClaudeCode(t *testing.T) {
	claude := needClaude(t)
	v := newClaudeVault(t)
	abs := func(rel string) string { return filepath.Join(v.dir, rel) }
	type call struct {
		step  modelStep
		isErr bool
		want  string // in the tool_result
		via   string // the audit line's via ("" : no line of its own is looked for)
		dec   string // and decision
	}
	calls := []call{
		{modelStep{"mcp__vault__read", map[string]any{"path": "Welcome.md"}}, false, "# Welcome", "stdio", "allow"},
		{modelStep{"mcp__vault__write", map[string]any{"path": "notes/from-mcp.md", "content": "written through the vault's tool\n"}}, false, "", "stdio", "allow"},
		{modelStep{"mcp__vault__delete", map[string]any{"path": "мета/план.md"}}, true, "zone protected", "stdio", "deny"},
		{modelStep{"mcp__vault__list", map[string]any{"path": "."}}, false, `"zones"`, "stdio", "allow"},
		{modelStep{"mcp__vault__read", map[string]any{"path": "notes/big.md"}}, false, "[vaultgate: shown lines 1–", "stdio", "allow"},
		{modelStep{"Read", map[string]any{"file_path": abs("notes/ideas.md")}}, false, "", "hook", "allow"},
		{modelStep{"Write", map[string]any{"file_path": abs("notes/by-claude.md"), "content": "written by Claude Code's Write\n"}}, false, "", "hook", "allow"},
		{modelStep{"Write", map[string]any{"file_path": abs("мета/by-claude.md"), "content": "must not land\n"}}, true, "zone protected", "hook", "deny"},
		{modelStep{"Edit", map[string]any{"file_path": abs("notes/ideas.md"), "old_string": "ideas", "new_string": "IDEAS", "replace_all": true}}, false, "", "hook", "allow"},
		{modelStep{"Read", map[string]any{"file_path": abs("мета/план.md")}}, false, "", "hook", "allow"},
		{modelStep{"Edit", map[string]any{"file_path": abs("мета/план.md"), "old_string": "План", "new_string": "ПЛАН", "replace_all": true}}, true, "zone protected", "hook", "deny"},
		{modelStep{"Bash", map[string]any{"command": "echo from-bash > notes/by-bash.md && cat notes/by-bash.md", "description": "write a note"}}, false, "from-bash", "", ""},
		{modelStep{"Bash", map[string]any{"command": "rm мета/план.md", "description": "remove a protected note"}}, true, "zone protected", "hook", "deny"},
		{modelStep{"CronList", map[string]any{}}, false, "", "hook", "allow"},
		{modelStep{"ListAgents", map[string]any{}}, false, "", "hook", "allow"},
		{modelStep{"Monitor", map[string]any{"command": "true", "description": "watch nothing"}}, true, "Monitor is not allowed here", "hook", "deny"},
		{modelStep{"WebFetch", map[string]any{"url": "https://example.com/", "prompt": "x"}}, true, "WebFetch is not allowed here", "hook", "deny"},
		{modelStep{"EnterWorktree", map[string]any{"name": "x"}}, true, "EnterWorktree is not allowed here", "hook", "deny"},
		{modelStep{"Agent", map[string]any{"description": "look around", "prompt": "list the notes", "isolation": "worktree"}}, true, "Agent is not allowed here", "hook", "deny"},
	}
	steps := make([]modelStep, len(calls))
	for i, c := range calls {
		steps[i] = c.step
	}
	model, url := newScriptedModel(t, steps)
	ideasBefore, _ := os.ReadFile(abs("notes/ideas.md"))
	planBefore, _ := os.ReadFile(abs("мета/план.md"))
	out := v.runClaude(t, claude, url)

	for i, c := range calls {
		r, ok := model.result(i)
		switch {
		case !ok:
			t.Errorf("step %d %s: no tool_result came back", i, c.step.tool)
		case strings.Contains(r.Text, "haven't granted it yet") || strings.Contains(r.Text, "requested permissions"):
			t.Errorf("step %d %s: Claude Code wanted a permission prompt: %s", i, c.step.tool, r.Text)
		case r.IsError != c.isErr:
			t.Errorf("step %d %s: is_error %v, want %v: %s", i, c.step.tool, r.IsError, c.isErr, r.Text)
		case !strings.Contains(r.Text, c.want):
			t.Errorf("step %d %s: tool_result lacks %q:\n%.600s", i, c.step.tool, c.want, r.Text)
		}
	}

	// on disk
	for path, want := range map[string]string{
		"notes/from-mcp.md":  "written through the vault's tool\n",
		"notes/by-claude.md": "written by Claude Code's Write\n",
		"notes/by-bash.md":   "from-bash\n",
		"мета/план.md":       string(planBefore),
		"notes/ideas.md":     strings.ReplaceAll(string(ideasBefore), "ideas", "IDEAS"),
	} {
		if got, err := os.ReadFile(abs(path)); err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v), want %q", path, got, err, want)
		}
	}
	if _, err := os.Stat(abs("мета/by-claude.md")); err == nil {
		t.Error("a refused Write reached the protected zone")
	}
	if _, err := os.Stat(abs(".claude/worktrees")); err == nil {
		t.Error("a refused EnterWorktree made a worktree")
	}

	// in the audit log: each call judged, where and as the test expects
	lines := readAudit(t, v.audit)
	for i, c := range calls {
		if c.via == "" {
			continue
		}
		tool := c.step.tool
		if name, ok := strings.CutPrefix(tool, "mcp__vault__"); ok {
			tool = name
		}
		found := slices.ContainsFunc(lines, func(l auditLine) bool {
			// the hook's line carries Claude Code's id of the call: the
			// one the model gave it
			return l.Via == c.via && l.Tool == tool && l.Decision == c.dec && l.Event == "" && (c.via != "hook" || l.ToolUseID == stepID(i))
		})
		if !found {
			t.Errorf("step %d %s: no audit line via %s with decision %s (and, from the hook, tool_use_id %s)", i, c.step.tool, c.via, c.dec, stepID(i))
		}
	}
	for _, l := range lines {
		if l.Via == "hook" && l.Event == audit.EventAfter && !strings.HasPrefix(l.ToolUseID, "toolu_vg") {
			t.Errorf("a PostToolUse line without the call's tool_use_id: %+v", l)
		}
	}
	if t.Failed() {
		t.Logf("claude's output: %s", out)
	}
	// one session across the hook and the server: both carry Claude Code's
	// session_id, and audit tail --session finds both
	var res struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal([]byte(out), &res)
	vias := map[string]bool{}
	for _, l := range lines {
		if l.Session != res.SessionID {
			t.Errorf("an audit line of session %q, not Claude Code's %q: %+v", l.Session, res.SessionID, l)
		}
		vias[l.Via] = true
	}
	tail, err := exec.Command(filepath.Join(bundle(t), "vaultgate"), "audit", "tail", "--audit", v.audit, "--session", res.SessionID, "-n", "100", "--json").Output()
	if err != nil || res.SessionID == "" || !strings.Contains(string(tail), `"via":"hook"`) || !strings.Contains(string(tail), `"via":"stdio"`) {
		t.Errorf("audit tail --session %q: %v, want the hook's and the server's lines\n%s", res.SessionID, err, tail)
	}

	// what Claude Code changed, through any of its tools, is kept, and the
	// person's undo of its session puts the vault back as it was
	claudeUndo(t, v, res.SessionID, map[string]string{
		"notes/from-mcp.md": "write", "notes/by-claude.md": "Write", "notes/ideas.md": "Edit", "notes/by-bash.md": "bash",
	}, map[string]string{"notes/ideas.md": string(ideasBefore)})

	// every tool Claude Code offers is placed: judged, passed, refused on
	// purpose, or the web tools [hook] allow may let through
	passing := claudecode.Named(claudecode.Passed)
	placed := append(tools.JudgedDespiteAllow([]string{"*"}), passing...)
	placed = append(placed, "WebFetch", "WebSearch")
	model.mu.Lock()
	offered := model.tools
	model.mu.Unlock()
	if len(offered) == 0 {
		t.Error("Claude Code offered no tools")
	}
	for _, name := range offered {
		if !strings.HasPrefix(name, "mcp__") && !slices.Contains(placed, name) {
			t.Errorf("Claude Code %s offers %s, which the hook's table does not place", claudeVersion, name)
		}
	}
	if !slices.Contains(offered, "mcp__vault__read") {
		t.Errorf("the vault's tools are not offered: %v", offered)
	}
}

// claudeUndo checks the history of a Claude Code session: each changed
// path is listed, by the tool that changed it and confirmed (not pending,
// which would mean its PostToolUse never came), and `vaultgate undo
// --session` leaves the paths as they were (gone, or with their content
// before the session).
func claudeUndo(t *testing.T, v *claudeVault, session string, tools, before map[string]string) {
	t.Helper()
	bin := filepath.Join(bundle(t), "vaultgate")
	out, err := exec.Command(bin, "history", "--config", v.cfg, "--session", session, "--json").Output()
	if err != nil {
		t.Fatalf("history --session: %v", err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e struct{ Path, Tool, State string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("history line %q: %v", line, err)
		}
		if e.State != "applied" {
			t.Errorf("the history's entry of %s (%s) is %q, not applied", e.Path, e.Tool, e.State)
		}
		listed[e.Path] = e.Tool
	}
	for path, tool := range tools {
		if listed[path] != tool {
			t.Errorf("history lists %s as changed by %q, want %q:\n%s", path, listed[path], tool, out)
		}
	}
	if undo, err := exec.Command(bin, "undo", "--config", v.cfg, "--session", session).CombinedOutput(); err != nil {
		t.Fatalf("undo --session: %v\n%s", err, undo)
	}
	for path := range tools {
		got, err := os.ReadFile(filepath.Join(v.dir, path))
		want, existed := before[path]
		switch {
		case existed && string(got) != want:
			t.Errorf("after undo, %s holds %q (%v), want %q", path, got, err, want)
		case !existed && err == nil:
			t.Errorf("after undo, %s is still there", path)
		}
	}
}

// TestClaudeCodeBrokenConfig: with the config broken, every tool call
// Claude Code makes is blocked, the built-ins by the hook (it exits 2) and
// the vault's tools because the server does not start; nothing changes.
func TestClaudeCodeBrokenConfig(t *testing.T) {
	claude := needClaude(t)
	v := newClaudeVault(t)
	if err := os.WriteFile(v.cfg, []byte("vault = [not toml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := func(rel string) string { return filepath.Join(v.dir, rel) }
	steps := []modelStep{
		{"Read", map[string]any{"file_path": abs("Welcome.md")}},
		{"Write", map[string]any{"file_path": abs("notes/x.md"), "content": "x\n"}},
		{"Bash", map[string]any{"command": "echo x > notes/y.md", "description": "write"}},
		{"CronList", map[string]any{}},
		{"mcp__vault__write", map[string]any{"path": "notes/z.md", "content": "z\n"}},
	}
	model, url := newScriptedModel(t, steps)
	v.runClaude(t, claude, url)
	for i, s := range steps {
		r, ok := model.result(i)
		if !ok || !r.IsError {
			t.Errorf("step %d %s: %+v, want it blocked", i, s.tool, r)
		}
	}
	for _, p := range []string{"notes/x.md", "notes/y.md", "notes/z.md"} {
		if _, err := os.Stat(abs(p)); err == nil {
			t.Errorf("%s was written under a broken config", p)
		}
	}
}
