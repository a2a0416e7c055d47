package tools

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/shell"
	"github.com/vaultgate/vaultgate/zones"
)

// Plan is what a call would do, and how to do it once judged.
type Plan struct {
	Effects []policy.Effect
	// Facts is what the tool's own rule needs of the call (BashCall,
	// ForeignTool); it reaches the rule as policy.ToolCall.Facts.
	Facts any
	// TellAll asks the rules to name every refused effect (a command of
	// many parts), not only the first.
	TellAll bool
	// Forwarded says the call goes on to a gate that judges and records it
	// itself (the vault server, for the hook's mcp__<server_name>__ tools):
	// allowed here, it leaves no audit line of its own.
	Forwarded bool
	// HandsOn says the run only hands the call on to another call of the
	// same session that runs it (Claude Code's Bash, to vaultgate exec):
	// the session is counted for it there, once.
	HandsOn bool

	analysis *shell.Analysis // bash: what the command was found to do
	// Run does the work. It is called only if the chain allowed the plan.
	Run func(ctx context.Context) (*Result, error)
}

// RealJudged reports whether what the call really changes is judged after
// it has run (bash on the overlay, and Claude Code's Bash, which exec runs
// so): the session is counted for those real effects, not the predicted.
func (p *Plan) RealJudged() bool {
	bc, ok := p.Facts.(BashCall)
	return ok && bc.Overlay && bc.Refusal == nil
}

// Result is what a tool returns to the model.
type Result struct {
	Text       string
	Structured any      // optional structured content
	ExitCode   *int     // bash
	Wall       []string // bash: the layers that were up
	Failed     bool     // the call ran and failed (bash exiting non-zero)
	// bash: why it ended when not by itself, and its output (masked), for
	// the audit line's excerpt
	TimedOut       bool
	Signal         int
	Stdout, Stderr string

	// Real is what a bash call on the overlay really changed.
	Real []RealEffect
	// Pending holds Real's changes until the gate has judged them: it
	// then commits or refuses them (and Pending is nil again).
	Pending *Pending
	// NotApplied says why none of those changes reached the vault (in
	// the agent's language; also at the head of Text), "" when all did.
	NotApplied string
	// Refused is the chain's refusal of the real effects, when it was
	// the reason.
	Refused *policy.Deny
	// UpdatedInput is the hook's rewrite of an allowed Claude Code call:
	// the whole tool input Claude Code is to run instead (Bash, through
	// vaultgate exec).
	UpdatedInput map[string]any
}

// ArgError is a malformed call: a missing or mistyped argument. Such a call
// can't be judged at all, and is audited with decision "error". Its text is
// in Lang, the agent's language.
type ArgError struct {
	Tool, Arg string // Arg is "" when the arguments as a whole are wrong
	Problem   say.ArgProblem
	Lang      say.Lang
}

func (e *ArgError) Error() string {
	return say.BadArg{Tool: e.Tool, Arg: e.Arg, Problem: e.Problem}.Text(e.Lang)
}

// Param describes one argument, for the tool's input schema.
type Param struct {
	Name        string
	Type        string // "string", "integer", "boolean"
	Required    bool
	Description string
}

// Tool is one tool of a set: an MCP tool of the vault, or one of Claude
// Code's for the hook.
type Tool struct {
	Name        string
	Title       string
	Description string
	Params      []Param
	ReadOnly    bool // read, list, search: it changes nothing
	Destructive bool // it may delete or overwrite
	Idempotent  bool
	OpenWorld   bool // it may reach beyond the vault (bash with network)
	plan        func(s *Set, a args) (*Plan, error)
}

// Set is the tools of one vault for one agent.
type Set struct {
	Vault *Vault
	Zones *zones.Table
	Lang  say.Lang
	// Session state, for read_before_write bookkeeping after a run.
	State *policy.State
	// Bash is the agent's [bash] settings; nil or not enabled: no bash tool.
	Bash *config.Bash
	// Hook makes the set Claude Code's tools, for the hook, instead of the
	// vault's own; nil for the vault's.
	Hook *HookCall
	// Cwd is the folder bash runs in, absolute: a person's command run
	// from a folder of the vault (vaultgate exec); "" is the vault root.
	Cwd string
	// Environ is the environment of whoever asked for the call, which
	// [bash] env picks from: exec's, when a server runs exec's command
	// for it; nil is this process's own. Secrets always come from this
	// process's own, whose values the audit log masks.
	Environ []string
	// History keeps what the file tools change, before they change it;
	// nil keeps nothing. Call names the call for it.
	History history.Recorder
	Call    history.Meta
	CallID  string

	diskLayer bool // tests put a call's overlay layer on disk, as where tmpfs can't hold it
}

// Tools lists the set's tools in a fixed order. A hook set has a tool for
// any name besides (see Lookup).
func (s *Set) Tools() []Tool {
	if s.Hook != nil {
		return hookTools(s.Hook.After)
	}
	ts := fileTools(s.Lang)
	if s.Bash != nil && s.Bash.Enabled && sandbox.Supported {
		// The wall is probed once per process, at the first listing.
		overlay := s.Bash.Wall != config.WallOff && sandbox.ProbeWall(s.Vault.WallHelper).Layers.Overlay
		ts = append(ts, bashTool(s.Bash, s.Lang, overlay))
	}
	return ts
}

