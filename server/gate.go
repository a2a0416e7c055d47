package server

import (
	"cmp"
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

// Decisions: the audit log's words (package audit owns them), named here
// for the gate's callers.
const (
	Allow = audit.Allow
	Deny  = audit.Deny
	Error = audit.Error // the call could not be judged at all
)

// Gate judges and runs calls for one vault.
type Gate struct {
	cfg   *config.Config
	vault *tools.Vault
	log   *audit.Writer    // nil: no call that asks to be recorded is let through
	keep  history.Recorder // nil: the file tools keep no history
	rules []policy.Rule    // library users' rules, after the built-in ones
	// config holds each agent's compiled [[rules.deny]] (compileRules),
	// which run after the built-in rules and before the library users'.
	config  map[*config.Policy][]policy.Rule
	ruleErr error // a dry run's rule that did not compile (RuleError)

	store   *history.Store // the history as a store, for undo; nil: none
	person  bool           // the person's gate (OpenPerson): no agent's calls
	closers []func() error // what Close closes, in order

	// Calls that change files run one at a time, plan to run (see
	// lockVault).
	mutate sync.Mutex
}

// AddRules appends a library user's rules to the chain of every agent,
// after the built-in ones (hook_scope, bash, zones, read_before_write)
// and the config's. Call it before the gate serves its first call.
func (g *Gate) AddRules(rules ...policy.Rule) {
	g.rules = append(g.rules, rules...)
}

// Config returns the gate's configuration.
func (g *Gate) Config() *config.Config { return g.cfg }

// Caller is who makes a call and through what.
type Caller struct {
	// ID is the call's audit id when the caller had to name it before the
	// call (the hook, whose Bash rewrite names it); "" is a new one.
	ID string
	// Continues is the audit id of the hook call this one runs (exec,
	// with the call id the hook issued).
	Continues string
	// Refusal, when set, is a refusal made before the call reached the
	// gate (a built-in that vaultgate run did not offer Claude Code, which
	// answered it by itself): the call is recorded as denied with it, and
	// nothing is planned or run.
	Refusal *policy.Deny
	// refused is why the call may not even be planned (exec presenting a
	// call id that opens nothing): it is recorded as an error, and runs
	// nothing.
	refused error
	// acts are the person's acts (undo), planned instead of an agent's
	// tools and judged by an empty chain; nil for an agent's call.
	acts planner
	// kept names a session whose state is kept in the state folder
	// (sessions.go), which the call holds while it judges and commits
	// and lets go of while it runs; "" is a session of this process.
	kept    string
	Via     audit.Via
	Run     string // the id of the vaultgate run whose agent calls, for ViaRun
	Session *policy.Session
	Policy  *config.Policy
	// Hook is the Claude Code call around a hook call, whose tool is one
	// of Claude Code's; nil for the vault's own tools.
	Hook *tools.HookCall
	// Cwd is the folder of the vault a bash call runs from, absolute, for
	// a person's command run there (vaultgate exec); "" is the vault root.
	Cwd string
	// Environ is the caller's environment for bash's [bash] env, when a
	// server runs exec's command for it; nil is the server's own.
	Environ []string
}

// Vias: the audit log's words (package audit owns them), named here for
// the gate's callers.
const (
	ViaStdio = audit.ViaStdio
	ViaHTTP  = audit.ViaHTTP
	ViaHook  = audit.ViaHook
	ViaCheck = audit.ViaCheck
	ViaRun   = audit.ViaRun
	ViaExec  = audit.ViaExec
	ViaCLI   = audit.ViaCLI
	// ViaStartUp is vaultgate's own act at a server's start-up: removing
	// what a stopped process left (recover.go).
	ViaStartUp = audit.ViaStartUp
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
	Decision audit.Decision
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
	s := &tools.Set{Vault: g.vault, Zones: c.Policy.Zones, Lang: c.Policy.Lang, Bash: &c.Policy.Bash, Hook: c.Hook, Cwd: c.Cwd, Environ: c.Environ}
	if c.Session != nil {
		s.State = c.Session.State
	}
	return s
}

// Chain returns the rule chain of an agent: the tools' own rules, each for
// its tool's calls, then the tool-blind ones, then the config's rules in
// the order written, then the library user's.
func (g *Gate) Chain(p *config.Policy) policy.Chain {
	c := Builtins(p)
	c = append(c, g.configRules(p)...)
	return append(c, g.rules...)
}

// Builtins is the built-in head of an agent's chain: the tools' own rules,
// then the tool-blind ones.
func Builtins(p *config.Policy) policy.Chain {
	c := policy.Chain(tools.Rules(p))
	return append(c, policy.Builtin(p.ReadBeforeWrite)...)
}

// chainFor is the chain a caller's call is judged by: its agent's, but
// without the config's rules for a hook's After event, which only
// records what Claude Code did once its PreToolUse was allowed: judged
// again on the counters that call itself raised, a rule could refuse the
// record (the read that read_before_write needs, a write's history).
func (g *Gate) chainFor(c Caller) policy.Chain {
	if c.acts != nil {
		return nil // the person's: nothing binds them
	}
	if c.Hook == nil || !c.Hook.After {
		return g.Chain(c.Policy)
	}
	return append(Builtins(c.Policy), g.rules...)
}

// Call is the whole path of a call, in order: plan, judge, run, judge what
// really changed, commit, record — each step taken as steps says. raw is
// the call's arguments as decoded JSON; anything but an object is
// malformed.
func (g *Gate) Call(ctx context.Context, c Caller, tool string, raw any, steps Steps) (out *Outcome) {
	start := time.Now()
	out = &Outcome{ID: cmp.Or(c.ID, audit.NewID()), Tool: tool}
	var lang say.Lang
	if c.Policy != nil {
		lang = c.Policy.Lang
	}
	if x := g.vault.Names; x != nil {
		x.Start() // the index's reading begins with the first call (watchNames)
	}
	args, argsOK := raw.(map[string]any)
	if raw == nil {
		args, argsOK = map[string]any{}, true
	}
	defer func() {
		if p := recover(); p != nil {
			// A bug in a planner or a tool must not let a call through, nor
			// leave it unrecorded.
			if out.Result != nil && out.Result.Pending != nil {
				out.Result.Pending.Discard() // nothing unjudged reaches the vault
			}
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
	if c.refused != nil {
		out.Decision, out.Err = Error, c.refused
		return out
	}
	if c.Refusal != nil {
		out.Decision, out.Deny = Deny, c.Refusal
		return out
	}
	if g.person && c.acts == nil {
		out.Decision, out.Err = Error, errPersonGate // fail closed: no chain here to judge an agent by
		return out
	}
	held := &sessionHold{stateDir: g.cfg.StateDir, id: c.kept, session: c.Session}
	if err := held.take(); err != nil {
		out.Decision, out.Err = Error, err
		return out
	}
	defer held.give()
	set := g.actsFor(c)
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
		Tool: tool, Args: args, Effects: plan.Effects, Session: c.Session, Via: string(c.Via),
		Lang: lang, TellAll: plan.TellAll, Facts: plan.Facts,
	}
	if c.Policy != nil {
		call.Zones = c.Policy.Zones
	}
	if c.Session != nil && c.Session.State != nil {
		policy.Begin(c.Session.State, start)
	}
	chain := g.chainFor(c)
	if d := chain.Judge(call); d != nil {
		out.Decision, out.Deny = Deny, d
		return out
	}
	out.Decision, out.Forwarded = Allow, plan.Forwarded
	if !steps.Run {
		return out
	}
	counted := c.Session != nil && c.Session.State != nil && (c.Hook == nil || !c.Hook.After)
	if counted && !plan.RealJudged() && !plan.HandsOn {
		// What the session has been allowed, for the config's rules; a
		// hook call is counted once, before Claude Code runs it. A call
		// judged by what it really changed is counted for that, below;
		// one handed on to exec (Claude Code's Bash) is counted there.
		policy.Count(c.Session.State, plan.Effects, start)
	}
	if err := held.give(); err != nil {
		out.Err = err
		return out
	}
	res, err := plan.Run(ctx)
	if err != nil {
		out.Err = err
		return out
	}
	out.Result = res
	if err := held.take(); err != nil {
		// Nothing is committed without the session it is judged in.
		if res != nil && res.Pending != nil {
			res.Pending.Discard()
		}
		out.Result, out.Err = nil, err
		return out
	}
	if res == nil {
		return out // the hook's runs: Claude Code does the work
	}
	if p := res.Pending; p != nil {
		// What the call really changed, judged by the chain that judged
		// what it would change: all of it is applied, or none.
		real := *call
		real.Effects, real.TellAll, real.Facts = p.Effects(), true, p.Facts()
		if d, refused, reasons := chain.JudgeEach(&real); d != nil {
			out.Result = p.Refuse(d, refused, reasons)
		} else {
			out.Result = p.Commit()
			if counted && out.Result.NotApplied == "" {
				policy.Count(c.Session.State, p.Effects(), start)
			}
		}
	}
	if err := held.give(); err != nil {
		// The changes are made; the session's counters could not keep
		// them, which the person must see.
		out.Err = err
	}
	return out
}

// planner is what a caller can do: an agent's tool set, or the person's
// acts.
type planner interface {
	Lookup(name string) (tools.Tool, bool)
	Plan(name string, args map[string]any) (*tools.Plan, error)
}

// actsFor is what the caller can do.
func (g *Gate) actsFor(c Caller) planner {
	if c.acts != nil {
		return c.acts
	}
	return g.ToolSet(c)
}

// keepHistory names the call for the history its file changes go to.
func (g *Gate) keepHistory(acts planner, c Caller, id, tool string, start time.Time) {
	if p, ok := acts.(*personActs); ok {
		p.id, p.start = id, start
		return
	}
	set, isSet := acts.(*tools.Set)
	if !isSet || g.keep == nil {
		return // start-up's recovery keeps no history (recover.go)
	}
	m := history.Meta{Time: start, Tool: tool, Via: string(c.Via), Vault: g.vault.ID}
	if c.Session != nil {
		m.Session, m.Agent = c.Session.ID, c.Session.Agent
	}
	if m.Agent == "" && c.Policy != nil {
		m.Agent = c.Policy.Name
	}
	set.History, set.CallID, set.Call = g.keep, id, m
}

// errPersonGate refuses an agent's call on the person's gate (OpenPerson),
// which compiled no agent's rules.
var errPersonGate = errors.New("this gate is the person's: it takes no agent's call")

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
		ID: o.ID, Vault: g.vault.ID, Via: c.Via, Run: c.Run, Continues: c.Continues, Tool: o.Tool, Decision: o.Decision,
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
	// A folder effect's line keeps the folder with how many paths it
	// covers: the paths inside, each an effect the rules judged, follow it
	// and are folded into it (a refused one marks the folder refused).
	for _, e := range o.Effects {
		if e.Folder.IsZero() {
			r.Effects = append(r.Effects, auditEffect(e))
		}
	}
	if o.Result != nil {
		for _, e := range o.Result.Real {
			switch {
			case e.Folder.IsZero():
				r.Real = append(r.Real, realEffect(e))
			case e.Refused && len(r.Real) > 0:
				r.Real[len(r.Real)-1].Refused = true
			}
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
	a := audit.Effect{Op: e.Op.String(), Path: e.Path.String(), Zone: e.Zone.String(), Covers: e.Covers}
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
		Covers: e.Covers,
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
