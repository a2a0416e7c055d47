package rules

import (
	"fmt"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// benchRules are 20 rules of the kinds docs/config.md shows, none of which
// denies the benchmark's call, so that each runs on every effect.
func benchRules(b *testing.B) []policy.Rule {
	b.Helper()
	whens := []string{
		`effect.op in ["modify", "delete", "move-out"] && effect.path.startsWith("drafts%d/")`,
		`effect.op == "delete" && session.count["delete"] >= %d00`,
		`call.tool == "bash%d" && now.getHours() >= 22`,
		`effect.op in ["create", "modify"] && effect.path.startsWith("projects%d/") && !(effect.path + "/README.md" in session.read)`,
		`effect.zone == "protected" && effect.command == "rm%d"`,
	}
	var decl []config.DenyRule
	for i := range 20 {
		decl = append(decl, config.DenyRule{Name: fmt.Sprintf("r%d", i), When: fmt.Sprintf(whens[i%len(whens)], i), Reason: "no"})
	}
	set, err := CompileSet(decl, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return []policy.Rule{set.Policy()}
}

func benchCall(b *testing.B) *policy.ToolCall {
	tab, err := zones.New("/v", []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "inbox", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		b.Fatal(err)
	}
	effects := []policy.Effect{
		{Op: zones.OpRead, Path: at("notes/a.md")},
		{Op: zones.OpRead, Path: at("notes/b.md")},
		{Op: zones.OpCreate, Path: at("inbox/c.md")},
		{Op: zones.OpMoveOut, Path: at("inbox/d.md")},
		{Op: zones.OpMoveIn, Path: at("notes/d.md"), Source: at("inbox/d.md")},
	}
	policy.Zoned(tab, effects)
	st := policy.NewState()
	policy.Count(st, effects[:2], fixedNow)
	return &policy.ToolCall{Tool: "move", Args: map[string]any{"source": "inbox/d.md", "destination": "notes/d.md"},
		Effects: effects, Zones: tab, Via: "stdio", Session: &policy.Session{ID: "s", Agent: "default", State: st}}
}

// BenchmarkChainFloor is the built-in chain alone on a 5-effect call: the
// floor the CEL rules are measured against.
func BenchmarkChainFloor(b *testing.B) {
	call, chain := benchCall(b), policy.Builtin(true)
	b.ReportAllocs()
	for b.Loop() {
		if d := chain.Judge(call); d != nil {
			b.Fatal(d)
		}
	}
}

// BenchmarkChain20CEL is the same chain with 20 compiled CEL rules after
// it, each evaluated on each of the 5 effects (100 evaluations).
func BenchmarkChain20CEL(b *testing.B) {
	call := benchCall(b)
	chain := append(policy.Builtin(true), benchRules(b)...)
	b.ReportAllocs()
	for b.Loop() {
		if d := chain.Judge(call); d != nil {
			b.Fatal(d)
		}
	}
}

// BenchmarkCompileSet20 is what a process pays once, at start-up, for the
// 20 rules of testdata/rules20.toml (the hook pays it on every call).
func BenchmarkCompileSet20(b *testing.B) {
	c, err := config.Load("../testdata/rules20.toml")
	if err != nil {
		b.Fatal(err)
	}
	decl := c.Policy("default").Rules
	for b.Loop() {
		if _, err := CompileSet(decl, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
