package rules

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// CostLimit bounds the work of one evaluation (CEL's cost units, about
// one per step and per element a list function visits): far above any
// rule over one call, low enough that a runaway comprehension stops in
// milliseconds, and denies.
const CostLimit = 1_000_000

// Variables are the names an expression may use, with their CEL types,
// in the order docs/config.md lists them.
var Variables = []struct {
	Name string
	Type *cel.Type
	Doc  string
}{
	{"call.tool", cel.StringType, "the tool's name (the vault's, or Claude Code's through the hook)"},
	{"call.args", cel.MapType(cel.StringType, cel.DynType), "the call's arguments as the client sent them"},
	{"call.via", cel.StringType, "stdio, http, hook or check"},
	{"call.agent", cel.StringType, "the agent's name (default for the top level)"},
	{"effect.op", cel.StringType, "read, create, modify, delete, move-out, move-in, link, exec"},
	{"effect.path", cel.StringType, "normalised, vault-relative (absolute outside the vault; \"\" when unknown)"},
	{"effect.zone", cel.StringType, "the path's zone kind (edit, write, …; \"\" when unknown)"},
	{"effect.command", cel.StringType, "for a bash effect, the command that causes it; \"\" otherwise"},
	{"session.read", cel.ListType(cel.StringType), "the paths read in this session"},
	{"session.changed", cel.ListType(cel.StringType), "the paths created, modified, deleted, moved or linked"},
	{"session.count", cel.MapType(cel.StringType, cel.IntType), "allowed effects so far, by op (every op is a key)"},
	{"session.calls", cel.IntType, "allowed calls so far"},
	{"session.started", cel.TimestampType, "the session's first call"},
	{"now", cel.TimestampType, "the time of the call"},
}

// env is built once, on the first rule to compile.
var env = sync.OnceValues(func() (*cel.Env, error) {
	opts := []cel.EnvOption{ext.Strings()}
	for _, v := range Variables {
		opts = append(opts, cel.Variable(v.Name, v.Type))
	}
	return cel.NewEnv(opts...)
})

