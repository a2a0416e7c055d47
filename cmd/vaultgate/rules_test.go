package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/audit"
)

// ruleVault is the sample vault with drafts/ (write) and docs/config.md's
// example rules in its config, plus extra.
func ruleVault(t *testing.T, extra string) (vault, cfg, auditPath string) {
	t.Helper()
	vault, cfg, auditPath = sampleVault(t)
	os.MkdirAll(filepath.Join(vault, "drafts"), 0o755)
	for _, n := range []string{"a.md", "b.md", "c.md", "x.md"} {
		os.WriteFile(filepath.Join(vault, "drafts", n), []byte("draft\n"), 0o644)
	}
	body := `vault = "vault"
lang = "en"
[audit]
path = "state/audit.jsonl"
[bash]
wall = "off"
[zones]
write     = ["мета/бобер", "drafts"]
edit      = ["."]
protected = [".obsidian", "мета"]

[[rules.deny]]
name   = "drafts_are_mine"
when   = 'effect.op in ["modify", "move-out"] && effect.path.startsWith("drafts/")'
reason = "drafts/ is the person's own: put your version in drafts-agent/ instead"
reason_ru = "drafts/ — личная папка: свою версию положите в drafts-agent/"

[[rules.deny.examples]]
deny  = { tool = "write", args = { path = "drafts/x.md", content = "mine" } }
[[rules.deny.examples]]
allow = { tool = "read", args = { path = "drafts/x.md" } }

[[rules.deny]]
name   = "two_deletes"
when   = 'effect.op == "delete" && session.count["delete"] >= 2'
reason = "no more than 2 deletes per session"
reason_ru = "не больше двух удалений за сессию"
[[rules.deny.examples]]
deny = { tool = "delete", args = { path = "drafts/a.md" }, session = { count = { delete = 2 } } }
[[rules.deny.examples]]
allow = { tool = "delete", args = { path = "drafts/a.md" } }
` + extra
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return vault, cfg, auditPath
}

// TestRulesThroughStdio: the built binary over MCP holds a session to
// the config's rules, counting its deletes across calls, and its audit
// names the rule.
func TestRulesThroughStdio(t *testing.T) {
	bin := binary(t)
	vault, cfg, auditPath := ruleVault(t, "")
	c := serveClient(t, bin, cfg)
	for i, n := range []string{"a.md", "b.md", "c.md"} {
		text, isErr := callTool(t, c, "delete", map[string]any{"path": "drafts/" + n})
		if i < 2 && isErr {
			t.Fatalf("delete %s: %s", n, text)
		}
		if i == 2 && (!isErr || text != "no more than 2 deletes per session") {
			t.Fatalf("the third delete: %q", text)
		}
	}
	if _, err := os.Stat(filepath.Join(vault, "drafts/c.md")); err != nil {
		t.Errorf("drafts/c.md: %v", err)
	}
	if text, isErr := callTool(t, c, "read", map[string]any{"path": "drafts/x.md"}); isErr {
		t.Fatalf("read: %s", text)
	}
	if text, isErr := callTool(t, c, "write", map[string]any{"path": "drafts/x.md", "content": "agent's"}); !isErr || !strings.HasPrefix(text, "drafts/ is the person's own") {
		t.Errorf("write over a draft: %q", text)
	}
	var denied []string
	audit.Read(auditPath, func(r audit.Record) error {
		if r.Decision == "deny" {
			denied = append(denied, r.Tool+":"+r.Rule)
		}
		return nil
	})
	if strings.Join(denied, " ") != "delete:two_deletes write:drafts_are_mine" {
		t.Errorf("denies in the audit: %v", denied)
	}
}

