package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/admin"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
)

func TestAdminToken(t *testing.T) {
	t.Setenv(adminTokenEnv, "")
	if _, err := adminToken(""); err == nil {
		t.Error("no token: started")
	}
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte(" \n"), 0o600)
	if _, err := adminToken(empty); err == nil {
		t.Error("empty token file: started")
	}
	if _, err := adminToken(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing token file: started")
	}
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("from-the-file-0123456\n"), 0o600)
	t.Setenv(adminTokenEnv, "from-the-environment-0123")
	if tok, err := adminToken(good); err != nil || tok != "from-the-file-0123456" {
		t.Errorf("token file: %q %v", tok, err)
	}
	if tok, err := adminToken(""); err != nil || tok != "from-the-environment-0123" {
		t.Errorf("token env: %q %v", tok, err)
	}
}

func TestAdminCommand(t *testing.T) {
	_, cfg, logPath := sampleVault(t)
	const tok = "the-admin-token-0123456789"
	t.Setenv(adminTokenEnv, tok)
	// An agent's HTTP token can't open the panel: the agent must not read its log.
	t.Setenv("VAULTGATE_TOKEN", tok)
	if _, errOut, code := runCLI(t, "admin", "--config", cfg, "--listen", "127.0.0.1:0"); code != exitUsage || !strings.Contains(errOut, "HTTP token too") {
		t.Errorf("shared token: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{
		{"admin"},
		{"admin", "--audit", logPath, "--config", cfg},
		{"admin", "--audit", logPath, "extra"},
		{"admin", "--audit", logPath, "--listen", "nonsense"},
	} {
		if _, _, code := runCLI(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if out, _, code := runCLI(t, "admin", "--help"); code != exitOK || !strings.Contains(out, adminTokenEnv) || !strings.Contains(out, "-token-file") {
		t.Errorf("admin --help: %d %s", code, out)
	}
}

// TestAdminWarnsOffLoopback starts the binary on every interface and
// wants the warning.
func TestAdminWarnsOffLoopback(t *testing.T) {
	bin := binary(t)
	_, _, logPath := sampleVault(t)
	cmd := exec.Command(bin, "admin", "--audit", logPath, "--listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), adminTokenEnv+"=the-admin-token-0123456789")
	stderrPipe, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, "WARNING") && strings.Contains(l, "not loopback") {
				return
			}
		case <-deadline:
			t.Fatal("no warning for a non-loopback address")
		}
	}
}

// TestAdminHistoryDir: with --config the panel reads the config's state
// folder's history and names the config in the undo line; with only
// --audit the state folder is the log's folder and no config is named.
func TestAdminHistoryDir(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	loaded, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir, cfgPath, err := (&logSource{config: cfg}).stateDir(loaded.AuditPath)
	absCfg, _ := filepath.Abs(cfg)
	if err != nil || history.Dir(dir) != history.Dir(loaded.StateDir) || cfgPath != absCfg {
		t.Errorf("--config: %q %q %v", dir, cfgPath, err)
	}
	elsewhere := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	dir, cfgPath, err = (&logSource{file: elsewhere}).stateDir(elsewhere)
	if err != nil || history.Dir(dir) != filepath.Join(filepath.Dir(elsewhere), "history") || cfgPath != "" {
		t.Errorf("--audit: %q %q %v", dir, cfgPath, err)
	}
	// The index the panel keeps is in the state folder, never in the vault.
	if ix := admin.IndexFile(loaded.StateDir, loaded.AuditPath); !strings.HasPrefix(ix, loaded.StateDir+string(filepath.Separator)) ||
		strings.HasPrefix(ix, loaded.Vault+string(filepath.Separator)) {
		t.Errorf("the index file %s is not in the state folder %s", ix, loaded.StateDir)
	}
	if out, _, _ := runCLI(t, "admin", "--help"); !strings.Contains(out, "audit log's folder") {
		t.Errorf("admin --help does not say where the history is read from:\n%s", out)
	}
}
