package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/server"
)

// TestStartUpRemovesOnlyItsOwnLeftovers: `vaultgate serve` starting
// removes a temporary file its journal notes (as a write stopped before
// its rename leaves one), with an audit line (tool "recover", via
// "start-up") and a word on stderr; a note and a folder holding a git
// repository that merely carry vaultgate's temporary prefix are not its,
// and survive the start with their content.
func TestStartUpRemovesOnlyItsOwnLeftovers(t *testing.T) {
	bin := binary(t)
	vault, cfgPath, auditPath := sampleVault(t)
	others := map[string]string{
		".vaultgate-tmp-note.md":                "an agent's note\n",
		"заметки/.vaultgate-tmp-repo/.git/HEAD": "ref: refs/heads/main\n",
		"заметки/.vaultgate-tmp-repo/r.md":      "r\n",
	}
	for p, body := range others {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, p)), 0o755)
		if err := os.WriteFile(filepath.Join(vault, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// what a write stopped before its rename leaves: the name noted in the
	// journal, then the file made and noted
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	const left = ".vaultgate-tmp-0123456789abcdef"
	note, err := history.NewTemps(server.TempsDir(cfg)).Note(left, history.KindFile, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, left), []byte("half\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Lstat(filepath.Join(vault, left))
	note.Made(fi)

	serve := func() string {
		cmd := exec.Command(bin, "serve", "--config", cfgPath)
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("serve: %v %s", err, out)
		}
		return string(out)
	}
	out := serve()
	if _, err := os.Lstat(filepath.Join(vault, left)); err == nil {
		t.Errorf("%s is still there", left)
	}
	for p, body := range others {
		if b, err := os.ReadFile(filepath.Join(vault, p)); err != nil || string(b) != body {
			t.Errorf("%s: %q %v, want it kept", p, b, err)
		}
	}
	if !strings.Contains(out, "removed 1 temporary name(s)") || !strings.Contains(out, left) {
		t.Errorf("serve said %q", out)
	}
	serve() // nothing left to do: no second line
	body, _ := os.ReadFile(auditPath)
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r struct {
			Tool, Via, Agent, Outcome string
			Effects                   []struct{ Op, Path string }
		}
		json.Unmarshal([]byte(line), &r)
		if r.Tool != "recover" {
			continue
		}
		lines = append(lines, line)
		if r.Via != "start-up" || r.Agent != "vaultgate" || r.Outcome != "ok" || len(r.Effects) != 1 ||
			r.Effects[0].Op != "delete" || r.Effects[0].Path != left {
			t.Errorf("the recovery's line: %s", line)
		}
	}
	if len(lines) != 1 {
		t.Errorf("%d recovery lines, want 1: %v", len(lines), lines)
	}
}
