package server

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/vaultgate/vaultgate/claude"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/rules"
)

// celRules are config rules over the sample vault: no more than 3
// deletes per session, notes/projects only after reading its README, and
// a rule for the order of the chain (the zones refuse мета first).
const celRules = `
[[rules.deny]]
name = "three_deletes"
when = 'effect.op == "delete" && session.count["delete"] >= 3'
reason = "no more than 3 deletes per session"
reason_ru = "не больше трёх удалений за сессию"

[[rules.deny]]
name = "readme_first"
when = 'effect.op in ["create", "modify"] && effect.path.startsWith("notes/projects/") && !("notes/projects/README.md" in session.read)'
reason = "read notes/projects/README.md first"

[[rules.deny]]
name = "never_meta"
when = 'effect.path.startsWith("мета/бобер/new")'
reason = "not мета"

[[rules.deny]]
name = "never_meta_either"
when = 'effect.path.startsWith("мета/бобер/new")'
reason = "the second rule never speaks"
`

// celGate is a server's gate over hookConfig's vault with celRules (and
// extra), compiled as the server compiles them when it opens.
func celGate(t *testing.T, extra string) (*Gate, Caller, string) {
	t.Helper()
	cfg := hookConfig(t, celRules+extra)
	g := serverGate(t, cfg)
	p, v := cfg.Policy(config.DefaultAgent), cfg.Vault
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "cel", Agent: p.Name, State: policy.NewState()}, Policy: p}
	for _, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
		os.WriteFile(filepath.Join(v, "мета/бобер", name), []byte("x"), 0o644)
	}
	return g, c, cfg.AuditPath
}

// TestSessionCountersAcrossCalls: session.count and session.read grow
// with the calls a session is allowed, and only those.
func TestSessionCountersAcrossCalls(t *testing.T) {
	g, c, _ := celGate(t, "")
	call := func(tool string, args map[string]any) *Outcome {
		return g.Call(context.Background(), c, tool, args, Serve)
	}
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if o := call("delete", map[string]any{"path": "мета/бобер/" + name}); o.Decision != Allow || o.Err != nil {
			t.Fatalf("delete %s: %s %v %v", name, o.Decision, o.Deny, o.Err)
		}
	}
	o := call("delete", map[string]any{"path": "мета/бобер/d.md"})
	if o.Decision != Deny || o.Deny.Rule != "three_deletes" || o.Deny.Reason != "no more than 3 deletes per session" {
		t.Fatalf("the 4th delete: %s %+v", o.Decision, o.Deny)
	}
	if o.Record.Rule != "three_deletes" {
		t.Errorf("the audit names %q", o.Record.Rule)
	}
	// A dry run (check) counts nothing; a fresh session starts at 0.
	fresh := c
	fresh.Session = &policy.Session{ID: "other", State: policy.NewState()}
	if o := g.Call(context.Background(), fresh, "delete", map[string]any{"path": "мета/бобер/d.md"}, DryRun); o.Decision != Allow {
		t.Errorf("another session's first delete: %s %+v", o.Decision, o.Deny)
	}
	// Writing in notes/projects waits for its README to be read.
	write := map[string]any{"path": "notes/projects/new.md", "content": "x"}
	if o := call("write", write); o.Decision != Deny || o.Deny.Rule != "readme_first" {
		t.Fatalf("write before the README: %s %+v", o.Decision, o.Deny)
	}
	os.WriteFile(filepath.Join(g.cfg.Vault, "notes/projects/README.md"), []byte("readme"), 0o644)
	if o := call("read", map[string]any{"path": "notes/projects/README.md"}); o.Decision != Allow {
		t.Fatalf("read the README: %s %+v", o.Decision, o.Deny)
	}
	if o := call("write", write); o.Decision != Allow || o.Err != nil {
		t.Fatalf("write after the README: %s %+v %v", o.Decision, o.Deny, o.Err)
	}
	tally := policy.SessionTally(c.Session.State)
	if tally.Calls != 5 || tally.Count["delete"] != 3 || tally.Count["read"] != 1 || tally.Count["create"] != 1 ||
		len(tally.Read) != 1 || len(tally.Changed) != 4 || tally.Started.IsZero() {
		t.Errorf("tally %+v", tally)
	}
}

