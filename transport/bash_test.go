package transport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// bashEnv serves a real copy of the sample vault with wall = "off", so the
// analysis is the only boundary, as the bash milestone's checks run it.
func bashEnv(t *testing.T, extra string) (*env, string) {
	t.Helper()
	vault := filepath.Join(t.TempDir(), "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	cfg := loadConfig(t, `vault = "`+vault+`"
[zones]
write     = ["мета/бобер"]
create    = ["💬 чаты"]
edit      = ["."]
protected = [".obsidian", "мета"]
[bash]
wall = "off"
timeout = "20s"
max_timeout = "1m"
`+extra)
	return newEnvWith(t, cfg), vault
}

func TestBashTool(t *testing.T) {
	e, vault := bashEnv(t, "")
	out := e.mustOK("bash", map[string]any{"command": "cd notes && grep -rn todo: . | sort | head -20"})
	if !strings.Contains(out, "exit code: 0") || !strings.Contains(out, "./projects/2026/plan.md:3:- todo: ship vaultgate") {
		t.Errorf("grep: %s", out)
	}
	e.mustOK("bash", map[string]any{"command": "echo hello > notes/hello.md && cat notes/hello.md"})
	if b, _ := os.ReadFile(filepath.Join(vault, "notes/hello.md")); string(b) != "hello\n" {
		t.Errorf("redirect did not create: %q", b)
	}
	e.mustFail("bash", map[string]any{"command": "rm мета/x.md"}, "zone protected")
	e.mustFail("bash", map[string]any{"command": "rm notes/ideas.md"}, "bash may remove or rename files only in write zones")
	e.mustFail("bash", map[string]any{"command": "bash -c 'rm мета/план.md'"}, "zone protected")
	e.mustFail("bash", map[string]any{"command": "python3 -c 'import os; os.remove(\"мета/x.md\")'"}, `run "python3"`)
	e.mustFail("bash", map[string]any{"command": "$(echo rm) мета/x.md"}, "only known when it runs")
	e.mustFail("bash", map[string]any{"command": "sudo rm -rf /"}, "sudo")
	for _, p := range []string{"мета/x.md", "мета/план.md", "notes/ideas.md"} {
		if _, err := os.Stat(filepath.Join(vault, p)); err != nil {
			t.Errorf("%s is gone: %v", p, err)
		}
	}
	e.mustOK("bash", map[string]any{"command": "rm мета/бобер/x.md"})
	if _, err := os.Stat(filepath.Join(vault, "мета/бобер/x.md")); err == nil {
		t.Error("rm in a write zone did nothing")
	}
	// a command that fails is allowed and failed, with its exit code
	out, isErr := e.call("bash", map[string]any{"command": "grep -q nothing-like-this notes/ideas.md"})
	if !isErr || !strings.Contains(out, "exit code: 1") {
		t.Errorf("failing command: %q %v", out, isErr)
	}
	r := e.lastRecord()
	if r["decision"] != "allow" || r["outcome"] != "failed" || r["exit_code"] != float64(1) {
		t.Errorf("record of a failing command: %v", r)
	}
	e.mustFail("bash", map[string]any{"command": "true", "timeout": 3600}, "between 1 and 60 seconds")
}

func TestBashSecretsAndEnvironment(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://admin:hunter2@db/prod")
	t.Setenv("VAULTGATE_TOKEN", "server-token-s3cr3t")
	t.Setenv("VAULTGATE_GITHUB_TOKEN", "ghp_configuredsecret123")
	e, _ := bashEnv(t, `
[[bash.secrets]]
name = "GITHUB_TOKEN"
from_env = "VAULTGATE_GITHUB_TOKEN"
commands = ["echo"]
`)
	out := e.mustOK("bash", map[string]any{"command": "env; echo token=$GITHUB_TOKEN"})
	for _, leak := range []string{"hunter2", "server-token-s3cr3t", "ghp_configuredsecret123", "DATABASE_URL", "VAULTGATE_"} {
		if strings.Contains(out, leak) {
			t.Errorf("output shows %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "token=") {
		t.Errorf("echo did not run: %s", out)
	}
	// without the wall an unknown path could be the server's own environ
	for _, cmd := range []string{
		"for i in $(seq 1 5000); do cat /proc/$i/environ; done 2>/dev/null",
		"cat $(echo /proc/self/environ)",
		"cat /proc/$PPID/environ",
		"cat /proc/*/environ",
	} {
		out, isErr := e.call("bash", map[string]any{"command": cmd})
		if !isErr || strings.Contains(out, "hunter2") {
			t.Errorf("%s: error=%v\n%s", cmd, isErr, out)
		}
	}
	// a command that calls no listed program gets no secret at all
	out = e.mustOK("bash", map[string]any{"command": "printf '%s\\n' \"[$GITHUB_TOKEN]\""})
	if !strings.Contains(out, "[]") {
		t.Errorf("printf saw the secret: %s", out)
	}
}

func TestBashNeedsWallWhenRequired(t *testing.T) {
	e := newEnv(t) // the sample config: wall = "required"
	e.mustFail("bash", map[string]any{"command": "ls"}, `wall = "required"`)
	if r := e.lastRecord(); r["decision"] != "deny" || r["rule"] != "bash" {
		t.Errorf("record: %v", r)
	}
}
