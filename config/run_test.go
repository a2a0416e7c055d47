package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunDefaults: with no [run] table the agent gets the default
// whitelist, the host's network, and a home of its own apart from the
// vault and the state folder.
func TestRunDefaults(t *testing.T) {
	c, err := Load(writeConfig(t, "vault = \"vault\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Run
	if !slices.Equal(r.Env, DefaultRunEnv) || r.Network != NetworkHost || r.User != "" || len(r.Secrets) != 0 {
		t.Errorf("run = %+v", r)
	}
	home, _ := os.UserHomeDir()
	if r.Home != filepath.Join(home, ".local/share/vaultgate/agent-home") {
		t.Errorf("home = %q", r.Home)
	}
}

func TestRunSettings(t *testing.T) {
	c, err := Load(writeConfig(t, `vault = "vault"
[run]
user = "vaultgate-agent"
home = "agent"
env = ["PATH", "LC_*", "EDITOR"]
network = "none"
read_only = ["/opt/agent", "bin"]
[[run.secrets]]
name = "ANTHROPIC_API_KEY"
from_env = "MY_ANTHROPIC_KEY"
`))
	if err != nil {
		t.Fatal(err)
	}
	r := c.Run
	if r.User != "vaultgate-agent" || r.Network != NetworkNone || !slices.Equal(r.Env, []string{"PATH", "LC_*", "EDITOR"}) {
		t.Errorf("run = %+v", r)
	}
	if !slices.Equal(r.ReadOnly, []string{"/opt/agent", filepath.Join(filepath.Dir(c.File), "bin")}) {
		t.Errorf("read_only = %v", r.ReadOnly)
	}
	if r.Home != filepath.Join(filepath.Dir(c.File), "agent") {
		t.Errorf("home %q is not relative to the config's folder", r.Home)
	}
	if len(r.Secrets) != 1 || r.Secrets[0] != (RunSecret{Name: "ANTHROPIC_API_KEY", FromEnv: "MY_ANTHROPIC_KEY"}) {
		t.Errorf("secrets = %+v", r.Secrets)
	}
}

// TestRunErrors: every bad [run] value is an error naming its key and
// saying what to write instead.
func TestRunErrors(t *testing.T) {
	cases := []struct{ body, key, text string }{
		{"[run]\nuser = \"root\"\n", "run.user", "unprivileged user"},
		{"[run]\nuser = \"a/b\"\n", "run.user", "unprivileged user"},
		{"[run]\nhome = \"vault/agent\"\n", "run.home", "overlaps the vault"},
		{"[run]\nhome = \".\"\n", "run.home", "overlaps the vault"},
		{"[run]\nhome = \"/\"\n", "run.home", "not /"},
		{"[audit]\npath = \"st/audit.jsonl\"\n[run]\nhome = \"st/home\"\n", "run.home", "overlaps the state folder"},
		{"[run]\nenv = [\"DATABASE_URL\"]\n", "run.env", "[[run.secrets]]"},
		{"[run]\nenv = [\"GH_PAT\"]\n", "run.env", "looks like a credential"},
		{"[run]\nenv = [\"OPENAI_API_KEY\"]\n", "run.env", "looks like a credential"},
		{"[run]\nenv = [\"LD_PRELOAD\"]\n", "run.env", "changes how programs start"},
		{"[run]\nenv = [\"HOME\"]\n", "run.env", "set by vaultgate run"},
		{"[run]\nenv = [\"A-B\"]\n", "run.env", "not a variable name"},
		{"[run]\nnetwork = \"lan\"\n", "run.network", `must be "host" or "none"`},
		{"[run]\nnetwork = true\n", "", "network"},
		{"[[run.secrets]]\nname = \"LD_PRELOAD\"\nfrom_env = \"X\"\n", "run.secrets[0].name", "changes how programs start"},
		{"[[run.secrets]]\nname = \"VAULTGATE_MCP_CONFIG\"\nfrom_env = \"X\"\n", "run.secrets[0].name", "set by vaultgate run"},
		{"[[run.secrets]]\nname = \"K\"\nfrom_env = \"\"\n", "run.secrets[0].from_env", "not a variable name"},
		{"[[run.secrets]]\nname = \"K\"\nfrom_env = \"A\"\n[[run.secrets]]\nname = \"K\"\nfrom_env = \"B\"\n", "run.secrets[1].name", "given twice"},
		{"[run]\nsecret = 1\n", "run.secret", "unknown key"},
		{"[run]\nread_only = [\"/\"]\n", "run.read_only", "everything"},
		{"[run]\nread_only = [\"vault/notes\"]\n", "run.read_only", "overlaps the vault"},
		{"[run]\nread_only = [\".\"]\n", "run.read_only", "overlaps the vault"},
	}
	for _, c := range cases {
		_, err := Load(writeConfig(t, "vault = \"vault\"\n"+c.body))
		var ce *Error
		if err == nil || !strings.Contains(err.Error(), c.text) || (c.key != "" && (!errors.As(err, &ce) || ce.Key != c.key)) {
			t.Errorf("%q: %v, want %s: …%s", c.body, err, c.key, c.text)
		}
	}
}

// TestRunHomeInVault: a vault that holds the default agent home still
// serves (the file has no [run]); `vaultgate run` refuses it.
func TestRunHomeInVault(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	p := filepath.Join(home, "vault.toml")
	if err := os.WriteFile(p, []byte("vault = \"~\"\n[audit]\npath = \"/tmp/x-vg-audit/a.jsonl\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckRun(); err == nil || !strings.Contains(err.Error(), "run.home") || !strings.Contains(err.Error(), "overlaps the vault") {
		t.Errorf("CheckRun = %v", err)
	}
}