// TestRulesRunAfterTheBuiltIns: the zones refuse мета/x.md before any
// config rule; in мета/бобер (write) the first config rule that denies
// speaks, never the second.
func TestRulesRunAfterTheBuiltIns(t *testing.T) {
	g, c, _ := celGate(t, "")
	o := g.Call(context.Background(), c, "write", map[string]any{"path": "мета/new.md", "content": "x"}, Serve)
	if o.Decision != Deny || o.Deny.Rule != "zones" {
		t.Errorf("мета/new.md: %+v", o.Deny)
	}
	o = g.Call(context.Background(), c, "write", map[string]any{"path": "мета/бобер/new.md", "content": "x"}, Serve)
	if o.Decision != Deny || o.Deny.Rule != "never_meta" || o.Deny.Reason != "not мета" {
		t.Errorf("мета/бобер/new.md: %+v", o.Deny)
	}
}

// botRules is an agent of its own, without the top level's rules.
const botRules = `
[agents.bot]
token_env = "BOT_TOKEN"
rules.inherit = false
[[agents.bot.rules.deny]]
name   = "bot_reads_nothing"
when   = 'effect.op == "read"'
reason = "the bot reads nothing"
`

// brokenRule is a top-level rule that does not compile.
const brokenRule = `
[[rules.deny]]
name   = "broken"
when   = 'effect.op == '
reason = "never shown"
`

// lastRecord is the audit log's last line.
func lastRecord(t *testing.T, auditPath string) audit.Record {
	t.Helper()
	var last audit.Record
	if err := audit.Read(auditPath, func(r audit.Record) error { last = r; return nil }); err != nil {
		t.Fatal(err)
	}
	return last
}

