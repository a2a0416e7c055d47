package rules

import (
	"fmt"
	"time"

	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/traits"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// Set is an agent's compiled rules as one link of the chain. Each rule is
// compiled on its own (for its errors and for the fallback below), and
// the rules together as list expressions, so that a call is one or two
// evaluations per effect rather than one per rule and effect: what an
// evaluation costs to set up is paid once.
//
// CEL's cost tracking is most of an evaluation's price, and most rules
// don't need it: a rule whose cost CEL's static estimate bounds within
// CostLimit, given the sizes the variables can have (short strings, eight
// ops), goes in the untracked list; any other (one that reads call.args
// or walks session.read, whose sizes are unbounded) goes in the tracked
// one. A call whose strings are longer than the estimate assumed is
// judged rule by rule, tracked.
//
// The answer is the same as running the rules one by one, in order: the
// first rule (in the order written) that is true for any effect denies,
// for the first such effect. When a list fails (a rule errs, or runs past
// the limit) the rules are run one by one, so that the failing rule is
// found and named, and its own limit applies.
type Set struct {
	Rules []*Rule
	lists []ruleList
	opt   Options
}

// ruleList is some of a set's rules as one list expression.
type ruleList struct {
	prg   cel.Program
	index []int // the rule of each element
}

// maxBounded is the longest string the static estimate assumes for a
// variable (a path, a command word, a tool's name).
const maxBounded = 4096

// CompileSet compiles an agent's rules, in order, stopping at the first
// error.
func CompileSet(decl []config.DenyRule, opt Options) (*Set, error) {
	return compileSet(decl, opt, nil)
}

// compileSet is CompileSet taking the rules' parses from c, where it has
// them, and giving it the ones it had not.
func compileSet(decl []config.DenyRule, opt Options, c *parseCache) (*Set, error) {
	s := &Set{opt: opt}
	e, err := env()
	if err != nil {
		return nil, err
	}
	var bounded, tracked []int
	parsed := make([]celast.Expr, len(decl))
	for i := range decl {
		r, p, err := checkParsed(&decl[i], opt, c.tree(i))
		if err != nil {
			return nil, err
		}
		c.keep(i, p)
		parsed[i] = p.NativeRep().Expr()
		s.Rules = append(s.Rules, r)
		if est, err := e.EstimateCost(r.ast, sizes{}); err == nil && est.Max <= CostLimit {
			bounded = append(bounded, i)
		} else {
			tracked = append(tracked, i)
		}
	}
	for _, group := range []struct {
		index []int
		track bool
	}{{bounded, false}, {tracked, true}} {
		if len(group.index) == 0 {
			continue
		}
		ast, err := list(e, parsed, group.index)
		if err != nil {
			return nil, fmt.Errorf("the rules together: %w", err)
		}
		opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
		if group.track {
			opts = append(opts, cel.CostLimit(uint64(CostLimit)*uint64(len(group.index))))
		}
		prg, err := e.Program(ast, opts...)
		if err != nil {
			return nil, err
		}
		s.lists = append(s.lists, ruleList{prg: prg, index: group.index})
	}
	return s, nil
}

// sizes are what the static estimate may assume of the variables.
type sizes struct{}

func (sizes) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	p := n.Path()
	if len(p) != 1 {
		return nil
	}
	switch p[0] {
	case "call.tool", "call.via", "call.agent", "effect.op", "effect.path", "effect.zone", "effect.command":
		return &cost.SizeEstimate{Min: 0, Max: maxBounded}
	case "session.count":
		return &cost.SizeEstimate{Min: uint64(len(opNames)), Max: uint64(len(opNames))}
	}
	return nil
}

func (sizes) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
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
	if !s.withinBounds(c) {
		return s.oneByOne(in)
	}
	effects := c.Effects
	var none [1]policy.Effect
	if len(effects) == 0 {
		effects = none[:]
	}
	best, at := len(s.Rules), -1
	for k := range effects {
		if len(c.Effects) == 0 {
			in.effect, in.at = &noEffect, 0
		} else {
			in.effect, in.at = &effects[k], k
		}
		for _, l := range s.lists {
			out, _, err := l.prg.Eval(in)
			list, ok := out.(traits.Lister)
			if err != nil || !ok {
				return s.oneByOne(in)
			}
			for j, i := range l.index {
				if i >= best {
					break
				}
				if list.Get(types.Int(j)) == types.True {
					best, at = i, k
					break
				}
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

// withinBounds reports whether the call's strings are as short as the
// static estimate assumed.
func (s *Set) withinBounds(c *policy.ToolCall) bool {
	if len(c.Tool) > maxBounded || len(c.Via) > maxBounded || c.Session != nil && len(c.Session.Agent) > maxBounded {
		return false
	}
	for i := range c.Effects {
		e := &c.Effects[i]
		if len(e.Path.String()) > maxBounded || s.opt.Command != nil && len(s.opt.Command(e)) > maxBounded {
			return false
		}
	}
	return true
}

func (s *Set) oneByOne(in *input) *policy.Deny {
	for _, r := range s.Rules {
		if d := r.judge(in); d != nil {
			return d
		}
	}
	return nil
}

// list is the rules' parsed trees (copies, renumbered so that no two
// nodes share an id) as one list expression, type-checked. Each was
// checked alone as a bool, so the list can't fail to check; it is built
// from the trees rather than from the text, since parsing is the dearest
// part of compiling and each rule is parsed once.
func list(e *cel.Env, parsed []celast.Expr, index []int) (*cel.Ast, error) {
	fac := celast.NewExprFactory()
	next := int64(1)
	elems := make([]celast.Expr, 0, len(index))
	for _, i := range index {
		x := fac.CopyExpr(parsed[i])
		x.RenumberIDs(func(int64) int64 { next++; return next })
		elems = append(elems, x)
	}
	pb, err := celast.ExprToProto(fac.NewList(1, elems, nil))
	if err != nil {
		return nil, err
	}
	ast, iss := e.Check(cel.ParsedExprToAst(&exprpb.ParsedExpr{Expr: pb}))
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	return ast, nil
}
