package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/zones"
)

// Decisions, as the audit log spells them.
const (
	Allow = "allow"
	Deny  = "deny"
	Error = "error" // the call could not be judged at all
)

// Gate judges and runs calls for one vault.
type Gate struct {
	cfg   *config.Config
	vault *tools.Vault
	log   *audit.Writer    // nil: no call that asks to be recorded is let through
	keep  history.Recorder // nil: the file tools keep no history
	rules []policy.Rule    // library users' rules, after the built-in ones
	// config holds each agent's compiled [[rules.deny]] (CompileRules),
	// which run after the built-in rules and before the library users'.
	config map[*config.Policy][]policy.Rule

	// Calls that change files run one at a time, plan to run (see
	// lockVault).
	mutate sync.Mutex
}

// Options configure a Gate.
type Options struct {
	// Rules are appended to the built-in chain (hook_scope, bash, zones,
	// read_before_write) of every agent.
	Rules []policy.Rule
	// Audit receives one record per call. A gate without one can only
	// judge and run: a call whose Steps ask for a record is refused.
	Audit *audit.Writer
	// History keeps what the file tools change, before they change it.
	History history.Recorder
}

// NewGate returns a gate for cfg's vault, whose files the tools reach only
// through vault.Fs: a tools.NoFollowFs in production (see Open), an
// afero.MemMapFs in the cell tests.
func NewGate(cfg *config.Config, vault *tools.Vault, opt Options) *Gate {
	return &Gate{cfg: cfg, vault: vault, log: opt.Audit, rules: opt.Rules, keep: opt.History}
}

// Config returns the gate's configuration.
func (g *Gate) Config() *config.Config { return g.cfg }

// Caller is who makes a call and through what.
type Caller struct {
	Via     string // stdio, http, hook, check, run, exec
	Run     string // the id of the vaultgate run whose agent calls, for ViaRun
	Session *policy.Session
	Policy  *config.Policy
	// Hook is the Claude Code call around a hook call, whose tool is one
	// of Claude Code's; nil for the vault's own tools.
	Hook *tools.HookCall
	// Cwd is the folder of the vault a bash call runs from, absolute, for
	// a person's command run there (vaultgate exec); "" is the vault root.
	Cwd string
}

// Vias, as the audit log spells them.
const (
	ViaStdio = "stdio"
	ViaHTTP  = "http"
	ViaHook  = "hook"
	ViaCheck = "check"
	ViaRun   = "run"
	// ViaExec is vaultgate exec: a command run from a shell, Claude Code's
	// Bash as the hook rewrote it among them.
	ViaExec = "exec"
)

// Steps say how far Call takes a call once the chain has judged it.
type Steps struct {
	Run    bool // run the plan, if the chain allowed it
	Record bool // write the call's audit line
}

var (
	// Serve is an agent's call: judged, run and recorded (stdio, HTTP, the
	// hook, whose tools' runs only record what Claude Code does).
	Serve = Steps{Run: true, Record: true}
	// DryRun is check's: a person's question, judged only; nothing runs
	// and nothing is recorded.
	DryRun = Steps{}
)

// Outcome is everything a call came to. The entry point turns it into its
// own answer (an MCP result, hook JSON, check's printout).
type Outcome struct {
	ID       string
	Tool     string
	Decision string
	Deny     *policy.Deny // on deny
	Effects  []policy.Effect
	Result   *tools.Result // on allow and ok
	Err      error         // on error, or a failed run
	// Forwarded: allowed here, the call goes on to the vault server, which
	// judges and records it; this gate wrote no line for it.
	Forwarded bool
	Record    audit.Record
}

// Text is what the model reads.
func (o *Outcome) Text() string {
	switch {
	case o.Deny != nil:
		return o.Deny.Reason
	case o.Err != nil:
		return o.Err.Error()
	case o.Result != nil:
		return o.Result.Text
	}
	return ""
}

// IsError reports whether the MCP result is an error result.
func (o *Outcome) IsError() bool {
	return o.Decision != Allow || o.Err != nil || (o.Result != nil && o.Result.Failed)
}

// ToolSet returns the tools the caller's agent has.
func (g *Gate) ToolSet(c Caller) *tools.Set {
	s := &tools.Set{Vault: g.vault, Zones: c.Policy.Zones, Lang: c.Policy.Lang, Bash: &c.Policy.Bash, Hook: c.Hook, Cwd: c.Cwd}
	if c.Session != nil {
		s.State = c.Session.State
	}
	// What a call really did (bash on the overlay) is judged by the same
	// chain as what it was predicted to do: the zones and a library
	// user's rules alike.
	chain := g.Chain(c.Policy)
	s.Judge = func(call *policy.ToolCall) *policy.Deny {
		call.Session, call.Via, call.Zones, call.Lang = c.Session, c.Via, c.Policy.Zones, c.Policy.Lang
		return chain.Judge(call)
	}
	return s
}

