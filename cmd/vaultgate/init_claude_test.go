package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

func backups(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(dir, ".claude", "vaultgate-backup"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// init --claude merges into the person's own files: their keys stay (in
// their order), vaultgate's entries are replaced, a rerun changes nothing,
// each changed file is backed up first, and --uninstall takes out exactly
// vaultgate's entries.
func TestInitClaudeMerges(t *testing.T) {
	vault, _, _ := sampleVault(t)
	cfg := filepath.Join(t.TempDir(), "notes.toml")
	mcpPath, settingsPath := filepath.Join(vault, ".mcp.json"), filepath.Join(vault, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settingsPath), 0o755)
	mcpOld := `{"$comment": "mine", "mcpServers": {"other": {"command": "/bin/other", "args": []},
  "vault": {"command": "/old/vaultgate", "args": ["serve", "--config", "/old.toml"], "env": {"VAULTGATE_GITHUB_TOKEN": "from-the-person"}}}}`
	settingsOld := `{"model": "opus", "permissions": {"allow": ["Bash(ls:*)"], "deny": ["WebFetch"]},
  "hooks": {"PreToolUse": [
    {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]},
    {"matcher": "*", "hooks": [{"type": "command", "command": "/usr/local/bin/vaultgate-hook --config /old.toml || exit 2"}]}]},
  "env": {"FOO": "1"}}`
	os.WriteFile(mcpPath, []byte(mcpOld), 0o644)
	os.WriteFile(settingsPath, []byte(settingsOld), 0o644)

	out, errOut, code := runCLI(t, "init", "--config", cfg, "--claude", vault, vault)
	if code != 0 {
		t.Fatalf("init --claude: %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"wrote " + cfg, "set mcpServers.vault", "set hooks.PreToolUse", "added permissions.allow \"mcp__vault\"", "the old one is", "workspace-trust dialog"} {
		if !strings.Contains(out, want) {
			t.Errorf("init says nothing of %q:\n%s", want, out)
		}
	}
	exe, _ := os.Executable()
	exe, _ = filepath.EvalSymlinks(exe)
	mcp := readJSON(t, mcpPath)
	servers := mcp["mcpServers"].(map[string]any)
	v := servers["vault"].(map[string]any)
	if mcp["$comment"] != "mine" || servers["other"] == nil || v["command"] != exe ||
		strings.Join(strAll(v["args"]), " ") != "serve --config "+cfg || v["env"].(map[string]any)["VAULTGATE_GITHUB_TOKEN"] != "from-the-person" {
		t.Errorf(".mcp.json: %v", mcp)
	}
	b, _ := os.ReadFile(mcpPath)
	if !strings.HasPrefix(string(b), "{\n  \"$comment\"") {
		t.Errorf("the person's key order is lost:\n%s", b)
	}
	st := readJSON(t, settingsPath)
	perms := st["permissions"].(map[string]any)
	if st["model"] != "opus" || st["env"] == nil || strings.Join(strAll(perms["allow"]), ",") != "Bash(ls:*),mcp__vault" || strings.Join(strAll(perms["deny"]), ",") != "WebFetch" {
		t.Errorf("settings.json: %v", st)
	}
	pre := st["hooks"].(map[string]any)["PreToolUse"].([]any)
	var commands []string
	for _, g := range pre {
		for _, h := range g.(map[string]any)["hooks"].([]any) {
			commands = append(commands, h.(map[string]any)["command"].(string))
		}
	}
	if len(commands) != 2 || commands[0] != "echo mine" || !strings.Contains(commands[1], "--config "+cfg+" || exit 2") {
		t.Errorf("PreToolUse commands: %q", commands)
	}
	if got := backups(t, vault); len(got) != 2 {
		t.Errorf("backups: %v", got)
	}
	for _, name := range backups(t, vault) {
		b, _ := os.ReadFile(filepath.Join(vault, ".claude", "vaultgate-backup", name))
		if string(b) != mcpOld && string(b) != settingsOld {
			t.Errorf("backup %s is not the old file: %s", name, b)
		}
	}

	// a rerun changes nothing, writes no backup, and keeps the config
	os.WriteFile(cfg, append(mustRead(t, cfg), []byte("# the person's own line\n")...), 0o600)
	cfgBefore, mcpBefore, settingsBefore := mustRead(t, cfg), mustRead(t, mcpPath), mustRead(t, settingsPath)
	out, _, code = runCLI(t, "init", "--config", cfg, "--claude", vault, vault)
	if code != 0 || strings.Count(out, ": unchanged") != 2 || !strings.Contains(out, "kept "+cfg) {
		t.Errorf("rerun: %d\n%s", code, out)
	}
	if string(mustRead(t, cfg)) != string(cfgBefore) || string(mustRead(t, mcpPath)) != string(mcpBefore) || string(mustRead(t, settingsPath)) != string(settingsBefore) || len(backups(t, vault)) != 2 {
		t.Error("a rerun changed a file")
	}

	// uninstall takes out vaultgate's entries and nothing else
	out, _, code = runCLI(t, "init", "--uninstall", "--claude", vault, "--config", cfg)
	if code != 0 {
		t.Fatalf("uninstall: %d\n%s", code, out)
	}
	mcp = readJSON(t, mcpPath)
	servers = mcp["mcpServers"].(map[string]any)
	if servers["vault"] != nil || servers["other"] == nil || mcp["$comment"] != "mine" {
		t.Errorf("after uninstall .mcp.json: %v", mcp)
	}
	st = readJSON(t, settingsPath)
	perms = st["permissions"].(map[string]any)
	if strings.Contains(string(mustRead(t, settingsPath)), "vaultgate") || strings.Join(strAll(perms["allow"]), ",") != "Bash(ls:*)" || st["model"] != "opus" {
		t.Errorf("after uninstall settings.json:\n%s", mustRead(t, settingsPath))
	}
	if len(st["hooks"].(map[string]any)["PreToolUse"].([]any)) != 1 {
		t.Errorf("the person's hook is gone: %v", st["hooks"])
	}
}

// On a fresh folder: --dry-run writes nothing; the install creates both
// files; an uninstall of files that held only vaultgate's entries removes
// them.
func TestInitClaudeFresh(t *testing.T) {
	vault, _, _ := sampleVault(t)
	cfg := filepath.Join(t.TempDir(), "v.toml")
	dir := t.TempDir()
	out, _, code := runCLI(t, "init", "--config", cfg, "--claude", dir, "--dry-run", vault)
	if code != 0 || !strings.Contains(out, "would write "+filepath.Join(dir, ".mcp.json")) || !strings.Contains(out, `"onFailure": "block"`) {
		t.Errorf("dry run: %d\n%s", code, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("--dry-run wrote %v", ents)
	}
	if _, err := os.Stat(cfg); err == nil {
		t.Error("--dry-run wrote the config")
	}
	if _, _, code := runCLI(t, "init", "--config", cfg, "--claude", dir, vault); code != 0 {
		t.Fatal("install failed")
	}
	for _, p := range []string{".mcp.json", ".claude/settings.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s not written: %v", p, err)
		}
	}
	if _, _, code := runCLI(t, "init", "--uninstall", "--claude", dir); code != 0 {
		t.Fatal("uninstall failed")
	}
	for _, p := range []string{".mcp.json", ".claude/settings.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s, which held only vaultgate's entries, is still there", p)
		}
	}
	// a config of another vault is not taken for this one's
	other := t.TempDir()
	if _, errOut, code := runCLI(t, "init", "--config", cfg, "--claude", dir, other); code != 1 || !strings.Contains(errOut, "is the config of") {
		t.Errorf("a config of another vault: %d %s", code, errOut)
	}
	// a settings file that is not JSON is left alone, and said so
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte("{not json"), 0o644)
	if _, errOut, code := runCLI(t, "init", "--config", cfg, "--claude", dir, vault); code != 1 || !strings.Contains(errOut, "nothing was changed") {
		t.Errorf("broken settings.json: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, ".mcp.json")); err == nil {
		t.Error("a broken settings.json did not stop the .mcp.json write")
	}
}

func strAll(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