// Lookup finds a tool by name. In a hook set every name is a tool: one the
// hook does not judge by its effects is a foreign tool, which the
// hook_scope rule decides.
func (s *Set) Lookup(name string) (Tool, bool) {
	if s.Hook == nil && name != "bash" {
		if t, ok := fileToolByName(s.Lang, name); ok {
			return t, true // without building the whole list on every call
		}
	}
	for _, t := range s.Tools() {
		if t.Name == name {
			return t, true
		}
	}
	if s.Hook != nil {
		return foreignTool(name), true
	}
	return Tool{}, false
}

// fileToolsByLang holds each language's file tools by name, built once:
// their texts do not change while a process runs.
var fileToolsByLang sync.Map // say.Lang -> map[string]Tool

func fileToolByName(l say.Lang, name string) (Tool, bool) {
	m, ok := fileToolsByLang.Load(l)
	if !ok {
		byName := map[string]Tool{}
		for _, t := range fileTools(l) {
			byName[t.Name] = t
		}
		m, _ = fileToolsByLang.LoadOrStore(l, byName)
	}
	t, ok := m.(map[string]Tool)[name]
	return t, ok
}

// Rules are the tools' own rules, which the chain runs before the zones:
// each acts only on calls that carry its tool's Facts.
func Rules(p *config.Policy) []policy.Rule {
	return []policy.Rule{HookScopeRule(p.Hook), BashRule(p.Bash.Allow)}
}

// ErrUnknownTool is what an UnknownToolError is (errors.Is).
var ErrUnknownTool = errors.New("unknown tool")

// UnknownToolError is a call of a name no tool of the set has; its text is
// in Lang.
type UnknownToolError struct {
	Tool string
	Lang say.Lang
}

func (e *UnknownToolError) Error() string { return say.UnknownTool{Tool: e.Tool}.Text(e.Lang) }

// Is makes errors.Is(err, ErrUnknownTool) hold.
func (e *UnknownToolError) Is(target error) bool { return target == ErrUnknownTool }

// Plan reduces a call to effects (with zones) and a runner.
func (s *Set) Plan(name string, raw map[string]any) (*Plan, error) {
	t, ok := s.Lookup(name)
	if !ok {
		return nil, &UnknownToolError{Tool: name, Lang: s.Lang}
	}
	a := args{tool: name, m: raw, params: t.Params, lang: s.Lang}
	if err := a.check(s.Hook != nil); err != nil {
		return nil, err
	}
	p, err := t.plan(s, a)
	if err != nil {
		return nil, err
	}
	policy.Zoned(s.Zones, p.Effects)
	s.findCovered(p.Effects) // what a folder read meets of the name patterns (hookglob.go)
	return p, nil
}

// args reads a call's JSON arguments strictly: an unknown name or a wrong
// type is an error, never a guess.
type args struct {
	tool   string
	m      map[string]any
	params []Param
	lang   say.Lang // of the argument errors
}

// bad is the error of argument name having problem p.
func (a args) bad(name string, p say.ArgProblem) *ArgError {
	return &ArgError{Tool: a.tool, Arg: name, Problem: p, Lang: a.lang}
}

// check validates the arguments; lenient skips the unknown-name check
// (Claude Code's built-in tools carry fields of their own).
func (a args) check(lenient bool) error {
	names := make([]string, 0, len(a.m))
	for k := range a.m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if lenient {
			break
		}
		if !slices.ContainsFunc(a.params, func(p Param) bool { return p.Name == k }) {
			return a.bad(k, say.ArgUnknown{})
		}
	}
	for _, p := range a.params {
		v, ok := a.m[p.Name]
		if !ok || v == nil {
			if p.Required {
				return a.bad(p.Name, say.ArgRequired{})
			}
			continue
		}
		switch p.Type {
		case "string":
			if _, ok := v.(string); !ok {
				return a.bad(p.Name, say.ArgNotString{})
			}
		case "boolean":
			if _, ok := v.(bool); !ok {
				return a.bad(p.Name, say.ArgNotBool{})
			}
		case "integer":
			if _, ok := toInt(v); !ok {
				return a.bad(p.Name, say.ArgNotWhole{})
			}
		}
	}
	return nil
}

// toInt reads a whole number that fits an int32; ok is false for anything else.
func toInt(v any) (n int, ok bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case int:
		return x, true
	case int64:
		f = float64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return 0, false
		}
		f = float64(i)
	default:
		return 0, false
	}
	if f != math.Trunc(f) || f > math.MaxInt32 || f < math.MinInt32 {
		return 0, false
	}
	return int(f), true
}

func (a args) str(name string) string {
	s, _ := a.m[name].(string)
	return s
}

func (a args) has(name string) bool {
	v, ok := a.m[name]
	return ok && v != nil
}

func (a args) boolean(name string) bool {
	b, _ := a.m[name].(bool)
	return b
}

func (a args) integer(name string, def int) int {
	if !a.has(name) {
		return def
	}
	n, _ := toInt(a.m[name])
	return n
}

// path reads a path argument and normalises it against the vault.
func (s *Set) path(a args, name string) (zones.Path, error) {
	raw := a.str(name)
	p, err := zones.Normalize(s.Vault.Root, raw)
	if err != nil {
		return zones.Path{}, a.bad(name, pathProblem(err))
	}
	return p, nil
}

// pathProblem words why zones.Normalize refused a path argument.
func pathProblem(err error) say.ArgProblem {
	switch {
	case errors.Is(err, zones.ErrEmptyPath):
		return say.ArgEmptyPath{}
	case errors.Is(err, zones.ErrNULInPath):
		return say.ArgNUL{}
	}
	return say.ArgBadPath{Problem: err.Error()}
}
