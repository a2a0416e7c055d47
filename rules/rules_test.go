package rules

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

func at(p string) zones.Path {
	np, err := zones.Normalize("/v", p)
	if err != nil {
		panic(err)
	}
	return np
}

// fixedNow is the clock of every case: 23:30 in Berlin.
var fixedNow = time.Date(2026, 1, 1, 22, 30, 0, 0, time.UTC)

func command(e *policy.Effect) string {
	s, _ := e.Fact.(string)
	return s
}

// theCall is one call of every variable's cases: agent "bot" over HTTP,
// deleting drafts/x.md with rm, in a session that has read two notes,
// changed one, deleted 3 files in 4 calls, and started at 20:00 UTC.
func theCall() *policy.ToolCall {
	st := policy.NewState()
	policy.SetTally(st, policy.Tally{
		Read: []string{"projects/a/README.md", "notes/n.md"}, Changed: []string{"notes/n.md"},
		Count: map[string]int{"delete": 3, "read": 2}, Calls: 4,
		Started: time.Date(2026, 1, 1, 20, 0, 0, 0, time.UTC),
	})
	return &policy.ToolCall{
		Tool: "bash", Args: map[string]any{"command": "rm drafts/x.md", "timeout": float64(30)}, Via: "http",
		Session: &policy.Session{ID: "s", Agent: "bot", State: st}, Lang: say.English,
		Effects: []policy.Effect{
			{Op: zones.OpRead, Path: at("notes/n.md"), Zone: zones.Edit, Fact: "cat"},
			{Op: zones.OpDelete, Path: at("drafts/x.md"), Zone: zones.Write, Fact: "rm"},
		},
	}
}

// TestEachVariable: every variable an expression sees, in a rule that
// denies the call and one that lets it through.
func TestEachVariable(t *testing.T) {
	cases := []struct {
		variable     string
		deny, allows string
	}{
		{"call.tool", `call.tool == "bash"`, `call.tool == "write"`},
		{"call.args", `call.args.command.startsWith("rm ") && call.args.timeout == 30.0`, `"recursive" in call.args`},
		{"call.via", `call.via == "http"`, `call.via in ["stdio", "hook"]`},
		{"call.agent", `call.agent == "bot"`, `call.agent == "default"`},
		{"effect.op", `effect.op == "delete"`, `effect.op == "move-out"`},
		{"effect.path", `effect.path.startsWith("drafts/")`, `effect.path.startsWith("journal/")`},
		{"effect.zone", `effect.zone == "write"`, `effect.zone == "protected"`},
		{"effect.command", `effect.command == "rm"`, `effect.command == "sed"`},
		{"session.read", `"projects/a/README.md" in session.read`, `"projects/b/README.md" in session.read`},
		{"session.changed", `"notes/n.md" in session.changed`, `size(session.changed) > 1`},
		{"session.count", `session.count["delete"] >= 3`, `session.count["delete"] >= 20 || session.count["link"] > 0`},
		{"session.calls", `session.calls == 4`, `session.calls > 100`},
		{"session.started", `now - session.started > duration("2h")`, `now - session.started > duration("3h")`},
		{"now", `now.getHours("Europe/Berlin") >= 22`, `now.getHours("Europe/Berlin") < 22`},
	}
	for _, c := range cases {
		for _, when := range []string{c.deny, c.allows} {
			r, err := Compile(&config.DenyRule{Name: "r", When: when, Reason: "no"}, Options{Command: command, Now: func() time.Time { return fixedNow }})
			if err != nil {
				t.Errorf("%s: %s: %v", c.variable, when, err)
				continue
			}
			d := r.Check(theCall())
			if want := when == c.deny; (d != nil) != want {
				t.Errorf("%s: %s: deny %v, want deny %v", c.variable, when, d, want)
			}
			set, err := CompileSet([]config.DenyRule{*r.Decl}, Options{Command: command, Now: func() time.Time { return fixedNow }})
			if err != nil {
				t.Fatal(err)
			}
			if sd := set.Check(theCall()); (sd != nil) != (d != nil) {
				t.Errorf("%s: %s: as a set %v, alone %v", c.variable, when, sd, d)
			}
			if d != nil && (d.Rule != "r" || d.Reason != "no") {
				t.Errorf("%s: deny %+v", c.variable, d)
			}
		}
	}
	if len(cases) != len(Variables) {
		t.Errorf("%d cases for %d variables", len(cases), len(Variables))
	}
}

