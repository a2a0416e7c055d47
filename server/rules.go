package server

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/tools"
)

// RuleCompiler turns an agent's [[rules.deny]] into links of its chain,
// checking each rule's examples with plan; package rules (CEL) is one.
// The server takes it as a value so that a binary that must start fast
// and has no rules to run (vaultgate-hook) links no CEL.
type RuleCompiler = func(decl []config.DenyRule, command func(*policy.Effect) string,
	plan func(*config.Example) (*policy.ToolCall, error)) ([]policy.Rule, error)

// ErrNoRuleCompiler is an agent with [[rules.deny]] in a binary that can't
// evaluate them: it does not start rather than run without them.
var ErrNoRuleCompiler = errors.New("this binary can't evaluate the config's [[rules.deny]] (CEL)")

// CompileRules compiles the [[rules.deny]] rules of the named agents (all
// of them when none is named) and checks their examples against the vault,
// once, so that no call pays for it. An agent without rules builds no CEL
// environment.
func (g *Gate) CompileRules(compile RuleCompiler, agents ...string) error {
	if len(agents) == 0 {
		for name := range g.cfg.Agents {
			agents = append(agents, name)
		}
	}
	for _, name := range agents {
		p := g.cfg.Agents[name]
		if p == nil || len(p.Rules) == 0 {
			continue
		}
		if compile == nil {
			return fmt.Errorf("agent %s: %w", name, ErrNoRuleCompiler)
		}
		chain, err := compile(p.Rules, tools.EffectCommand, g.ExamplePlanner(p))
		if err != nil {
			return err
		}
		if g.config == nil {
			g.config = map[*config.Policy][]policy.Rule{}
		}
		g.config[p] = chain
	}
	return nil
}

// configRules is the agent's compiled config rules; a rule the gate did
// not compile is one that refuses every call, never one skipped.
func (g *Gate) configRules(p *config.Policy) []policy.Rule {
	if len(p.Rules) == 0 {
		return nil
	}
	if c, ok := g.config[p]; ok {
		return c
	}
	out := make([]policy.Rule, len(p.Rules))
	for i, d := range p.Rules {
		name := d.Name
		out[i] = policy.Rule{Name: name, Check: func(c *policy.ToolCall) *policy.Deny {
			return &policy.Deny{Reason: say.RuleNotCompiled{Rule: name}.Text(c.Lang)}
		}}
	}
	return out
}

// ExamplePlanner plans an example's call as the agent's call would be, in
// a fresh session of its own, without running anything.
func (g *Gate) ExamplePlanner(p *config.Policy) func(*config.Example) (*policy.ToolCall, error) {
	return func(ex *config.Example) (*policy.ToolCall, error) {
		c := Caller{
			Via:     cmp.Or(ex.Via, ViaCheck),
			Session: &policy.Session{ID: "example", Agent: p.Name, State: policy.NewState()},
			Policy:  p,
		}
		if c.Via == ViaHook {
			c.Hook = &tools.HookCall{Cwd: g.cfg.Vault, ServerName: p.Hook.ServerName}
		}
		set := g.ToolSet(c)
		if _, ok := set.Lookup(ex.Tool); !ok {
			return nil, &tools.UnknownToolError{Tool: ex.Tool, Lang: p.Lang}
		}
		plan, err := set.Plan(ex.Tool, ex.Args)
		if err != nil {
			return nil, err
		}
		return &policy.ToolCall{
			Tool: ex.Tool, Args: ex.Args, Effects: plan.Effects, Session: c.Session, Via: c.Via,
			Zones: p.Zones, Lang: p.Lang, TellAll: plan.TellAll, Facts: plan.Facts,
		}, nil
	}
}
