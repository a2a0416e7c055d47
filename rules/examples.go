package rules

import (
	"fmt"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// Planner turns an example's call into the call the chain judges, its
// effects planned against the vault as a real call's are (the server's
// tool set does it; an example of a tool the agent lacks can't be
// planned, and fails).
type Planner = func(ex *config.Example) (*policy.ToolCall, error)

// CheckExamples judges each of the rule's examples by the rule alone: a
// deny example must be denied by it, an allow example not, and neither
// may make the expression fail. The first that does not hold is the
// error, naming the rule and the example's line.
func (r *Rule) CheckExamples(plan Planner) error {
	for i := range r.Decl.Examples {
		if err := r.CheckExample(&r.Decl.Examples[i], plan); err != nil {
			return err
		}
	}
	return nil
}

// CheckExample judges one example (one of the rule's own).
func (r *Rule) CheckExample(ex *config.Example, plan Planner) error {
	fail := func(format string, args ...any) error {
		return &Error{Rule: r.Decl, Example: ex, Msg: fmt.Sprintf(format, args...)}
	}
	call, err := plan(ex)
	if err != nil {
		return fail("the example's call %s can't be planned: %v", ex.Tool, err)
	}
	now := ex.Now
	if now.IsZero() {
		now = time.Now()
	}
	s := ex.Session
	in := &input{call: call, command: r.opt.Command, now: now, tally: policy.Tally{
		Read: s.Read, Changed: s.Changed, Count: s.Count, Calls: s.Calls, Started: s.Started,
	}}
	e, err := r.match(in)
	switch {
	case err != nil:
		return fail("the example's call %s makes the expression fail: %s", ex.Tool, problem(err))
	case ex.Deny && e == nil:
		return fail("the example's call %s is allowed, but the example says deny", ex.Tool)
	case !ex.Deny && e != nil:
		what := ""
		if e != &noEffect {
			what = fmt.Sprintf(" (on %s %s)", e.Op, e.Path)
		}
		return fail("the example's call %s is denied%s, but the example says allow", ex.Tool, what)
	}
	return nil
}

// Chain compiles an agent's rules, checks every example of each, and
// returns them as one link of the chain.
func Chain(decl []config.DenyRule, command func(*policy.Effect) string,
	plan func(*config.Example) (*policy.ToolCall, error)) ([]policy.Rule, error) {
	set, err := CompileSet(decl, Options{Command: command})
	if err != nil {
		return nil, err
	}
	for _, r := range set.Rules {
		if err := r.CheckExamples(plan); err != nil {
			return nil, err
		}
	}
	return []policy.Rule{set.Policy()}, nil
}