// Options are what a compiled rule needs from its caller.
type Options struct {
	// Command is effect.command of an effect: the bash tool's planner
	// knows it (tools.EffectCommand); nil gives "".
	Command func(*policy.Effect) string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Rule is one compiled [[rules.deny]] rule.
type Rule struct {
	Decl    *config.DenyRule
	ast     *cel.Ast
	program func() (cel.Program, error) // planned once, when first needed
	opt     Options
}

// Compile compiles one declared rule. The error is an *Error naming the
// rule, and where its text is, the file's line and column.
func Compile(d *config.DenyRule, opt Options) (*Rule, error) {
	r, _, err := check(d, opt)
	if err != nil {
		return nil, err
	}
	if _, err := r.program(); err != nil {
		return nil, &Error{Rule: d, Line: 1, Col: 1, Msg: err.Error()}
	}
	return r, nil
}

// check parses and type-checks one rule; its program is planned when
// first needed (a set evaluates its rules together, and one alone only
// when the set's list fails). It returns the parsed tree too.
func check(d *config.DenyRule, opt Options) (*Rule, *cel.Ast, error) {
	return checkParsed(d, opt, nil)
}

// checkParsed is check with the rule's tree as a parse kept from an
// earlier process (parseCache), when kept is not nil. The tree is
// type-checked like a fresh parse; one that fails is parsed and checked
// again from the text, so that a rule's error is always its text's.
func checkParsed(d *config.DenyRule, opt Options, kept *cel.Ast) (*Rule, *cel.Ast, error) {
	e, err := env()
	if err != nil {
		return nil, nil, fmt.Errorf("CEL environment: %w", err)
	}
	parsed := kept
	var iss *cel.Issues
	if parsed == nil {
		if parsed, iss = e.Parse(d.When); iss != nil && iss.Err() != nil {
			return nil, nil, compileError(d, iss.Errors())
		}
	}
	ast, iss := e.Check(parsed)
	if iss != nil && iss.Err() != nil {
		if kept != nil {
			return checkParsed(d, opt, nil)
		}
		return nil, nil, compileError(d, iss.Errors())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) {
		if kept != nil {
			return checkParsed(d, opt, nil)
		}
		return nil, nil, &Error{Rule: d, Line: 1, Col: 1, Msg: fmt.Sprintf("when is of type %s, not bool: it must say true (deny) or false", t)}
	}
	r := &Rule{Decl: d, ast: ast, opt: opt}
	r.program = sync.OnceValues(func() (cel.Program, error) {
		return e.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	})
	return r, parsed, nil
}

// CompileAll compiles an agent's rules in order, stopping at the first
// error.
func CompileAll(decl []config.DenyRule, opt Options) ([]*Rule, error) {
	out := make([]*Rule, 0, len(decl))
	for i := range decl {
		r, err := Compile(&decl[i], opt)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Policy is the rule as a link of the chain.
func (r *Rule) Policy() policy.Rule {
	return policy.Rule{Name: r.Decl.Name, Check: r.Check}
}

// Check judges call: a deny, with the rule's reason in the call's
// language, if the expression is true for any effect (or, for a call with
// no effects, for the call alone, whose effect.* are all ""). An error
// or a cost overrun denies too.
func (r *Rule) Check(c *policy.ToolCall) *policy.Deny {
	now := time.Now()
	if r.opt.Now != nil {
		now = r.opt.Now()
	}
	var st *policy.State
	if c.Session != nil {
		st = c.Session.State
	}
	in := &input{call: c, command: r.opt.Command, now: now, tally: policy.SessionTally(st)}
	return r.judge(in)
}

func (r *Rule) judge(in *input) *policy.Deny {
	e, err := r.match(in)
	var shown *policy.Effect
	if e != &noEffect {
		shown = e
	}
	switch {
	case err != nil:
		return &policy.Deny{Rule: r.Decl.Name, Effect: shown, Reason: say.RuleEvalFailed{Rule: r.Decl.Name, Problem: problem(err)}.Text(in.call.Lang)}
	case e != nil:
		return &policy.Deny{Rule: r.Decl.Name, Effect: shown, Reason: r.Decl.ReasonIn(string(in.call.Lang))}
	}
	return nil
}

// match returns the first effect the expression is true for, or the one
// it failed on with the error.
func (r *Rule) match(in *input) (*policy.Effect, error) {
	c := in.call
	if len(c.Effects) == 0 {
		in.effect, in.at = &noEffect, 0
		ok, err := r.eval(in)
		if ok || err != nil {
			return in.effect, err
		}
		return nil, nil
	}
	for i := range c.Effects {
		in.effect, in.at = &c.Effects[i], i
		if ok, err := r.eval(in); ok || err != nil {
			return in.effect, err
		}
	}
	return nil, nil
}

func (r *Rule) eval(in *input) (bool, error) {
	prg, err := r.program()
	if err != nil {
		return false, err
	}
	out, _, err := prg.Eval(in)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("gave %v, not a bool", out)
	}
	return b, nil
}

func problem(err error) string {
	var cancel interpreter.EvalCancelledError
	if errors.As(err, &cancel) && cancel.Cause == interpreter.CostLimitExceeded {
		return fmt.Sprintf("it ran past its cost limit of %d", CostLimit)
	}
	return err.Error()
}

// noEffect is the effect a call with none is judged with: every
// effect.* is "".
var noEffect policy.Effect

// input is what an expression sees: it resolves each variable only when
// the expression asks for it, and each only once per call (effect.* once
// per effect), so a rule that reads call.tool alone costs nothing for
// the session, and twenty rules that read effect.path box it once.
type input struct {
	call    *policy.ToolCall
	effect  *policy.Effect
	command func(*policy.Effect) string
	now     time.Time
	tally   policy.Tally

	// built once per call
	tool, via, agent, args, read, changed, calls, started, clock ref.Val
	// at is the index in call.Effects of the effect being judged: the
	// call's own effects before it count for session.count, so a call of
	// many effects is held to a limit as that many calls would be. count
	// is built for countAt.
	at, countAt int
	count       ref.Val
	// built once per effect: seen is the effect they are of
	seen                    *policy.Effect
	op, path, zone, program ref.Val
}

var _ interpreter.Activation = (*input)(nil)

func (in *input) Parent() interpreter.Activation { return nil }

// opNames are the ops' names as CEL values, boxed once.
var opNames = func() map[zones.Op]ref.Val {
	m := map[zones.Op]ref.Val{}
	for op := zones.Op(0); op.String() != "unknown"; op++ {
		m[op] = types.String(op.String())
	}
	return m
}()

var empty ref.Val = types.String("")

func str(v *ref.Val, s func() string) ref.Val {
	if *v == nil {
		if x := s(); x == "" {
			*v = empty
		} else {
			*v = types.String(x)
		}
	}
	return *v
}

func (in *input) ResolveName(name string) (any, bool) {
	c := in.call
	if e := in.effect; e != in.seen {
		in.seen, in.op, in.path, in.zone, in.program = e, nil, nil, nil, nil
	}
	switch name {
	case "call.tool":
		return str(&in.tool, func() string { return c.Tool }), true
	case "call.args":
		if in.args == nil {
			args := c.Args
			if args == nil {
				args = map[string]any{}
			}
			in.args = types.NewStringInterfaceMap(types.DefaultTypeAdapter, args)
		}
		return in.args, true
	case "call.via":
		return str(&in.via, func() string { return c.Via }), true
	case "call.agent":
		return str(&in.agent, func() string {
			if c.Session == nil {
				return ""
			}
			return c.Session.Agent
		}), true
	case "effect.op":
		if in.op == nil {
			in.op = empty
			if v, ok := opNames[in.effect.Op]; ok && in.effect != &noEffect {
				in.op = v
			}
		}
		return in.op, true
	case "effect.path":
		return str(&in.path, func() string {
			if e := in.effect; !e.Unknown && e != &noEffect {
				return e.Path.String()
			}
			return ""
		}), true
	case "effect.zone":
		return str(&in.zone, func() string {
			if e := in.effect; !e.Unknown && !e.Path.IsZero() && e.Op != zones.OpExec && e != &noEffect {
				return e.Zone.String()
			}
			return ""
		}), true
	case "effect.command":
		return str(&in.program, func() string {
			if in.command == nil || in.effect == &noEffect {
				return ""
			}
			return in.command(in.effect)
		}), true
	case "session.read":
		if in.read == nil {
			in.read = types.NewStringList(types.DefaultTypeAdapter, in.tally.Read)
		}
		return in.read, true
	case "session.changed":
		if in.changed == nil {
			in.changed = types.NewStringList(types.DefaultTypeAdapter, in.tally.Changed)
		}
		return in.changed, true
	case "session.count":
		if in.count == nil || in.countAt != in.at {
			m := make(map[string]int64, len(opNames))
			for op := range opNames {
				m[op.String()] = int64(in.tally.Count[op.String()])
			}
			for i := 0; i < in.at && i < len(c.Effects); i++ {
				m[c.Effects[i].Op.String()]++
			}
			in.count, in.countAt = types.DefaultTypeAdapter.NativeToValue(m), in.at
		}
		return in.count, true
	case "session.calls":
		if in.calls == nil {
			in.calls = types.Int(in.tally.Calls)
		}
		return in.calls, true
	case "session.started":
		if in.started == nil {
			s := in.tally.Started
			if s.IsZero() {
				s = in.now
			}
			in.started = types.Timestamp{Time: s}
		}
		return in.started, true
	case "now":
		if in.clock == nil {
			in.clock = types.Timestamp{Time: in.now}
		}
		return in.clock, true
	}
	return nil, false
}

// Error is a rule that can't be used: it names the rule and where in the
// config file the fault is.
type Error struct {
	Rule *config.DenyRule
	// Line and Col are in the expression (from 1), or for an example its
	// header's line in the file with Col 0.
	Line, Col int
	Msg       string
	Example   *config.Example // the example that failed, if that is the fault
}

func (e *Error) Error() string {
	var b strings.Builder
	d := e.Rule
	line, col := e.fileLine()
	if d.File != "" {
		b.WriteString(d.File)
		if line > 0 {
			fmt.Fprintf(&b, ":%d", line)
			if col > 0 {
				fmt.Fprintf(&b, ":%d", col)
			}
		}
		b.WriteString(": ")
	}
	key := d.Key
	if e.Example != nil {
		key = e.Example.Key
	}
	fmt.Fprintf(&b, "%s: rule %q: ", key, d.Name)
	if e.Example == nil {
		fmt.Fprintf(&b, "when, line %d, column %d: ", e.Line, e.Col)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// fileLine is the fault's place in the file, when the rule's is known.
func (e *Error) fileLine() (line, col int) {
	if e.Example != nil {
		return e.Example.Line, 0
	}
	p := e.Rule.Pos
	if p.Line == 0 {
		return 0, 0
	}
	if e.Line <= 1 {
		return p.Line, p.Col + e.Col - 1
	}
	return p.Line + e.Line - 1, e.Col
}

func compileError(d *config.DenyRule, errs []*cel.Error) error {
	if len(errs) == 0 {
		return &Error{Rule: d, Line: 1, Col: 1, Msg: "does not compile"}
	}
	first := errs[0]
	line, col := first.Location.Line(), first.Location.Column()+1
	if line < 1 {
		line, col = 1, 1
	}
	msg := first.Message
	if len(errs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(errs)-1)
	}
	return &Error{Rule: d, Line: line, Col: col, Msg: msg}
}