// TestDenyNamesTheEffect: the effect the rule was true for is the deny's,
// and the reason is in the agent's language.
func TestDenyNamesTheEffect(t *testing.T) {
	d := &config.DenyRule{Name: "drafts", When: `effect.path.startsWith("drafts/")`, Reason: "drafts are mine", ReasonRU: "черновики мои"}
	r, err := Compile(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := theCall()
	got := r.Check(c)
	if got == nil || got.Effect != &c.Effects[1] || got.Reason != "drafts are mine" {
		t.Fatalf("deny %+v", got)
	}
	c.Lang = say.Russian
	if got := r.Check(c); got == nil || got.Reason != "черновики мои" {
		t.Fatalf("ru deny %+v", got)
	}
	d.ReasonRU = ""
	if got := r.Check(c); got == nil || got.Reason != "drafts are mine" {
		t.Fatalf("ru deny without reason_ru %+v", got)
	}
}

// TestNoEffects: a call with no effects is judged once, with effect.* "".
func TestNoEffects(t *testing.T) {
	r, err := Compile(&config.DenyRule{Name: "late", When: `call.tool == "bash" && effect.op == "" && effect.path == ""`, Reason: "late"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := theCall()
	c.Effects = nil
	if d := r.Check(c); d == nil || d.Effect != nil {
		t.Fatalf("deny %+v", d)
	}
}

// TestCompileErrors: each start-up fault is an *Error that names the
// rule and the place in the expression, and in the file where known.
func TestCompileErrors(t *testing.T) {
	cases := []struct {
		when      string
		line, col int
		text      string
	}{
		{`efect.op == "delete"`, 1, 6, "undeclared reference to 'efect.op'"},
		{`effect.op == "delete" && session.deletes > 3`, 1, 33, "undeclared reference"},
		{`effect.op == 1`, 1, 11, "no matching overload"},
		{`effect.path`, 1, 1, "of type string, not bool"},
		{`call.args.recursive`, 1, 1, "of type dyn, not bool"},
		{`effect.op == "delete" &&`, 1, 25, "Syntax error"},
		{"effect.op == \"delete\" &&\n  effect.path.startsWith(drafts)", 2, 26, "undeclared reference to 'drafts'"},
		{`nope()`, 1, 5, "undeclared reference to 'nope'"},
	}
	for _, c := range cases {
		d := &config.DenyRule{Name: "bad", When: c.when, Reason: "r", Key: "rules.deny[3]", File: "/x/vault.toml", Pos: config.Pos{Line: 10, Col: 11}}
		_, err := Compile(d, Options{})
		var re *Error
		if !errors.As(err, &re) {
			t.Errorf("%q: error %v, want *Error", c.when, err)
			continue
		}
		if re.Line != c.line || re.Col != c.col || !strings.Contains(re.Msg, c.text) {
			t.Errorf("%q: %d:%d %q, want %d:%d %q", c.when, re.Line, re.Col, re.Msg, c.line, c.col, c.text)
		}
		wantLine, wantCol := 10+c.line-1, c.col
		if c.line == 1 {
			wantCol = 11 + c.col - 1
		}
		for _, part := range []string{"/x/vault.toml:", "rules.deny[3]", `rule "bad"`} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("%q: %q does not name %s", c.when, err, part)
			}
		}
		if l, col := re.fileLine(); l != wantLine || col != wantCol {
			t.Errorf("%q: file place %d:%d, want %d:%d", c.when, l, col, wantLine, wantCol)
		}
	}
}

// TestRuntimeErrorsDeny: an expression that errs on the call, or runs
// past its cost limit, denies, naming the rule.
func TestRuntimeErrorsDeny(t *testing.T) {
	items := make([]any, 2000)
	for i := range items {
		items[i] = float64(i)
	}
	cases := []struct {
		when, problem string
		args          map[string]any
	}{
		{`call.args.path.startsWith("drafts/")`, "no such key", map[string]any{}},
		{`int(call.args.n) > 3`, "", map[string]any{"n": "many"}},
		{`call.args.items.all(a, call.args.items.all(b, a != b || a == b))`, "cost limit", map[string]any{"items": items}},
	}
	for _, c := range cases {
		r, err := Compile(&config.DenyRule{Name: "fragile", When: c.when, Reason: "never shown"}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.when, err)
		}
		call := theCall()
		call.Args = c.args
		d := r.Check(call)
		if d == nil || d.Rule != "fragile" || !strings.Contains(d.Reason, `"fragile"`) || !strings.Contains(d.Reason, c.problem) || d.Reason == "never shown" {
			t.Errorf("%s: deny %+v, want the rule named and %q", c.when, d, c.problem)
		}
	}
}