// TestRulesFailClosed: a gate opened for one agent's calls (a hook's or
// exec's, OpenCall) compiles that agent's rules and judges its calls by
// them; a call of another agent, whose rules it did not compile, is
// refused, naming the rule, never judged without it. A rule that does not
// compile keeps a server's gate and a call's gate of its agent from
// opening, while a dry run's (check's) opens and reports it, refusing the
// calls it would judge. A runtime error denies and the audit names the
// rule.
func TestRulesFailClosed(t *testing.T) {
	cfg := hookConfig(t, celRules+botRules)
	bot, def := cfg.Policy("bot"), cfg.Policy(config.DefaultAgent)
	read := map[string]any{"file_path": filepath.Join(cfg.Vault, "Welcome.md")}
	g := callGate(t, cfg, bot.Name)
	if got := hookCall(t, g, bot, "bot", cfg.Vault, "Read", read); got != "the bot reads nothing" {
		t.Errorf("the bot's read, judged by its own compiled rule: %q", got)
	}
	if r := lastRecord(t, cfg.AuditPath); r.Agent != "bot" || r.Rule != "bot_reads_nothing" {
		t.Errorf("the bot's audit line: agent %q, rule %q", r.Agent, r.Rule)
	}
	got := hookCall(t, g, def, "default", cfg.Vault, "Read", read)
	if !strings.Contains(got, `"three_deletes" was not compiled`) {
		t.Errorf("a call of an agent whose rules the gate did not compile: %q", got)
	}
	if r := lastRecord(t, cfg.AuditPath); r.Decision != Deny || r.Rule != "three_deletes" {
		t.Errorf("an uncompiled rule's audit line: %s, rule %q", r.Decision, r.Rule)
	}
	// The same call, through a gate opened for its own agent, is allowed.
	if got := hookCall(t, callGate(t, cfg, def.Name), def, "default", cfg.Vault, "Read", read); got != "" {
		t.Errorf("the default agent's read through its own gate: %q", got)
	}

	broken := hookConfig(t, brokenRule+botRules)
	var re *rules.Error
	if err := notOpened(OpenServer(broken, io.Discard)); !errors.As(err, &re) || re.Rule.Name != "broken" {
		t.Errorf("a server with a rule that does not compile: %v", err)
	}
	if err := notOpened(OpenCall(broken, config.DefaultAgent)); !errors.As(err, &re) || re.Rule.Name != "broken" {
		t.Errorf("a call of the agent whose rule does not compile: %v", err)
	}
	// Only the agent's own rules are compiled for its call.
	brokenRead := map[string]any{"file_path": filepath.Join(broken.Vault, "Welcome.md")}
	if got := hookCall(t, callGate(t, broken, "bot"), broken.Policy("bot"), "bot", broken.Vault, "Read", brokenRead); got != "the bot reads nothing" {
		t.Errorf("the bot, beside a broken rule of another agent: %q", got)
	}
	dry := dryRunGate(t, broken)
	if err := dry.RuleError(); !errors.As(err, &re) || re.Rule.Name != "broken" || !strings.Contains(err.Error(), "c.toml:") {
		t.Errorf("a dry run's rule error: %v", err)
	}
	c := Caller{Via: ViaCheck, Session: &policy.Session{ID: "check", State: policy.NewState()}, Policy: broken.Policy(config.DefaultAgent)}
	o := dry.Call(context.Background(), c, "read", map[string]any{"path": "Welcome.md"}, DryRun)
	if o.Decision != Deny || o.Deny.Rule != "broken" || !strings.Contains(o.Deny.Reason, "was not compiled") {
		t.Errorf("a dry run's call under a rule that did not compile: %s %+v", o.Decision, o.Deny)
	}

	g, c, auditPath := celGate(t, `
[[rules.deny]]
name = "needs_recursive"
when = 'call.tool == "delete" && call.args.recursive'
reason = "never shown"
`)
	o = g.Call(context.Background(), c, "delete", map[string]any{"path": "мета/бобер/a.md"}, Serve)
	if o.Decision != Deny || o.Deny.Rule != "needs_recursive" || !strings.Contains(o.Deny.Reason, "could not be evaluated") {
		t.Fatalf("a runtime error: %s %+v", o.Decision, o.Deny)
	}
	data, _ := os.ReadFile(auditPath)
	var r struct{ Rule, Reason, Decision string }
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	json.Unmarshal([]byte(lines[len(lines)-1]), &r)
	if r.Decision != "deny" || r.Rule != "needs_recursive" || !strings.Contains(r.Reason, "no such key") {
		t.Errorf("audit line %+v", r)
	}
}

// TestRuleExamplesAtStartUp: a failing example keeps a server's gate from
// opening, with the rule and the example named, and is a dry run's
// RuleError; the examples are planned against the vault (a deny example
// of a delete of a file that is there).
func TestRuleExamplesAtStartUp(t *testing.T) {
	good := `
[[rules.deny]]
name = "keep_plan"
when = 'effect.op == "delete" && effect.path == "мета/бобер/plan.md"'
reason = "keep the plan"
[[rules.deny.examples]]
deny = { tool = "delete", args = { path = "мета/бобер/plan.md" } }
[[rules.deny.examples]]
allow = { tool = "delete", args = { path = "мета/бобер/other.md" } }
`
	cfg := hookConfig(t, good)
	serverGate(t, cfg)
	if err := dryRunGate(t, cfg).RuleError(); err != nil {
		t.Errorf("good examples, in a dry run: %v", err)
	}
	bad := strings.Replace(good, `allow = { tool = "delete", args = { path = "мета/бобер/other.md" } }`, `allow = { tool = "delete", args = { path = "мета/бобер/plan.md" } }`, 1)
	cfg = hookConfig(t, bad)
	failing := func(what string, err error) {
		t.Helper()
		var re *rules.Error
		if !errors.As(err, &re) || re.Rule.Name != "keep_plan" || re.Example == nil || re.Example.Key != "rules.deny[0].examples[1]" ||
			!strings.Contains(err.Error(), ".toml:17: rules.deny[0].examples[1]") {
			t.Errorf("a failing example, %s: %v", what, err)
		}
	}
	failing("a server", notOpened(OpenServer(cfg, io.Discard)))
	failing("a call", notOpened(OpenCall(cfg, config.DefaultAgent)))
	failing("a dry run", dryRunGate(t, cfg).RuleError())
}

