package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/agentrun"
	"github.com/vaultgate/vaultgate/config"
)

// TestInitRunSection: the starter config's [run] works as written — the
// agent's own user as root (none otherwise, where one would stop run), a
// home apart from the vault and the state folder, no read_only, and the
// model's key and base URL as optional [[run.secrets]] — and init says how
// to start Claude Code with it, with a key or a subscription's login, and
// as root how to create a missing user.
func TestInitRunSection(t *testing.T) {
	vault, _, _ := sampleVault(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	out, errOut, code := runCLI(t, "init", vault)
	if code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	cfgPath := filepath.Join(home, ".config", "vaultgate", "vault.toml")
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Run
	wantUser := ""
	if os.Geteuid() == 0 {
		wantUser = agentrun.DefaultUser
	}
	if r.User != wantUser || r.Home != filepath.Join(home, ".local/share/vaultgate/agent-home") || len(r.ReadOnly) != 0 ||
		r.Network != config.NetworkHost || !slices.Equal(r.Env, config.DefaultRunEnv) {
		t.Errorf("[run] = %+v (user want %q)", r, wantUser)
	}
	want := []config.RunSecret{
		{Name: "ANTHROPIC_API_KEY", FromEnv: agentKeyEnv, Optional: true},
		{Name: "ANTHROPIC_BASE_URL", FromEnv: agentURLEnv, Optional: true},
	}
	if !slices.Equal(r.Secrets, want) {
		t.Errorf("[[run.secrets]] = %+v", r.Secrets)
	}
	if err := cfg.CheckRun(); err != nil {
		t.Errorf("the agent's home is not apart: %v", err)
	}
	// Neither variable set (a subscription): the agent starts without
	// them; both set: they reach it under the names Claude Code reads.
	set := map[string]string{"HOME": r.Home}
	if env, err := agentrun.Env(r, []string{"PATH=/usr/bin", "ANTHROPIC_API_KEY=the-persons-own"}, set); err != nil || slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "ANTHROPIC_") }) {
		t.Errorf("no key given: %v %v", env, err)
	}
	env, err := agentrun.Env(r, []string{"PATH=/usr/bin", agentKeyEnv + "=sk-ant-x", agentURLEnv + "=http://127.0.0.1:9"}, set)
	if err != nil || !slices.Contains(env, "ANTHROPIC_API_KEY=sk-ant-x") || !slices.Contains(env, "ANTHROPIC_BASE_URL=http://127.0.0.1:9") {
		t.Errorf("key and URL given: %v %v", env, err)
	}
	for _, w := range []string{
		agentKeyEnv + "=sk-ant-… vaultgate run --config " + cfgPath + " --claude",
		agentKeyEnv + " as ANTHROPIC_API_KEY (when set)",
		agentURLEnv + " as ANTHROPIC_BASE_URL (when set)",
		"log in once with /login",
		r.Home,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("init does not say %q:\n%s", w, out)
		}
	}
	if (os.Geteuid() == 0) != strings.Contains(out, "As root") {
		t.Errorf("init's word on root (euid %d):\n%s", os.Geteuid(), out)
	}
	if os.Geteuid() == 0 {
		// A user that does not exist: the exact command that makes it.
		b, _ := os.ReadFile(cfgPath)
		other := filepath.Join(t.TempDir(), "other.toml")
		os.WriteFile(other, []byte(strings.Replace(string(b), `user    = "`+agentrun.DefaultUser+`"`, `user    = "vaultgate-no-such-user"`, 1)), 0o600)
		if h := runHints(other); !strings.Contains(h, "does not exist yet; create it:\n  useradd --system --user-group --no-create-home --shell /usr/sbin/nologin vaultgate-no-such-user\n") {
			t.Errorf("hints for a missing user:\n%s", h)
		}
	}
	// The dry run prints the section too.
	out, _, _ = runCLI(t, "init", "--force", "--config", filepath.Join(t.TempDir(), "x.toml"), "--claude", t.TempDir(), "--dry-run", vault)
	if !strings.Contains(out, "[[run.secrets]]") {
		t.Errorf("init --dry-run does not show [run]:\n%s", out)
	}
}

// TestInitDoesNotApproveAnEditedConfig: a config inside its vault, changed
// since init listed it (an agent may have written it), is not kept and
// listed anew by a second init: the person must name it with --config.
func TestInitDoesNotApproveAnEditedConfig(t *testing.T) {
	vault, _, _ := sampleVault(t)
	inVault := filepath.Join(vault, "vaultgate.toml")
	if _, errOut, code := runCLI(t, "init", "--config", inVault, vault); code != exitOK {
		t.Fatalf("init --config: exit %d: %s", code, errOut)
	}
	reg, err := config.RegistryPath()
	if err != nil {
		t.Fatal(err)
	}
	listed, _ := os.ReadFile(reg)
	f, _ := os.OpenFile(inVault, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n# an agent's edit\n")
	f.Close()
	_, errOut, code := runCLI(t, "init", vault)
	if code == exitOK || !strings.Contains(errOut, "changed since init listed it") {
		t.Errorf("a second init over an edited config: exit %d: %s", code, errOut)
	}
	if now, _ := os.ReadFile(reg); string(now) != string(listed) {
		t.Errorf("the list of vaults changed:\n%s\nwas\n%s", now, listed)
	}
}
