package server

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func celGate(t *testing.T, extra string) (*Gate, Caller, string) {
	t.Helper()
	g, p, v, auditPath := hookGate(t, celRules+extra)
	if err := g.CompileRules(rules.Chain); err != nil {
		t.Fatal(err)
	}
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "cel", Agent: p.Name, State: policy.NewState()}, Policy: p}
	for _, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
		os.WriteFile(filepath.Join(v, "мета/бобер", name), []byte("x"), 0o644)
	}
	return g, c, auditPath
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

// TestRulesFailClosed: a gate that did not compile an agent's rules
// refuses its calls, naming the rule; a binary without a compiler does
// not open; a runtime error denies and the audit names the rule.
func TestRulesFailClosed(t *testing.T) {
	g, p, _, _ := hookGate(t, celRules)
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "x", State: policy.NewState()}, Policy: p}
	o := g.Call(context.Background(), c, "read", map[string]any{"path": "Welcome.md"}, Serve)
	if o.Decision != Deny || o.Deny.Rule != "three_deletes" || !strings.Contains(o.Deny.Reason, "was not compiled") {
		t.Errorf("an uncompiled rule: %s %+v", o.Decision, o.Deny)
	}
	if err := g.CompileRules(nil); !errors.Is(err, ErrNoRuleCompiler) {
		t.Errorf("no compiler: %v", err)
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

// TestRuleExamplesAtStartUp: a failing example stops CompileRules with
// the rule and the example named; the examples are planned against the
// vault (a deny example of a delete of a file that is there).
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
	g, _, _, _ := hookGate(t, good)
	if err := g.CompileRules(rules.Chain); err != nil {
		t.Fatalf("good examples: %v", err)
	}
	bad := strings.Replace(good, `allow = { tool = "delete", args = { path = "мета/бобер/other.md" } }`, `allow = { tool = "delete", args = { path = "мета/бобер/plan.md" } }`, 1)
	g, _, _, _ = hookGate(t, bad)
	err := g.CompileRules(rules.Chain)
	var re *rules.Error
	if !errors.As(err, &re) || re.Rule.Name != "keep_plan" || re.Example == nil || re.Example.Key != "rules.deny[0].examples[1]" ||
		!strings.Contains(err.Error(), ".toml:17: rules.deny[0].examples[1]") {
		t.Errorf("a failing example: %v", err)
	}
}

// TestHookSessionCounters: the hook's session counters survive from one
// hook process to the next in the session's state file.
func TestHookSessionCounters(t *testing.T) {
	g, p, v, _ := hookGate(t, celRules)
	if err := g.CompileRules(rules.Chain); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
		os.WriteFile(filepath.Join(v, "мета/бобер", name), []byte("x"), 0o644)
	}
	for i, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
		got := hookCall(t, g, p, "counted", v, "Bash", map[string]any{"command": "rm мета/бобер/" + name})
		if want := i == 3; (got != "") != want || want && got != "no more than 3 deletes per session" {
			t.Errorf("rm %s: %q", name, got)
		}
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
	if err := g.CompileRules(rules.Chain); err != nil {
		t.Fatal(err)
	}
	after := func(tool string, input map[string]any) {
		t.Helper()
		in := &HookInput{SessionID: "after", Cwd: v, HookEventName: "PostToolUse", ToolName: tool, ToolInput: input}
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