// Chain returns the rule chain of an agent: the tools' own rules, each for
// its tool's calls, then the tool-blind ones, then the config's rules in
// the order written, then the library user's.
func (g *Gate) Chain(p *config.Policy) policy.Chain {
	c := policy.Chain(tools.Rules(p))
	c = append(c, policy.Builtin(p.ReadBeforeWrite)...)
	c = append(c, g.configRules(p)...)
	return append(c, g.rules...)
}

// chainFor is the chain a caller's call is judged by: its agent's, but
// without the config's rules for a hook's After event, which only
// records what Claude Code did once its PreToolUse was allowed: judged
// again on the counters that call itself raised, a rule could refuse the
// record (the read that read_before_write needs, a write's history).
func (g *Gate) chainFor(c Caller) policy.Chain {
	if c.Hook == nil || !c.Hook.After {
		return g.Chain(c.Policy)
	}
	chain := policy.Chain(tools.Rules(c.Policy))
	chain = append(chain, policy.Builtin(c.Policy.ReadBeforeWrite)...)
	return append(chain, g.rules...)
}

// Call plans, judges, and then runs and records one call as steps says.
// raw is the call's arguments as decoded JSON; anything but an object is
// malformed.
func (g *Gate) Call(ctx context.Context, c Caller, tool string, raw any, steps Steps) (out *Outcome) {
	start := time.Now()
	out = &Outcome{ID: audit.NewID(), Tool: tool}
	var lang say.Lang
	if c.Policy != nil {
		lang = c.Policy.Lang
	}
	args, argsOK := raw.(map[string]any)
	if raw == nil {
		args, argsOK = map[string]any{}, true
	}
	defer func() {
		if p := recover(); p != nil {
			// A bug in a planner or a tool must not let a call through, nor
			// leave it unrecorded.
			out.Decision, out.Deny, out.Result, out.Forwarded = Error, nil, nil, false
			out.Err = errors.New(say.InternalError{Tool: tool, Problem: fmt.Sprint(p)}.Text(lang))
			debug.PrintStack()
		}
		out.Record = g.record(c, out, args, time.Since(start))
		if steps.Record && !(out.Forwarded && out.Err == nil) {
			if err := g.write(&out.Record); err != nil {
				// Fail closed: a call the person can't see is a call the
				// model must not think succeeded.
				out.Err = errors.New(say.AuditFailed{Problem: err.Error()}.Text(lang))
				out.Result = nil
			}
		}
	}()
	if steps.Record && g.log == nil {
		out.Decision, out.Err = Error, errNoLog // nothing runs that can't be recorded
		return out
	}
	if !argsOK {
		out.Decision, out.Err = Error, &tools.ArgError{Tool: tool, Problem: say.ArgsNotObject{}, Lang: lang}
		return out
	}
	set := g.ToolSet(c)
	t, known := set.Lookup(tool)
	if !known {
		out.Decision, out.Err = Error, &tools.UnknownToolError{Tool: tool, Lang: lang}
		return out
	}
	if !t.ReadOnly && steps.Run {
		unlock, err := g.lockVault()
		if err != nil {
			// can't be serialised: refuse
			out.Decision, out.Err = Error, errors.New(say.VaultLockFailed{Problem: err.Error()}.Text(lang))
			return out
		}
		defer unlock()
	}
	// The history times a change once the call holds the vault lock:
	// calls that came at once (a client that sends them without waiting)
	// change the vault in the lock's order, not the order they started
	// in, and undo must walk back in the order they changed it.
	g.keepHistory(set, c, out.ID, tool, time.Now())
	plan, err := set.Plan(tool, args)
	if err != nil {
		out.Decision, out.Err = Error, err
		return out
	}
	out.Effects = plan.Effects
	call := &policy.ToolCall{
		Tool: tool, Args: args, Effects: plan.Effects, Session: c.Session, Via: c.Via,
		Zones: c.Policy.Zones, Lang: c.Policy.Lang, TellAll: plan.TellAll, Facts: plan.Facts,
	}
	if c.Session != nil && c.Session.State != nil {
		policy.Begin(c.Session.State, start)
	}
	if d := g.chainFor(c).Judge(call); d != nil {
		out.Decision, out.Deny = Deny, d
		return out
	}
	out.Decision, out.Forwarded = Allow, plan.Forwarded
	if !steps.Run {
		return out
	}
	if c.Session != nil && c.Session.State != nil && (c.Hook == nil || !c.Hook.After) {
		// What the session has been allowed, for the config's rules; a
		// hook call is counted once, before Claude Code runs it.
		policy.Count(c.Session.State, plan.Effects, start)
	}
	res, err := plan.Run(ctx)
	if err != nil {
		out.Err = err
		return out
	}
	out.Result = res
	return out
}