// TestRulesThroughTheHook: vaultgate hook (alone) and vaultgate-hook
// (through its judge) apply an agent's rules alike, and the session's
// deletes are counted from one Claude Code Bash to the next (each judged
// by the hook, run by the exec its rewrite names); the reasons come in
// the agent's language.
func TestRulesThroughTheHook(t *testing.T) {
	for name, hook := range map[string][]string{
		"vaultgate hook": {filepath.Join(bundle(t), "vaultgate"), "hook"},
		"vaultgate-hook": {filepath.Join(bundle(t), "vaultgate-hook")},
	} {
		t.Run(name, func(t *testing.T) {
			vault, cfg, _ := ruleVault(t, "")
			body, _ := os.ReadFile(cfg)
			os.WriteFile(cfg, []byte(strings.Replace(string(body), `lang = "en"`, `lang = "ru"`, 1)), 0o644)
			for i, n := range []string{"a.md", "b.md", "c.md"} {
				out, errs, code := runHookBinary(t, hook, cfg, hookJSON("hs", vault, "Bash", map[string]any{"command": "rm drafts/" + n}))
				// an allowed Bash is answered with its rewrite through exec
				if code != 0 || (i < 2) != strings.Contains(out, `"permissionDecision":"allow"`) {
					t.Fatalf("rm %s: exit %d, %q %q", n, code, out, errs)
				}
				if i < 2 {
					run, _ := readAnswer(t, out).HookSpecificOutput.UpdatedInput["command"].(string)
					env := []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
					if _, errs, code := runIn(t, vault, env, "bash", "-c", run); code != 0 {
						t.Fatalf("rm %s, as Claude Code runs it: exit %d, %q", n, code, errs)
					}
				}
				if i == 2 && !strings.Contains(out, "не больше двух удалений за сессию") {
					t.Errorf("the third rm: %q", out)
				}
			}
			if out, _, _ := runHookBinary(t, hook, cfg, hookJSON("hs", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "drafts/x.md")})); !strings.Contains(out, `"permissionDecision":"allow"`) {
				t.Fatalf("Read a draft: %q", out)
			}
			out, _, _ := runHookBinary(t, hook, cfg, hookJSON("hs", vault, "Write", map[string]any{"file_path": filepath.Join(vault, "drafts/x.md"), "content": "x"}))
			if !strings.Contains(out, "drafts/ — личная папка") {
				t.Errorf("Write over a draft: %q", out)
			}
		})
	}
}

// TestRulesStartUpErrors: every fault of a rule stops serve, the hook
// and check with exit 2, naming the rule and its line and column.
func TestRulesStartUpErrors(t *testing.T) {
	bin := binary(t)
	cases := []struct{ name, extra, want string }{
		{"unknown variable", "\n[[rules.deny]]\nname = \"typo\"\nwhen = 'efect.op == \"delete\"'\nreason = \"r\"\n", `.toml:35:14: rules.deny[2]: rule "typo": when, line 1, column 6: undeclared reference to 'efect.op'`},
		{"type error", "\n[[rules.deny]]\nname = \"typed\"\nwhen = 'session.calls == \"many\"'\nreason = \"r\"\n", `.toml:35:23: rules.deny[2]: rule "typed"`},
		{"not a bool", "\n[[rules.deny]]\nname = \"path\"\nwhen = 'effect.path'\nreason = \"r\"\n", `rule "path": when, line 1, column 1: when is of type string, not bool`},
		{"syntax", "\n[[rules.deny]]\nname = \"broken\"\nwhen = 'effect.op == ('\nreason = \"r\"\n", `.toml:35:`},
		{"failing example", "\n[[rules.deny]]\nname = \"wrong\"\nwhen = 'effect.op == \"delete\"'\nreason = \"r\"\n[[rules.deny.examples]]\nallow = { tool = \"delete\", args = { path = \"drafts/a.md\" } }\n", `.toml:37: rules.deny[2].examples[0]: rule "wrong": the example's call delete is denied`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vault, cfg, _ := ruleVault(t, c.extra)
			for what, args := range map[string][]string{
				"serve": {"serve", "--config", cfg},
				"check": {"check", "--config", cfg, "read", `{"path":"Welcome.md"}`},
				"rules": {"rules", "--config", cfg},
			} {
				out, errs, code := runBin(t, bin, args...)
				if what == "rules" {
					if code == 0 || !strings.Contains(out, "FAILED") && !strings.Contains(out, "error:") {
						t.Errorf("rules: exit %d, %s", code, out)
					}
					continue
				}
				if code != 2 || !strings.Contains(errs, c.want) {
					t.Errorf("%s: exit %d, stderr %q, want %q", what, code, errs, c.want)
				}
			}
			_, errs, code := runHookBinary(t, []string{filepath.Join(bundle(t), "vaultgate-hook")}, cfg,
				hookJSON("s", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "Welcome.md")}))
			if code != 2 || !strings.Contains(errs, c.want) {
				t.Errorf("hook: exit %d, stderr %q, want %q", code, errs, c.want)
			}
		})
	}
}