// TestExamples: a deny example the rule lets through, an allow example it
// denies, an example that makes it fail or can't be planned: each is an
// error naming the rule and the example's line.
func TestExamples(t *testing.T) {
	plan := func(ex *config.Example) (*policy.ToolCall, error) {
		if ex.Tool == "nosuch" {
			return nil, errors.New("unknown tool nosuch")
		}
		p, _ := ex.Args["path"].(string)
		return &policy.ToolCall{Tool: ex.Tool, Args: ex.Args, Lang: say.English,
			Effects: []policy.Effect{{Op: map[string]zones.Op{"delete": zones.OpDelete}[ex.Tool], Path: at(p), Zone: zones.Write}}}, nil
	}
	ex := func(deny bool, tool, path string) config.Example {
		return config.Example{Deny: deny, Tool: tool, Args: map[string]any{"path": path}, Key: "rules.deny[0].examples[0]", Line: 17}
	}
	when := `effect.op == "delete" && effect.path.startsWith("drafts/")`
	good := []config.Example{ex(true, "delete", "drafts/x.md"), ex(false, "read", "drafts/x.md"), ex(false, "delete", "notes/x.md")}
	r, err := Compile(&config.DenyRule{Name: "d", When: when, Reason: "r", Examples: good}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CheckExamples(plan); err != nil {
		t.Fatalf("good examples: %v", err)
	}
	for _, c := range []struct {
		ex   config.Example
		when string
		text string
	}{
		{ex(true, "delete", "notes/x.md"), when, "is allowed, but the example says deny"},
		{ex(false, "delete", "drafts/y.md"), when, "is denied (on delete drafts/y.md), but the example says allow"},
		{ex(false, "read", "x"), `call.args.recursive == true`, "makes the expression fail"},
		{ex(true, "nosuch", "x"), when, "can't be planned"},
	} {
		d := &config.DenyRule{Name: "d", When: c.when, Reason: "r", Key: "rules.deny[0]", File: "/c.toml", Examples: []config.Example{c.ex}}
		r, err := Compile(d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = r.CheckExamples(plan)
		var re *Error
		if !errors.As(err, &re) || !strings.Contains(err.Error(), c.text) || !strings.HasPrefix(err.Error(), `/c.toml:17: rules.deny[0].examples[0]: rule "d"`) {
			t.Errorf("%+v: %v", c.ex, err)
		}
	}
	// An example's own session and clock.
	d := &config.DenyRule{Name: "twenty", When: `effect.op == "delete" && session.count["delete"] >= 20 && now.getFullYear() == 2020`, Reason: "r",
		Examples: []config.Example{{Deny: true, Tool: "delete", Args: map[string]any{"path": "a"},
			Session: config.ExampleSession{Count: map[string]int{"delete": 20}}, Now: time.Date(2020, 5, 1, 0, 0, 0, 0, time.UTC)}}}
	if r, err = Compile(d, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := r.CheckExamples(plan); err != nil {
		t.Errorf("session example: %v", err)
	}
}

// TestSetIsTheRulesInOrder: a set answers as its rules would one after
// another: the first rule written that is true for any effect, on the
// first such effect; a failing rule is found and named; untracked and
// tracked rules, and calls past the estimate's string bounds, alike.
func TestSetIsTheRulesInOrder(t *testing.T) {
	decl := []config.DenyRule{
		{Name: "never", When: `effect.path == "nowhere"`, Reason: "0"},
		{Name: "reads_session", When: `effect.op == "delete" && "notes/n.md" in session.read`, Reason: "1"}, // tracked
		{Name: "any_delete", When: `effect.op == "delete" && [1, 2].all(x, x > 0) && session.read.exists(p, p.endsWith(".md"))`, Reason: "2"},
		{Name: "any_read", When: `effect.op == "read"`, Reason: "3"},
	}
	set, err := CompileSet(decl, Options{Command: command})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.lists) != 2 {
		t.Fatalf("%d lists, want an untracked and a tracked one", len(set.lists))
	}
	c := theCall()
	d := set.Check(c)
	if d == nil || d.Rule != "reads_session" || d.Effect != &c.Effects[1] {
		t.Fatalf("deny %+v", d)
	}
	// Past the bounds, rule by rule: the same answer.
	long := theCall()
	long.Effects[0].Path = at(strings.Repeat("a/", 3000) + "x.md")
	if d := set.Check(long); d == nil || d.Rule != "reads_session" {
		t.Errorf("a long path: %+v", d)
	}
	// Without the tracked rule, the read (effect 0) is denied by rule 3,
	// the delete (effect 1) by rule 2: rule 2 wins.
	decl[1].When = `false`
	set, _ = CompileSet(decl, Options{})
	if d := set.Check(theCall()); d == nil || d.Rule != "any_delete" || d.Reason != "2" {
		t.Errorf("deny %+v", d)
	}
	// A rule that errs is named, even after one that would deny.
	decl = append([]config.DenyRule{{Name: "fragile", When: `call.args.nope == 1`, Reason: "x"}}, decl...)
	set, _ = CompileSet(decl, Options{})
	if d := set.Check(theCall()); d == nil || d.Rule != "fragile" || !strings.Contains(d.Reason, "no such key") {
		t.Errorf("deny %+v", d)
	}
	// No rule true: allowed.
	set, _ = CompileSet(decl[1:2], Options{})
	if d := set.Check(theCall()); d != nil {
		t.Errorf("deny %+v", d)
	}
}

// TestCountWithinACall: session.count counts the call's own effects
// judged before the one being judged, so a call of many deletes in a fresh
// session is held to a limit as that many calls would be — by a rule
// alone, and by the set of rules (the two ways a chain evaluates them).
func TestCountWithinACall(t *testing.T) {
	d := config.DenyRule{Name: "three", When: `effect.op == "delete" && session.count["delete"] >= 3`, Reason: "no more than 3 deletes"}
	r, err := Compile(&d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := CompileSet([]config.DenyRule{d}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	deletes := func(n int) *policy.ToolCall {
		c := &policy.ToolCall{Tool: "bash", Session: &policy.Session{ID: "fresh", State: policy.NewState()}, Lang: say.English}
		c.Effects = append(c.Effects, policy.Effect{Op: zones.OpRead, Path: at("notes/r.md")}) // not a delete: not counted
		for i := range n {
			c.Effects = append(c.Effects, policy.Effect{Op: zones.OpDelete, Path: at("drafts/" + string(rune('a'+i)) + ".md")})
		}
		return c
	}
	for _, check := range []struct {
		name  string
		check func(*policy.ToolCall) *policy.Deny
	}{{"rule", r.Check}, {"set", set.Check}} {
		if got := check.check(deletes(3)); got != nil {
			t.Errorf("%s: 3 deletes in a fresh session: %+v", check.name, got)
		}
		c := deletes(50)
		got := check.check(c)
		if got == nil || got.Effect != &c.Effects[4] {
			t.Errorf("%s: 50 deletes in a fresh session: %+v, want the 4th delete refused", check.name, got)
		}
	}
}
