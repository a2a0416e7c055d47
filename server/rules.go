package server

import (
	"cmp"
	"slices"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/rules"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/tools"
)

// compileRules compiles the [[rules.deny]] rules of the named agents (all
// of them when none is named) and checks their examples against the
// vault, once, so that no call pays for it. An agent without rules builds
// no CEL environment. The rules' parsed trees are kept in the state
// folder between processes (rules.CachedChain): a hook or exec process
// reuses the parse of an unchanged rule, and decides exactly as a server.
func (g *Gate) compileRules(agents ...string) error {
	if len(agents) == 0 {
		for name := range g.cfg.Agents {
			agents = append(agents, name)
		}
		slices.Sort(agents) // the first error is the same every time
	}
	compile := rules.CachedChain(g.cfg.StateDir)
	var errs []error
	for _, name := range agents {
		p := g.cfg.Agents[name]
		if p == nil || len(p.Rules) == 0 {
			continue
		}
		chain, err := compile(p.Rules, tools.EffectCommand, g.ExamplePlanner(p))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if g.config == nil {
			g.config = map[*config.Policy][]policy.Rule{}
		}
		g.config[p] = chain
	}
	if len(errs) > 0 {
		return errs[0] // a *rules.Error, which names the file and line
	}
	return nil
}

// RuleError is why an agent's [[rules.deny]] did not compile in a dry
// run's gate (OpenDryRun), or nil: the other roles refuse to open then.
func (g *Gate) RuleError() error { return g.ruleErr }

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
			Via:     cmp.Or(audit.Via(ex.Via), ViaCheck),
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
			Tool: ex.Tool, Args: ex.Args, Effects: plan.Effects, Session: c.Session, Via: string(c.Via),
			Zones: p.Zones, Lang: p.Lang, TellAll: plan.TellAll, Facts: plan.Facts,
		}, nil
	}
}