// keepHistory names the call for the history its file changes go to.
func (g *Gate) keepHistory(set *tools.Set, c Caller, id, tool string, start time.Time) {
	if g.keep == nil {
		return
	}
	m := history.Meta{Time: start, Tool: tool, Via: c.Via}
	if c.Session != nil {
		m.Session, m.Agent = c.Session.ID, c.Session.Agent
	}
	if m.Agent == "" && c.Policy != nil {
		m.Agent = c.Policy.Name
	}
	set.History, set.CallID, set.Call = g.keep, id, m
}

// errNoLog refuses a call that asks to be recorded by a gate with no log.
var errNoLog = errors.New("this gate has no audit log")

func (g *Gate) write(r *audit.Record) error {
	if g.log == nil {
		return errNoLog
	}
	return g.log.Write(r)
}

func (g *Gate) record(c Caller, o *Outcome, args map[string]any, d time.Duration) audit.Record {
	r := audit.Record{
		ID: o.ID, Via: c.Via, Run: c.Run, Tool: o.Tool, Decision: o.Decision,
		Args: redact(args), DurationMS: float64(d.Microseconds()) / 1000,
		Effects: make([]audit.Effect, 0, len(o.Effects)),
	}
	if c.Session != nil {
		r.Session, r.Agent = c.Session.ID, c.Session.Agent
	}
	if r.Agent == "" && c.Policy != nil {
		r.Agent = c.Policy.Name
	}
	if c.Hook != nil {
		r.ToolUseID = c.Hook.ToolUseID
		if c.Hook.After {
			r.Event = audit.EventAfter
		}
	}
	for _, e := range o.Effects {
		r.Effects = append(r.Effects, auditEffect(e))
	}
	if o.Result != nil {
		for _, e := range o.Result.Real {
			r.Real = append(r.Real, realEffect(e))
		}
	}
	switch {
	case o.Deny != nil:
		r.Rule, r.Reason = o.Deny.Rule, o.Deny.Reason
	case o.Decision == Error:
		r.Error = errText(o.Err)
	case o.Err != nil:
		r.Outcome, r.Error = "failed", errText(o.Err)
	case o.Result != nil:
		r.Outcome = "ok"
		if o.Result.Failed {
			r.Outcome = "failed"
		}
		r.ExitCode, r.Wall = o.Result.ExitCode, o.Result.Wall
		r.TimedOut, r.Signal = o.Result.TimedOut, o.Result.Signal
		r.Stdout, r.Stderr = audit.Excerpt(o.Result.Stdout), audit.Excerpt(o.Result.Stderr)
		if o.Result.NotApplied != "" {
			// the command ran; none of its changes reached the vault
			r.Outcome, r.Error = "failed", o.Result.NotApplied
			if d := o.Result.Refused; d != nil {
				r.Rule = d.Rule
			}
		}
	}
	return r
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func auditEffect(e policy.Effect) audit.Effect {
	a := audit.Effect{Op: e.Op.String(), Path: e.Path.String(), Zone: e.Zone.String()}
	switch {
	case e.Op == zones.OpExec:
		a.Path, a.Zone = e.Cause, "" // no path: what runs
	case e.Unknown:
		a.Path, a.Zone = "?", ""
	}
	if e.Subtree && a.Path != "" {
		a.Path += "/**"
	}
	return a
}

// realEffect is what the log keeps of a real effect: never the content,
// only its size and hash on either side.
func realEffect(e tools.RealEffect) audit.RealEffect {
	a := audit.RealEffect{
		Op: e.Op.String(), Path: e.Path.String(), Zone: e.Zone.String(), From: e.Source.String(),
		Before: fileState(e.Before), After: fileState(e.After), Unpredicted: e.Unpredicted, Refused: e.Refused,
	}
	if e.Unknown {
		a.Zone = ""
	}
	if e.Subtree {
		a.Path += "/**"
	}
	return a
}

func fileState(s *txn.State) *audit.FileState {
	if s == nil {
		return nil
	}
	return &audit.FileState{Mode: s.Mode.String(), Size: s.Size, SHA256: s.SHA256}
}

// bodyArgs are arguments whose values are file content: the log keeps only
// their size and hash.
var bodyArgs = []string{"content", "old_string", "new_string", "new_source", "edits"}

func redact(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if slices.Contains(bodyArgs, k) {
			if s, ok := v.(string); ok {
				out[k] = audit.Body(s)
			} else {
				// MultiEdit's edits: a list of old and new strings
				b, _ := json.Marshal(v)
				out[k] = audit.Body(string(b))
			}
			continue
		}
		out[k] = v
	}
	return out
}