// TestRulesCommand: `vaultgate rules` lists the chain in order and each
// example's verdict; check names the config rule that denied.
func TestRulesCommand(t *testing.T) {
	bin := binary(t)
	_, cfg, _ := ruleVault(t, `
[agents.bot]
token_env = "BOT"
rules.inherit = false
[[agents.bot.rules.deny]]
name = "bot_no_bash"
when = 'call.tool == "bash"'
reason = "no bash for the bot"
[[agents.bot.rules.deny.examples]]
deny = { tool = "bash", args = { command = "ls" } }
`)
	out, errs, code := runBin(t, bin, "rules", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	order := []string{"agent bot:", "bot_no_bash", "example deny  bash", "agent default:", "hook_scope", "bash", "zones", "read_before_write", "drafts_are_mine", "example deny  write", "example allow read", "two_deletes"}
	at := 0
	for _, w := range order {
		i := strings.Index(out[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, out)
		}
		at += i + len(w)
	}
	if strings.Count(out, ": ok") != 5 {
		t.Errorf("want 5 examples ok:\n%s", out)
	}
	out, _, _ = runBin(t, bin, "rules", "--config", cfg, "--agent", "bot")
	if strings.Contains(out, "drafts_are_mine") || !strings.Contains(out, "bot_no_bash") {
		t.Errorf("--agent bot:\n%s", out)
	}
	out, _, code = runBin(t, bin, "check", "--config", cfg, "write", `{"path":"drafts/new.md","content":"x"}`)
	if code != 0 {
		t.Errorf("check a new draft: exit %d\n%s", code, out)
	}
	out, _, code = runBin(t, bin, "check", "--config", cfg, "--agent", "bot", "bash", "ls")
	if code != 1 || !strings.Contains(out, "rule:     bot_no_bash") || !strings.Contains(out, "reason:   no bash for the bot") {
		t.Errorf("check bash as the bot: exit %d\n%s", code, out)
	}
}

// TestSampleRules: the 20-rule sample config the hook is timed with
// compiles, and lists the built-in rules and its own in order.
func TestSampleRules(t *testing.T) {
	out, errs, code := runCLI(t, "rules", "--config", "../../testdata/rules20.toml")
	if code != 0 || strings.Count(out, "        when:") != 20 || !strings.Contains(out, "24. no_rm_in_meta_19") {
		t.Errorf("exit %d %s\n%s", code, errs, out)
	}
}

// TestUndoWithRules: undo is the person's: it opens a vault whose config
// has rules, and puts back what the agent's allowed call changed.
func TestUndoWithRules(t *testing.T) {
	bin := binary(t)
	vault, cfg, _ := ruleVault(t, "")
	c := serveClient(t, bin, cfg)
	if text, isErr := callTool(t, c, "write", map[string]any{"path": "notes/by-agent.md", "content": "x"}); isErr {
		t.Fatalf("write: %s", text)
	}
	c.Close()
	out, errs, code := runBin(t, bin, "undo", "--config", cfg, "--since", "1h")
	if code != 0 {
		t.Fatalf("undo: exit %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(vault, "notes/by-agent.md")); !os.IsNotExist(err) {
		t.Errorf("notes/by-agent.md after undo: %v\n%s", err, out)
	}
}
