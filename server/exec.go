package server

import (
	"context"
	"fmt"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

// ExecRequest is one command of `vaultgate exec`: Claude Code's Bash as
// the hook rewrote it, with the call id the hook issued, or a command a
// person runs by hand.
type ExecRequest struct {
	Agent *config.Policy
	// CallID is the id the hook issued for the Bash this runs; "" for a
	// command run by hand, which is a session of its own.
	CallID string
	// Label names a session of its own in the audit (exec --session): it
	// opens no session's state and grants nothing.
	Label string
	// Cwd is the folder of the vault the command runs from, absolute.
	Cwd string
	// Args are the bash tool's: command, and timeout in seconds.
	Args map[string]any
	// Environ is exec's environment, when a server runs its command for
	// it; nil is this process's own.
	Environ []string
}

// Exec runs one exec command through the gate as the vault's bash tool,
// via "exec". With a call id it is the continuation of the hook call that
// issued it: the same agent and Claude Code session (read and counted in
// the state folder, as the hook's are), and an audit line that names the
// hook's (Continues). An id that is unknown, spent, expired, or issued for
// another command or agent runs nothing: a call recorded as an error,
// never a session of its own.
func (g *Gate) Exec(ctx context.Context, req ExecRequest) *Outcome {
	c := Caller{Via: ViaExec, Policy: req.Agent, Cwd: req.Cwd, Environ: req.Environ}
	if req.CallID == "" {
		label := req.Label
		if label == "" {
			label = "exec-" + audit.NewID()
		}
		c.Session = &policy.Session{ID: label, Agent: req.Agent.Name, State: policy.NewState()}
		return g.Call(ctx, c, "bash", req.Args, Serve)
	}
	command, _ := req.Args["command"].(string)
	t, err := takeTicket(g.cfg.StateDir, req.CallID, command, time.Now())
	if err == nil && t.Agent != req.Agent.Name {
		err = fmt.Errorf("%w %s: issued for agent %q, not %q", ErrTicket, req.CallID, t.Agent, req.Agent.Name)
	}
	if err != nil {
		// A call id that opens nothing runs nothing, and is a line of its
		// own: a replayed or forged id is something the person should see.
		c.Session = &policy.Session{ID: "exec-" + audit.NewID(), Agent: req.Agent.Name, State: policy.NewState()}
		c.refused = err
		return g.Call(ctx, c, "bash", req.Args, Serve)
	}
	c.Session = &policy.Session{ID: t.Session, Agent: t.Agent, State: policy.NewState()}
	c.kept, c.Continues = t.Session, t.HookID
	return g.Call(ctx, c, "bash", req.Args, Serve)
}
