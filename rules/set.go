package rules

import (
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// Set is an agent's compiled rules as one link of the chain. Each rule is
// compiled on its own (for its errors and for the fallback below), and all
// of them together as one list expression, so that a call is one
// evaluation per effect rather than one per rule and effect: what an
// evaluation costs to set up is paid once.
//
// The answer is the same as running the rules one by one, in order: the
// first rule (in the order written) that is true for any effect denies,
// for the first such effect. When the list fails (a rule errs, or the
// list runs past its cost limit) the rules are run one by one, so that
// the failing rule is found and named, and its own limit applies.
type Set struct {
	Rules []*Rule
	all   cel.Program
	opt   Options
}

// CompileSet compiles an agent's rules, in order, stopping at the first
// error.
func CompileSet(decl []config.DenyRule, opt Options) (*Set, error) {
	s := &Set{opt: opt}
	whens := make([]string, 0, len(decl))
	for i := range decl {
		r, err := Compile(&decl[i], opt)
		if err != nil {
			return nil, err
		}
		s.Rules = append(s.Rules, r)
		whens = append(whens, "("+decl[i].When+")")
	}
	if len(s.Rules) < 2 {
		return s, nil
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	// Each part type-checked alone as bool: the list can't fail to.
	ast, iss := e.Compile("[" + strings.Join(whens, ",\n") + "]")
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("the rules together: %w", iss.Err())
	}
	limit := uint64(CostLimit) * uint64(len(s.Rules))
	if s.all, err = e.Program(ast, cel.CostLimit(limit), cel.EvalOptions(cel.OptOptimize)); err != nil {
		return nil, err
	}
	return s, nil
}

// Policy is the set as one link of the chain. Its deny names the rule.
func (s *Set) Policy() policy.Rule {
	return policy.Rule{Name: "rules.deny", Check: s.Check}
}

// Check judges call by every rule of the set, as Rule.Check would one
// after another.
func (s *Set) Check(c *policy.ToolCall) *policy.Deny {
	now := time.Now()
	if s.opt.Now != nil {
		now = s.opt.Now()
	}
	var st *policy.State
	if c.Session != nil {
		st = c.Session.State
	}
	in := &input{call: c, command: s.opt.Command, now: now, tally: policy.SessionTally(st)}
	if s.all == nil {
		for _, r := range s.Rules {
			if d := r.judge(in); d != nil {
				return d
			}
		}
		return nil
	}
	effects := c.Effects
	var none [1]policy.Effect
	if len(effects) == 0 {
		effects = none[:]
	}
	best, at := len(s.Rules), -1
	for k := range effects {
		if len(c.Effects) == 0 {
			in.effect = &noEffect
		} else {
			in.effect = &effects[k]
		}
		out, _, err := s.all.Eval(in)
		list, ok := out.(traits.Lister)
		if err != nil || !ok {
			return s.oneByOne(in)
		}
		for i := 0; i < best; i++ {
			if list.Get(types.Int(i)) == types.True {
				best, at = i, k
				break
			}
		}
	}
	if at < 0 {
		return nil
	}
	r := s.Rules[best]
	d := &policy.Deny{Rule: r.Decl.Name, Reason: r.Decl.ReasonIn(string(c.Lang))}
	if len(c.Effects) > 0 {
		d.Effect = &c.Effects[at]
	}
	return d
}

func (s *Set) oneByOne(in *input) *policy.Deny {
	for _, r := range s.Rules {
		if d := r.judge(in); d != nil {
			return d
		}
	}
	return nil
}
