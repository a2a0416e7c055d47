package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

func init() {
	var out string
	var force bool
	register(&command{
		name:    "init",
		summary: "write a starter config for a vault and print the Claude Code snippets",
		usage:   "[--config FILE] [--force] DIR",
		help: `Writes a starter policy for the vault DIR: the whole vault edit (create,
change, move, never delete), .obsidian and .trash protected. By default the
file goes in your config folder (~/.config/vaultgate/NAME.toml), outside the
vault, so the agent can't read its own boundary from there; --config puts it
elsewhere. An existing file is kept unless --force. It then prints the
.mcp.json entry that makes Claude Code launch vaultgate.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&out, "config", "", "where to write the config (default: the user's config folder)")
			fs.BoolVar(&force, "force", false, "overwrite an existing config")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) != 1 {
				return fail(exitUsage, "init takes the vault folder (see --help)")
			}
			return runInit(args[0], out, force)
		},
	})
}

func runInit(dir, out string, force bool) int {
	vault, err := filepath.Abs(dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if st, err := os.Stat(vault); err != nil || !st.IsDir() {
		return fail(exitUsage, "%s is not a folder", vault)
	}
	if real, err := filepath.EvalSymlinks(vault); err == nil {
		vault = real
	}
	if out == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return fail(1, "no config folder (%v); give --config FILE", err)
		}
		out = filepath.Join(base, "vaultgate", filepath.Base(vault)+".toml")
	}
	if out, err = filepath.Abs(out); err != nil {
		return fail(exitUsage, "%v", err)
	}
	if _, err := os.Stat(out); err == nil && !force {
		return fail(1, "%s exists; keep it, or pass --force to replace it", out)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(1, "%v", err)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		return fail(1, "%v", err)
	}
	if err := os.WriteFile(out, []byte(starterConfig(vault)), 0o600); err != nil {
		return fail(1, "%v", err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", out)
	if inside(vault, out) {
		fmt.Fprintf(stdout, "note: the config lies inside the vault; vaultgate keeps it protected (read only) for the agent.\n")
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "vaultgate"
	}
	mcpJSON, settingsJSON := claudeSnippets(exe, out)
	fmt.Fprintf(stdout, "\nAdd this to .mcp.json (secrets go in \"env\", never in \"args\"):\n%s\n", mcpJSON)
	fmt.Fprintf(stdout, "\nAnd this to .claude/settings.json (Claude Code's own writing tools off, no prompts,\nand the hook on every tool; \"|| exit 2\" makes a hook that can't start block the call):\n%s\n", settingsJSON)
	fmt.Fprintf(stdout, "\nSee the zones:  vaultgate zones --config %s\n", shellQuote(out))
	fmt.Fprintf(stdout, "Dry-run a call: vaultgate check --config %s delete '{\"path\":\"x.md\"}'\n", shellQuote(out))
	return exitOK
}

func starterConfig(vault string) string {
	q := func(s string) string {
		var b strings.Builder
		toml.NewEncoder(&b).Encode(map[string]string{"v": s})
		return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
	}
	protected := []string{}
	for _, name := range []string{".obsidian", ".trash"} {
		protected = append(protected, q(name))
	}
	return fmt.Sprintf(`# vaultgate policy for %[1]s
# Every key is described in the README ("Config").
vault = %[2]s
lang  = "en"               # "en" or "ru": the language of every reason the agent reads

[audit]
path = "~/.local/state/vaultgate/audit.jsonl"
max_size = "100MiB"

[zones]
# write: anything, deleting included   edit: create, change, move, never delete
# create: new files only               protected: read only      hidden: not even readable
write     = []
create    = []
edit      = ["."]
protected = [%[3]s]
hidden    = []

[rules]
read_before_write = true

[bash]
enabled = true
wall    = "required"
`, vault, q(vault), strings.Join(protected, ", "))
}

func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func shellQuote(s string) string {
	if strings.ContainsAny(s, " \t'\"$`\\!*?[]{}();&|<>~#") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

// hookCommand is how Claude Code starts the hook: vaultgate-hook, which
// starts faster, where it lies beside exe; exe's hook command otherwise.
func hookCommand(exe string) string {
	hook := filepath.Join(filepath.Dir(exe), "vaultgate-hook")
	if fi, err := os.Stat(hook); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return shellQuote(hook)
	}
	return shellQuote(exe) + " hook"
}

// claudeSnippets returns the .mcp.json and settings.json that make Claude
// Code use vaultgate: the vault's tools over stdio, the built-in writing
// tools denied, no permission prompts, and the hook judging every other tool.
func claudeSnippets(exe, cfg string) (mcpJSON, settingsJSON []byte) {
	mcpJSON, _ = json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"vault": map[string]any{
		"command": exe,
		"args":    []string{"serve", "--config", cfg},
		"env":     map[string]string{},
	}}}, "", "  ")
	// Claude Code lets a call through when a hook command fails to start
	// (exit 127) or dies with a code other than 2, and has no setting to
	// fail closed; "|| exit 2" is that setting, in the shell it runs hooks in.
	hook := hookCommand(exe) + " --config " + shellQuote(cfg) + " || exit 2"
	entry := func(matcher string) []any {
		return []any{map[string]any{"matcher": matcher, "hooks": []any{map[string]any{
			"type": "command", "command": hook, "timeout": 30,
		}}}}
	}
	settingsJSON, _ = json.MarshalIndent(map[string]any{
		"permissions": map[string]any{
			"deny":        []string{"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"},
			"defaultMode": "bypassPermissions",
		},
		"hooks": map[string]any{
			"PreToolUse":  entry("*"),
			"PostToolUse": entry("Read|Write|Edit|MultiEdit|NotebookEdit"),
		},
	}, "", "  ")
	return mcpJSON, settingsJSON
}
