package tools

import (
	"github.com/vaultgate/vaultgate/claude"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// vpath is p normalised in the rule tests' vault /v.
func vpath(p string) zones.Path {
	np, err := zones.Normalize("/v", p)
	if err != nil {
		panic(err)
	}
	return np
}

func ruleTable(t *testing.T) *zones.Table {
	t.Helper()
	tab, err := zones.New("/v", []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected}, {Path: "мета/бобер", Mode: zones.Write},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// judgeBash judges effects of a bash call with the chain the server builds.
func judgeBash(t *testing.T, allow []string, facts any, effects ...policy.Effect) *policy.Deny {
	t.Helper()
	tab := ruleTable(t)
	policy.Zoned(tab, effects)
	chain := append(policy.Chain{BashRule(allow)}, policy.Builtin(false)...)
	return chain.Judge(&policy.ToolCall{Tool: "any name", Effects: effects, Zones: tab, Facts: facts, TellAll: true})
}

func TestBashRule(t *testing.T) {
	part := func(command string, byRename bool) BashPart { return BashPart{Command: command, ByRename: byRename} }
	cases := []struct {
		e     policy.Effect
		allow []string
		want  string // "" = allowed
		rule  string
	}{
		{policy.Effect{Op: zones.OpExec, Cause: "python3", Fact: BashPart{Command: "python3", Why: "interpreter"}}, nil, `run "python3" (interpreter)`, "bash"},
		{policy.Effect{Op: zones.OpExec, Cause: "python3", Confined: true}, nil, "", ""},
		{policy.Effect{Op: zones.OpExec, Cause: "perl", Confined: true}, []string{"python3"}, "not in bash.allow", "bash"},
		{policy.Effect{Op: zones.OpExec, Cause: "rg --pre", Confined: true}, []string{"rg"}, "", ""},
		{policy.Effect{Op: zones.OpDelete, Path: vpath("notes/a.md"), Cause: "rm", Fact: part("rm", false)}, nil, "Deleting is allowed in", "bash"},
		{policy.Effect{Op: zones.OpMoveOut, Path: vpath("notes/a.md"), Cause: "mv", Fact: part("mv", true)}, nil, "Use the move tool", "bash"},
		{policy.Effect{Op: zones.OpModify, Path: vpath("notes/a.md"), Cause: "sed", Fact: part("sed", true)}, nil, "Use the edit tool", "bash"},
		{policy.Effect{Op: zones.OpModify, Path: vpath("notes/a.md"), Cause: ">", Fact: part(">", false)}, nil, "", ""},
		{policy.Effect{Op: zones.OpModify, Path: vpath("мета/бобер/a.md"), Cause: "sed", Fact: part("sed", true)}, nil, "", ""},
		{policy.Effect{Op: zones.OpDelete, Path: vpath("мета/бобер/a.md"), Cause: "rm", Fact: part("rm", false)}, nil, "", ""},
		{policy.Effect{Op: zones.OpDelete, Path: vpath("мета/a.md"), Cause: "rm", Fact: part("rm", false)}, nil, "zone protected", "zones"},
		{policy.Effect{Op: zones.OpModify, Unknown: true, Cause: "tee", Fact: part("tee", false)}, nil, "only known when the command runs", "zones"},
		{policy.Effect{Op: zones.OpRead, Unknown: true, Cause: "cat", Fact: part("cat", false)}, nil, "could be any file on the machine", "bash"},
		{policy.Effect{Op: zones.OpRead, Unknown: true, Cause: "cat", Confined: true}, nil, "", ""},
	}
	for _, c := range cases {
		d := judgeBash(t, c.allow, BashCall{}, c.e)
		switch {
		case c.want == "" && d != nil:
			t.Errorf("%+v: %v", c.e, d)
		case c.want != "" && (d == nil || !strings.Contains(d.Reason, c.want) || d.Rule != c.rule):
			t.Errorf("%+v: %+v, want %q from %s", c.e, d, c.want, c.rule)
		}
	}
	refusal := &policy.Deny{Rule: "bash", Reason: "parse error"}
	if d := judgeBash(t, nil, BashCall{Refusal: refusal}); d != refusal {
		t.Errorf("refusal: %v", d)
	}
	// without the bash facts the rule stays out, whatever the tool's name
	if d := BashRule(nil).Check(&policy.ToolCall{Tool: "bash", Effects: []policy.Effect{{Op: zones.OpExec, Cause: "python3"}}}); d != nil {
		t.Errorf("a call without bash facts: %v", d)
	}
}

// shelf is a zone kind defined only in this test: it allows changing but
// not deleting, so bash may not replace a file there by a rename, by its
// op set alone.
var shelf, shelfErr = zones.Define(zones.KindSpec{
	Name:    "shelf",
	Allows:  zones.Ops(zones.OpRead, zones.OpCreate, zones.OpModify, zones.OpMoveIn),
	English: "create and change, never move out or delete",
	Russian: "создавать и менять, но не перемещать оттуда и не удалять",
})

func TestBashRuleOnADefinedKind(t *testing.T) {
	if shelfErr != nil {
		t.Fatal(shelfErr)
	}
	tab, err := zones.New("/v", []zones.Entry{{Path: ".", Mode: zones.Write}, {Path: "shelf", Mode: shelf}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	judge := func(e policy.Effect) *policy.Deny {
		effects := []policy.Effect{e}
		policy.Zoned(tab, effects)
		return BashRule(nil).Check(&policy.ToolCall{Effects: effects, Zones: tab, Lang: "en", Facts: BashCall{}})
	}
	if d := judge(policy.Effect{Op: zones.OpModify, Path: vpath("shelf/a.md"), Cause: "sed", Fact: BashPart{Command: "sed", ByRename: true}}); d == nil || !strings.Contains(d.Reason, "Use the edit tool") {
		t.Errorf("bash sed -i in a shelf: %v", d)
	}
	if d := judge(policy.Effect{Op: zones.OpModify, Path: vpath("a.md"), Cause: "sed", Fact: BashPart{Command: "sed", ByRename: true}}); d != nil {
		t.Errorf("bash sed -i where delete is allowed: %v", d)
	}
}

// TestBashRuleTellsEveryPart: once bash's own reason refuses a part, every
// refused part is told, the zones' too.
func TestBashRuleTellsEveryPart(t *testing.T) {
	d := judgeBash(t, nil, BashCall{},
		policy.Effect{Op: zones.OpDelete, Path: vpath("мета/a.md"), Cause: "rm", Fact: BashPart{Command: "rm"}},
		policy.Effect{Op: zones.OpExec, Cause: "node", Fact: BashPart{Command: "node", Why: "interpreter"}},
	)
	if d == nil || d.Rule != "bash" || !strings.Contains(d.Reason, "zone protected") || !strings.Contains(d.Reason, `run "node"`) {
		t.Errorf("%+v", d)
	}
}

// TestPlannersMark: planners, not tool names, say which effects need a
// fresh read and what the bash rule needs; the hook's Bash is planned as
// the bash tool's, so under wall = "off" nothing of it is confined.
func TestPlannersMark(t *testing.T) {
	s, root := realVault(t)
	fresh := func(tool string, args map[string]any) []bool {
		p, err := s.Plan(tool, args)
		if err != nil {
			t.Fatal(err)
		}
		var out []bool
		for _, e := range p.Effects {
			out = append(out, e.NeedsFreshRead)
		}
		return out
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want []bool
	}{
		{"write", map[string]any{"path": "notes/a.md", "content": "x"}, []bool{true}},
		{"write", map[string]any{"path": "notes/new/b.md", "content": "x"}, []bool{false, true}}, // the folder above is created
		{"edit", map[string]any{"path": "notes/a.md", "old_string": "a", "new_string": "b"}, []bool{true}},
		{"read", map[string]any{"path": "notes/a.md"}, []bool{false}},
		{"move", map[string]any{"source": "notes/a.md", "destination": "notes/c.md"}, []bool{false, false}},
	} {
		if got := fresh(c.tool, c.args); !slices.Equal(got, c.want) {
			t.Errorf("%s %v: NeedsFreshRead %v, want %v", c.tool, c.args, got, c.want)
		}
	}
	s.Hook = &HookCall{Cwd: root, ServerName: "vault"}
	for tool, args := range map[string]map[string]any{
		"Write":        {"file_path": root + "/notes/a.md"},
		"Edit":         {"file_path": root + "/notes/a.md"},
		"MultiEdit":    {"file_path": root + "/notes/a.md"},
		"NotebookEdit": {"notebook_path": root + "/notes/a.md"},
	} {
		if got := fresh(tool, args); !slices.Equal(got, []bool{true}) {
			t.Errorf("hook %s: NeedsFreshRead %v", tool, got)
		}
	}
	s.Bash = &config.Bash{Enabled: true, Wall: config.WallOff, Timeout: time.Minute, MaxTimeout: time.Minute}
	s.Hook.Exec = &claude.Exec{Binary: "/usr/bin/vaultgate", Config: "/etc/vaultgate.toml"}
	p, err := s.Plan("Bash", map[string]any{"command": "python3 x.py; cat $(echo a)"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Facts.(BashCall); !ok || !p.TellAll || len(p.Effects) == 0 {
		t.Fatalf("hook Bash plan: %+v", p)
	}
	for _, e := range p.Effects {
		if e.Confined {
			t.Errorf("with wall = off the hook's Bash is not walled, but %+v is confined", e)
		}
		if _, ok := e.Fact.(BashPart); !ok {
			t.Errorf("%+v carries no BashPart", e)
		}
	}
	// after the call, a tool that wrote a file plans a read of it
	s.Hook.After = true
	p, err = s.Plan("Write", map[string]any{"file_path": root + "/notes/a.md"})
	if err != nil || len(p.Effects) != 1 || p.Effects[0].Op != zones.OpRead || p.Effects[0].Path.String() != "notes/a.md" {
		t.Errorf("after Write: %+v %v", p, err)
	}
}

// TestHookScopeRule: foreign tools are the rule's; allow matches names and
// prefixes; Claude Code's built-ins are never foreign.
func TestHookScopeRule(t *testing.T) {
	s, root := realVault(t)
	s.Hook = &HookCall{Cwd: root, ServerName: "vault"}
	rule := HookScopeRule(config.Hook{ServerName: "vault", Allow: []string{"Todo*", "WebSearch"}})
	for tool, allowed := range map[string]bool{
		"TodoWrite": true, "WebSearch": true, "mcp__vault__read": true,
		"WebFetch": false, "mcp__other__x": false, "Tod": false,
	} {
		p, err := s.Plan(tool, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		_, foreign := p.Facts.(ForeignTool)
		d := rule.Check(&policy.ToolCall{Tool: tool, Facts: p.Facts, Lang: "en"})
		if (d == nil) != allowed || !foreign || p.Forwarded != (tool == "mcp__vault__read") {
			t.Errorf("%s: deny %v, facts %+v, forwarded %v", tool, d, p.Facts, p.Forwarded)
		}
	}
	if got := JudgedDespiteAllow([]string{"B*", "Edit", "TodoWrite"}); !slices.Equal(got, []string{"Edit", "Bash"}) {
		t.Errorf("JudgedDespiteAllow: %v", got)
	}
	if got := JudgedDespiteAllow([]string{"*"}); len(got) != len(claude.Named(claude.Judged))+len(claude.Named(claude.Refused)) {
		t.Errorf(`JudgedDespiteAllow("*"): %v`, got)
	}
}
