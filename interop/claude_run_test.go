package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// runClaudeUser is the agent's user of TestClaudeCodeRun, created with
// useradd as cmd/vaultgate's run tests create theirs.
const runClaudeUser = "vaultgate-claude-run-test"

// needRootForRun stops the test unless it runs as root, which `vaultgate
// run` needs to switch to the agent's user: in CI (CI=true, as root) a
// non-root run fails it, elsewhere it skips with the reason.
func needRootForRun(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	stop := t.Skipf
	if os.Getenv("CI") == "true" {
		stop = t.Fatalf
	}
	stop("vaultgate run --claude as root creates the agent's user and switches to it: run this test as root (CI does)")
}

func runAgentUser(t *testing.T) (uid, gid int) {
	t.Helper()
	if _, err := user.Lookup(runClaudeUser); err != nil {
		if out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", runClaudeUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v %s", runClaudeUser, err, out)
		}
	}
	u, err := user.Lookup(runClaudeUser)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// TestClaudeCodeRun runs the real Claude Code with `vaultgate run
// --claude`, as its own user, in the view where the vault is not on its
// disk, driven by the scripted model on 127.0.0.1 ([run] network = "host"):
// it reads a note through the vault's tool, and its built-in Write to a
// protected note, which it was not offered, is refused and is an audit
// line of the run. Checked in the tool_results Claude Code sent back, on
// disk, and in the audit log (via "run"). The program is named by its
// path, outside every system folder, and no read_only names it: run shows
// its package folder.
func TestClaudeCodeRun(t *testing.T) {
	claude := needClaude(t)
	needRootForRun(t)
	uid, gid := runAgentUser(t)
	claude, err := filepath.EvalSymlinks(claude)
	if err != nil {
		t.Fatal(err)
	}
	// The bundle's folder is the test's (0700): the agent runs the
	// vaultgate binary in it (`vaultgate connect`, the hook).
	bin := bundle(t)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	dir, cfg, audit, home := filepath.Join(root, "vault"), filepath.Join(root, "vault.toml"),
		filepath.Join(root, "state", "audit.jsonl"), filepath.Join(root, "agent-home")
	vaulttest.CopyDir(t, "../testdata/vault", dir)
	body := fmt.Sprintf(`vault = "vault"
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
[run]
user      = %q
home      = %q
network   = "host"
env       = ["PATH", "LANG", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER", "ENABLE_TOOL_SEARCH", "IS_SANDBOX"]
[[run.secrets]]
name     = "ANTHROPIC_API_KEY"
from_env = "VG_TEST_AGENT_ANTHROPIC_KEY"
`, runClaudeUser, home)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The agent's home, its user's, where the person has accepted the
	// workspace-trust dialog for the folder Claude Code starts in (the home).
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{home: map[string]any{"hasTrustDialogAccepted": true}}})
	trustFile := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(trustFile, trust, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{home, trustFile} {
		if err := os.Lchown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}

	protected := filepath.Join(dir, "мета", "план.md")
	steps := []modelStep{
		{"mcp__vault__read", map[string]any{"path": "Welcome.md"}},
		{"Write", map[string]any{"file_path": protected, "content": "must not land\n"}},
	}
	model, url := newScriptedModel(t, steps)
	planBefore, err := os.ReadFile(protected)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "vaultgate"), "run", "--config", cfg, "--claude", "--",
		claude, "-p", "work in the vault", "--output-format", "json")
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + url, "VG_TEST_AGENT_ANTHROPIC_KEY=sk-ant-test-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"ENABLE_TOOL_SEARCH=false", "IS_SANDBOX=1",
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vaultgate run --claude: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}

	if r, ok := model.result(0); !ok || r.IsError || !strings.Contains(r.Text, "This is the sample vault for vaultgate.") {
		t.Errorf("mcp__vault__read: %+v (came back: %v), want Welcome.md's text", r, ok)
	}
	r, ok := model.result(1)
	switch {
	case !ok:
		t.Error("Write: no tool_result came back")
	case !r.IsError:
		t.Errorf("Write of a protected note was not refused: %s", r.Text)
	case !strings.Contains(r.Text, "No such tool available: Write"):
		t.Errorf("Write's refusal does not say it is not offered: %s", r.Text)
	}
	if got, err := os.ReadFile(protected); err != nil || string(got) != string(planBefore) {
		t.Errorf("мета/план.md holds %q (%v), want it unchanged %q", got, err, planBefore)
	}

	lines := readAudit(t, audit)
	if !slices.ContainsFunc(lines, func(l auditLine) bool {
		return l.Via == "run" && l.Tool == "read" && l.Decision == "allow" && l.Args["path"] == "Welcome.md"
	}) {
		t.Errorf("no audit line via run for the read of Welcome.md: %+v", lines)
	}
	if !slices.ContainsFunc(lines, func(l auditLine) bool {
		return l.Via == "run" && l.Tool == "Write" && l.Decision != "allow" && l.Args["file_path"] == protected
	}) {
		t.Errorf("no audit line via run for the refused Write: %+v", lines)
	}
	for _, l := range lines {
		if l.Via != "run" {
			t.Errorf("an audit line via %q, want every one via run: %+v", l.Via, l)
		}
	}
	if t.Failed() {
		t.Logf("claude's output: %s\nrun's stderr: %s", out, stderr.String())
	}
}
