package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctorSetup is a vault set up as a person would: init --claude by the
// installed binaries, and a HOME in which Claude Code trusts the vault.
func doctorSetup(t *testing.T) (bin, vault, cfg, home string) {
	t.Helper()
	bin = filepath.Join(bundle(t), "vaultgate")
	vault, cfg, _ = sampleVault(t)
	os.WriteFile(cfg, append(mustRead(t, cfg), []byte("[bash]\nwall = \"off\"\n")...), 0o644)
	home = t.TempDir()
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{vault: map[string]any{"hasTrustDialogAccepted": true}}})
	os.WriteFile(filepath.Join(home, ".claude.json"), trust, 0o600)
	if out, err := exec.Command(bin, "init", "--config", cfg, "--claude", vault, vault).CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	return bin, vault, cfg, home
}

func runDoctor(t *testing.T, bin, home string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"doctor"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestDoctorGoodSetup(t *testing.T) {
	bin, vault, cfg, home := doctorSetup(t)
	for _, args := range [][]string{{"--config", cfg, "--claude", vault}, {"--claude", vault}} {
		out, code := runDoctor(t, bin, home, args...)
		if code != 0 || strings.Contains(out, "PROBLEM") {
			t.Errorf("doctor %q on a good setup: exit %d\n%s", args, code, out)
		}
		for _, want := range []string{"ok       config " + cfg, "ok       every zone path exists", "is this build of vaultgate",
			`the MCP server is "vault"`, "Claude Code trusts " + vault, `wall = "off"`, "all well"} {
			if !strings.Contains(out, want) {
				t.Errorf("doctor %q says nothing of %q:\n%s", args, want, out)
			}
		}
	}
}

func TestDoctorBrokenSetups(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(t *testing.T, vault, cfg, home string)
		code   int
		want   string
	}{
		{"a zone path with a typo", func(t *testing.T, vault, cfg, home string) {
			b := strings.Replace(string(mustRead(t, cfg)), `protected = [".obsidian", "мета"]`, `protected = [".obsidian", "мета", "мета2"]`, 1)
			os.WriteFile(cfg, []byte(b), 0o644)
		}, 1, `PROBLEM  zones.protected: "мета2" does not exist, so it keeps nothing protected; did you mean "мета"?`},
		{"a zone path expected later", func(t *testing.T, vault, cfg, home string) {
			b := strings.Replace(string(mustRead(t, cfg)), `protected = [".obsidian", "мета"]`, `protected = [".obsidian", "мета", "мета2?"]`, 1)
			os.WriteFile(cfg, []byte(b), 0o644)
		}, 0, `ok       zones.protected: "мета2" is not there yet, expected later`},
		{"the hook names another config", func(t *testing.T, vault, cfg, home string) {
			p := filepath.Join(vault, ".claude", "settings.json")
			os.WriteFile(p, []byte(strings.ReplaceAll(string(mustRead(t, p)), cfg, cfg+".old")), 0o644)
		}, 1, "hook does not name this config"},
		{"the hook may fail open", func(t *testing.T, vault, cfg, home string) {
			p := filepath.Join(vault, ".claude", "settings.json")
			b := strings.ReplaceAll(string(mustRead(t, p)), `"onFailure": "block"`, `"onFailure": "continue"`)
			os.WriteFile(p, []byte(strings.ReplaceAll(b, " || exit 2", "")), 0o644)
		}, 1, "a hook that fails would let the call through"},
		{"the server is named otherwise", func(t *testing.T, vault, cfg, home string) {
			p := filepath.Join(vault, ".mcp.json")
			os.WriteFile(p, []byte(strings.Replace(string(mustRead(t, p)), `"vault":`, `"notes":`, 1)), 0o644)
		}, 1, `names the server "notes", but [hook] server_name is "vault"`},
		{"the binary is gone", func(t *testing.T, vault, cfg, home string) {
			p := filepath.Join(vault, ".mcp.json")
			var m map[string]map[string]map[string]any
			json.Unmarshal(mustRead(t, p), &m)
			old := m["mcpServers"]["vault"]["command"].(string)
			os.WriteFile(p, []byte(strings.ReplaceAll(string(mustRead(t, p)), old, "/nonexistent/vaultgate")), 0o644)
		}, 1, "/nonexistent/vaultgate is not an executable file"},
		{"a broken config", func(t *testing.T, vault, cfg, home string) {
			os.WriteFile(cfg, []byte("vault = [\n"), 0o644)
		}, 1, "PROBLEM  config "},
		{"an untrusted workspace", func(t *testing.T, vault, cfg, home string) {
			os.Remove(filepath.Join(home, ".claude.json"))
		}, 0, "until then it ignores the project's hooks and permissions"},
		{"an unwritable state folder", func(t *testing.T, vault, cfg, home string) {
			if os.Geteuid() == 0 {
				// root writes anywhere: a file where the folder should be
				os.WriteFile(filepath.Join(filepath.Dir(cfg), "state"), nil, 0o644)
				return
			}
			os.MkdirAll(filepath.Join(filepath.Dir(cfg), "state"), 0o500)
		}, 1, "the state folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin, vault, cfg, home := doctorSetup(t)
			c.break_(t, vault, cfg, home)
			out, code := runDoctor(t, bin, home, "--config", cfg, "--claude", vault)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", code, c.code, c.want, out)
			}
			if c.code == 1 && !strings.Contains(out, "fix: ") {
				t.Errorf("a problem without a fix:\n%s", out)
			}
		})
	}
}

// TestDoctorSaysHowTheWallFindsNames: with the wall up, doctor says
// whether a walled call is answered by the index of names or walks the
// vault, and why — here a vault on a file system that is not known to be
// local (mqueue, which any root can mount), where the index is never
// trusted.
func TestDoctorSaysHowTheWallFindsNames(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the wall and the mount need root (CI runs it)")
	}
	bin, _, cfg, home := doctorSetup(t)
	os.WriteFile(cfg, []byte(strings.Replace(string(mustRead(t, cfg)), `wall = "off"`, `wall = "required"`, 1)), 0o644)
	out, _ := runDoctor(t, bin, home, "--config", cfg)
	if !strings.Contains(out, "ok       the wall's index of names watches the vault's") {
		t.Errorf("doctor says nothing of the index on a local vault:\n%s", out)
	}

	queues := filepath.Join(t.TempDir(), "queues")
	os.Mkdir(queues, 0o755)
	if err := exec.Command("mount", "-t", "mqueue", "none", queues).Run(); err != nil {
		t.Fatalf("mount mqueue: %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", queues).Run() })
	other := filepath.Join(filepath.Dir(cfg), "queues.toml")
	os.WriteFile(other, []byte(`vault = "`+queues+`"
[audit]
path = "state/audit.jsonl"
[zones]
edit = ["."]
[bash]
wall = "required"
`), 0o644)
	out, _ = runDoctor(t, bin, home, "--config", other)
	if !strings.Contains(out, "warning  each walled bash call walks the whole vault: "+queues+" is on file system type 0x19800202") {
		t.Errorf("doctor does not say the walled calls walk a vault it can't watch:\n%s", out)
	}
}
