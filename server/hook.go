package server

import (
	"context"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/tools"
)

// HookOptions are what the hook command knows of its surroundings.
type HookOptions struct {
	// Exec is the vaultgate binary an allowed Bash runs through (absolute);
	// "" refuses every Bash, for ExecProblem's reason.
	Exec        string
	ExecProblem string
	// Sandbox, when not "", is the Claude Code settings file that turns
	// Claude Code's own sandbox on.
	Sandbox string
	// Home is Claude Code's home, where "~" in a path of its tools leads:
	// the hook process's HOME ("" refuses such a path; tools.HookCall).
	Home string
}

// Hook judges one Claude Code hook call through the gate, with the
// session's state loaded from and saved to the state folder. Claude Code's
// tools are a hook tool set: planned, judged, run (which records what
// Claude Code reads and writes) and audited like the vault's own, before
// the call (PreToolUse) and after it (PostToolUse). Only a PreToolUse deny
// is answered; after the call there is nothing left to refuse.
func (g *Gate) Hook(ctx context.Context, p *config.Policy, in *claude.HookInput) (claude.HookAnswer, error) {
	return g.HookWith(ctx, p, in, HookOptions{})
}

// HookWith is Hook with the hook command's options: Bash is allowed only
// through opt.Exec.
func (g *Gate) HookWith(ctx context.Context, p *config.Policy, in *claude.HookInput, opt HookOptions) (claude.HookAnswer, error) {
	store, err := holdSession(g.cfg.StateDir, in.SessionID)
	if err != nil {
		return claude.HookAnswer{}, err
	}
	defer store.close()
	caller := Caller{
		Via:     ViaHook,
		Session: &policy.Session{ID: in.SessionID, Agent: p.Name, State: store.state},
		Policy:  p,
		Hook: &tools.HookCall{After: in.After(), Cwd: in.Cwd, ServerName: p.Hook.ServerName,
			ExecProblem: opt.ExecProblem, Sandbox: opt.Sandbox, ToolUseID: in.ToolUseID, Home: opt.Home},
	}
	switch {
	case opt.Exec != "" && g.cfg.File == "":
		caller.Hook.ExecProblem = "the hook's config has no file for vaultgate exec to load"
	case opt.Exec != "":
		caller.Hook.Exec = &claude.Exec{Binary: opt.Exec, Config: g.cfg.File, Agent: p.Name}
	}
	var callID string
	if caller.Hook.Exec != nil && in.ToolName == "Bash" && !in.After() {
		// The id exec will present to continue this call, issued before
		// the call is judged so that the rewrite can name it; spent at
		// once unless the call is allowed.
		callID, caller.ID = newTicketID(), audit.NewID()
		caller.Hook.Exec.CallID = callID
		command, _ := in.ToolInput["command"].(string)
		t := ticket{Session: in.SessionID, Agent: p.Name, HookID: caller.ID, Command: commandDigest(command), Expires: time.Now().Add(ticketTTL)}
		if err := issueTicket(g.cfg.StateDir, callID, t); err != nil {
			return claude.HookAnswer{}, err
		}
	}
	o := g.Call(ctx, caller, in.ToolName, in.ToolInput, Serve)
	if callID != "" && (o.Decision != Allow || o.Err != nil || o.Result == nil || o.Result.UpdatedInput == nil) {
		spendTicket(g.cfg.StateDir, callID) // no exec continues a call not allowed
	}
	switch {
	case o.Decision == Allow && o.Err != nil:
		return claude.HookAnswer{}, o.Err // allowed, but not recorded: deny (exit 2)
	case o.Decision == Allow:
		if o.Forwarded && !in.After() {
			store.noteForwarded(in)
		}
		a := claude.HookAnswer{Allow: !in.After()}
		if o.Result != nil && !in.After() {
			a.UpdatedInput = o.Result.UpdatedInput
		}
		if err := store.save(); err != nil {
			if callID != "" {
				spendTicket(g.cfg.StateDir, callID) // denied: no exec continues it
			}
			return claude.HookAnswer{}, err
		}
		return a, nil
	case in.After():
		return claude.HookAnswer{}, nil // the audit line says what became of it
	}
	return claude.HookAnswer{Deny: o.Text()}, nil
}
