package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
)

// SandboxSettings reports whether Claude Code's own sandbox is on for a
// session whose cwd is given: the settings file that turns it on, or "".
// It reads what Claude Code reads, lowest precedence first (the user's
// settings, the project's, the project's local ones, the managed ones);
// the last that sets sandbox.enabled decides. A file that is missing or
// not JSON says nothing (Claude Code itself refuses a broken one).
//
// Inside that sandbox vaultgate's own wall can't be counted on, so under
// wall = "required" the hook denies Bash rather than have exec find out.
// getenv is the hook process's environment (which Claude Code sets for it:
// $CLAUDE_PROJECT_DIR, $CLAUDE_CONFIG_DIR, $HOME), not necessarily the
// judge's own.
func SandboxSettings(cwd string, getenv func(string) string) string {
	on := ""
	for _, f := range claudeSettings(cwd, getenv) {
		if enabled, set := sandboxEnabled(f); set {
			on = ""
			if enabled {
				on = f
			}
		}
	}
	return on
}

// claudeSettings lists Claude Code's settings files, lowest precedence
// first.
func claudeSettings(cwd string, getenv func(string) string) []string {
	var files []string
	user := getenv("CLAUDE_CONFIG_DIR")
	if user == "" {
		if home := getenv("HOME"); filepath.IsAbs(home) {
			user = filepath.Join(home, ".claude")
		}
	}
	if user != "" {
		files = append(files, filepath.Join(user, "settings.json"))
	}
	if project := projectDir(cwd, user, getenv); project != "" {
		files = append(files,
			filepath.Join(project, ".claude", "settings.json"),
			filepath.Join(project, ".claude", "settings.local.json"))
	}
	managed := "/etc/claude-code/managed-settings.json"
	if runtime.GOOS == "darwin" {
		managed = "/Library/Application Support/ClaudeCode/managed-settings.json"
	}
	return append(files, managed)
}

// projectDir is the project Claude Code runs in: $CLAUDE_PROJECT_DIR,
// which it sets for hooks, or else the nearest folder up from cwd that
// holds a .claude folder (not the user's own).
func projectDir(cwd, user string, getenv func(string) string) string {
	if d := getenv("CLAUDE_PROJECT_DIR"); d != "" {
		return d
	}
	if cwd == "" || !filepath.IsAbs(cwd) {
		return ""
	}
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		dot := filepath.Join(d, ".claude")
		if fi, err := os.Stat(dot); err == nil && fi.IsDir() && dot != filepath.Clean(user) {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// sandboxEnabled reads sandbox.enabled of one settings file.
func sandboxEnabled(file string) (enabled, set bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return false, false
	}
	var s struct {
		Sandbox *struct {
			Enabled *bool `json:"enabled"`
		} `json:"sandbox"`
	}
	if json.Unmarshal(data, &s) != nil || s.Sandbox == nil || s.Sandbox.Enabled == nil {
		return false, false
	}
	return *s.Sandbox.Enabled, true
}
