package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/tools"
)

// HookInput is what Claude Code sends a hook on stdin (the fields used).
type HookInput struct {
	SessionID     string         `json:"session_id"`
	Cwd           string         `json:"cwd"`
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
	ToolUseID     string         `json:"tool_use_id"` // sent by newer Claude Codes
}

// After reports whether Claude Code has run the tool already (PostToolUse).
func (in *HookInput) After() bool { return in.HookEventName == "PostToolUse" }

// HookAnswer is the hook's reply: a deny with its reason, an allow before
// the call (Allow), perhaps rewriting it (UpdatedInput), or nothing to say
// (after the call).
type HookAnswer struct {
	Deny string
	// Allow answers permissionDecision "allow": the call was judged and
	// allowed, and Claude Code runs it without asking the person (a
	// project's settings can't grant that any other way; an allow never
	// overrides a deny or ask rule the person wrote).
	Allow bool
	// UpdatedInput is the whole tool input Claude Code is to run instead
	// of the one it sent (an allowed Bash, through vaultgate exec).
	UpdatedInput map[string]any
}

// Silent reports whether the hook prints nothing (PostToolUse).
func (a HookAnswer) Silent() bool { return a.Deny == "" && !a.Allow && a.UpdatedInput == nil }

// JSON is the PreToolUse output for a deny or an allow.
func (a HookAnswer) JSON() []byte {
	out := map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": a.Deny,
	}
	if a.Deny == "" {
		out["permissionDecision"] = "allow"
		out["permissionDecisionReason"] = "vaultgate: judged and allowed"
		if a.UpdatedInput != nil {
			out["permissionDecisionReason"] = "vaultgate: runs inside vaultgate's wall through vaultgate exec"
			out["updatedInput"] = a.UpdatedInput
		}
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": out})
	return b
}

// HookOptions are what the hook command knows of its surroundings.
type HookOptions struct {
	// Exec is the vaultgate binary an allowed Bash runs through (absolute);
	// "" refuses every Bash, for ExecProblem's reason.
	Exec        string
	ExecProblem string
	// Sandbox, when not "", is the Claude Code settings file that turns
	// Claude Code's own sandbox on.
	Sandbox string
}

// ErrHookInput is a hook input that can't be read: the caller denies (exit 2).
var ErrHookInput = errors.New("hook input")

// ParseHookInput reads Claude Code's hook JSON strictly enough to judge it.
func ParseHookInput(data []byte) (*HookInput, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("%w: stdin is empty; Claude Code sends the call as JSON", ErrHookInput)
	}
	var in HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrHookInput, err)
	}
	if in.ToolName == "" {
		return nil, fmt.Errorf("%w: no tool_name", ErrHookInput)
	}
	if in.ToolInput == nil {
		in.ToolInput = map[string]any{}
	}
	return &in, nil
}

// Hook judges one Claude Code hook call through the gate, with the
// session's state loaded from and saved to the state folder. Claude Code's
// tools are a hook tool set: planned, judged, run (which records what
// Claude Code reads and writes) and audited like the vault's own, before
// the call (PreToolUse) and after it (PostToolUse). Only a PreToolUse deny
// is answered; after the call there is nothing left to refuse.
func (g *Gate) Hook(ctx context.Context, p *config.Policy, in *HookInput) (HookAnswer, error) {
	return g.HookWith(ctx, p, in, HookOptions{})
}

// HookWith is Hook with the hook command's options: Bash is allowed only
// through opt.Exec.
func (g *Gate) HookWith(ctx context.Context, p *config.Policy, in *HookInput, opt HookOptions) (HookAnswer, error) {
	store, err := holdSession(g.cfg.StateDir, in.SessionID)
	if err != nil {
		return HookAnswer{}, err
	}
	defer store.close()
	caller := Caller{
		Via:     ViaHook,
		Session: &policy.Session{ID: in.SessionID, Agent: p.Name, State: store.state},
		Policy:  p,
		Hook: &tools.HookCall{After: in.After(), Cwd: in.Cwd, ServerName: p.Hook.ServerName,
			ExecProblem: opt.ExecProblem, Sandbox: opt.Sandbox, ToolUseID: in.ToolUseID},
	}
	switch {
	case opt.Exec != "" && g.cfg.File == "":
		caller.Hook.ExecProblem = "the hook's config has no file for vaultgate exec to load"
	case opt.Exec != "":
		caller.Hook.Exec = &tools.HookExec{Binary: opt.Exec, Config: g.cfg.File, Agent: p.Name}
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
			return HookAnswer{}, err
		}
	}
	o := g.Call(ctx, caller, in.ToolName, in.ToolInput, Serve)
	if callID != "" && (o.Decision != Allow || o.Err != nil || o.Result == nil || o.Result.UpdatedInput == nil) {
		spendTicket(g.cfg.StateDir, callID) // no exec continues a call not allowed
	}
	switch {
	case o.Decision == Allow && o.Err != nil:
		return HookAnswer{}, o.Err // allowed, but not recorded: deny (exit 2)
	case o.Decision == Allow:
		if o.Forwarded && !in.After() {
			store.noteForwarded(in)
		}
		a := HookAnswer{Allow: !in.After()}
		if o.Result != nil && !in.After() {
			a.UpdatedInput = o.Result.UpdatedInput
		}
		return a, store.save()
	case in.After():
		return HookAnswer{}, nil // the audit line says what became of it
	}
	return HookAnswer{Deny: o.Text()}, nil
}