// notOpened is the error of a gate that should not have opened; one that
// did is closed at once.
func notOpened(g *Gate, err error) error {
	if err == nil {
		g.Close()
	}
	return err
}

// TestWallHookSessionCounters: a Claude Code Bash is one call of its
// session from the hook's judgement to exec's run (by the call id the
// hook issued): its deletes are counted once — the real ones, when exec
// applies them on the overlay; the predicted ones, at the judgement, when
// there is no overlay — so the fourth is refused either way.
func TestWallHookSessionCounters(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the walled run needs root (CI runs it)")
	}
	for _, wall := range []string{"required", "off"} {
		t.Run("wall "+wall, func(t *testing.T) {
			g, p, v, _ := hookGate(t, celRules+"\n[bash]\nwall = \""+wall+"\"\n")
			for _, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
				os.WriteFile(filepath.Join(v, "мета/бобер", name), []byte("x"), 0o644)
			}
			for i, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
				command := "rm мета/бобер/" + name
				a := hookAnswer(t, g, p, "counted", v, "Bash", map[string]any{"command": command})
				if i == 3 {
					if a.Deny != "no more than 3 deletes per session" {
						t.Errorf("the fourth rm: %+v", a)
					}
					continue
				}
				if a.Deny != "" || a.UpdatedInput == nil {
					t.Fatalf("rm %s: %+v", name, a)
				}
				ws := words(t, a.UpdatedInput["command"].(string))
				o := g.Exec(context.Background(), ExecRequest{Agent: p, CallID: flagOf(ws, "--call"), Cwd: v, Args: map[string]any{"command": command}})
				if o.Decision != Allow || o.IsError() {
					t.Fatalf("exec of rm %s: %+v", name, o)
				}
				if o.Record.Session != "counted" || o.Record.Continues == "" {
					t.Errorf("exec's line: session %q, continues %q", o.Record.Session, o.Record.Continues)
				}
			}
			if _, err := os.Stat(filepath.Join(v, "мета/бобер/d.md")); err != nil {
				t.Errorf("the refused rm ran: %v", err)
			}
		})
	}
}

// TestHookAfterIsNotJudgedByConfigRules: the PostToolUse of a call the
// PreToolUse allowed records it even when the counters that call raised
// would now make a rule deny; the read it records lets a later Edit pass
// read_before_write.
func TestHookAfterIsNotJudgedByConfigRules(t *testing.T) {
	g, p, v, auditPath := hookGate(t, `
[[rules.deny]]
name = "two_reads"
when = 'effect.op == "read" && session.count["read"] >= 2'
reason = "two reads are enough"
`)
	after := func(tool string, input map[string]any) {
		t.Helper()
		in := &claude.HookInput{SessionID: "after", Cwd: v, HookEventName: "PostToolUse", ToolName: tool, ToolInput: input}
		if _, err := g.Hook(context.Background(), p, in); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"Welcome.md", "notes/ideas.md"} {
		in := map[string]any{"file_path": filepath.Join(v, name)}
		if got := hookCall(t, g, p, "after", v, "Read", in); got != "" {
			t.Fatalf("Read %s: %s", name, got)
		}
		after("Read", in)
	}
	if got := hookCall(t, g, p, "after", v, "Read", map[string]any{"file_path": filepath.Join(v, "notes/projects/plan.md")}); got != "two reads are enough" {
		t.Errorf("the third Read: %q", got)
	}
	edit := map[string]any{"file_path": filepath.Join(v, "notes/ideas.md"), "old_string": "a", "new_string": "b"}
	if got := hookCall(t, g, p, "after", v, "Edit", edit); got != "" {
		t.Errorf("Edit after the recorded Read: %s", got)
	}
	data, _ := os.ReadFile(auditPath)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(l, `"event":"after"`) && strings.Contains(l, `"decision":"deny"`) {
			t.Errorf("an After line denied: %s", l)
		}
	}
}
