package agentrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/server"
)

// Under run --claude, Claude Code's built-ins that can't work there are
// denied in its settings (claude.RunSettings), so it does not offer them;
// a call of one that still comes — the model names it anyway, or a Claude
// Code offers it — is refused, and is an audit line of the run: its hook
// reports the attempt over the run's socket, on a connection of its own
// (reportMode after the token), and the run's server records it through
// the gate like any call of the run.

// reportMode is the word after the token on the hello line of the hook's
// connection: what follows is one line of attempts, not MCP.
const reportMode = "builtins"

// maxReport bounds a report's line: a batch's calls with their inputs.
const maxReport = 16 << 20

// Attempt is a call of a built-in refused under run --claude.
type Attempt struct {
	Tool      string         `json:"tool"`
	Input     map[string]any `json:"input,omitempty"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
}

// HookInput is what run --claude's hook reads from Claude Code: a
// PreToolUse call, or a PostToolBatch with every call of the batch.
type HookInput struct {
	Event     string         `json:"hook_event_name"`
	ToolName  string         `json:"tool_name"`
	ToolInput map[string]any `json:"tool_input"`
	ToolUseID string         `json:"tool_use_id"`
	ToolCalls []struct {
		ToolName  string         `json:"tool_name"`
		ToolInput map[string]any `json:"tool_input"`
		ToolUseID string         `json:"tool_use_id"`
	} `json:"tool_calls"`
}

// Attempts are the calls of the input that are of a built-in refused
// under run --claude.
func (h *HookInput) Attempts() []Attempt {
	var out []Attempt
	add := func(tool string, input map[string]any, id string) {
		if _, refused := claude.RunInstead(tool); refused {
			out = append(out, Attempt{Tool: tool, Input: input, ToolUseID: id})
		}
	}
	if h.ToolName != "" {
		add(h.ToolName, h.ToolInput, h.ToolUseID)
	}
	for _, c := range h.ToolCalls {
		add(c.ToolName, c.ToolInput, c.ToolUseID)
	}
	return out
}

// Report hands attempts to the run's server at sock, with the token in
// tokenFile, and returns once each is an audit line (or was one already).
func Report(sock, tokenFile string, attempts []Attempt) error {
	if len(attempts) == 0 {
		return nil
	}
	tok, err := os.ReadFile(tokenFile)
	if err != nil {
		return fmt.Errorf("the run's token: %w", err)
	}
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	b, err := json.Marshal(attempts)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c, "%s %s\n%s\n", strings.TrimSpace(string(tok)), reportMode, b); err != nil {
		return err
	}
	r := bufio.NewReader(io.LimitReader(c, 1<<12))
	for _, want := range []string{helloOK, helloOK} {
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("the run's server did not answer: %w", err)
		}
		if line = strings.TrimSuffix(line, "\n"); line != want {
			return fmt.Errorf("the run's server: %s", strings.TrimPrefix(line, helloDenied))
		}
	}
	return nil
}

// report serves a hook's connection: one line of attempts, each recorded
// once, then "ok" when every one is in the audit log.
func (g *gateway) report(ctx context.Context, r *bufio.Reader, w io.Writer) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		io.WriteString(w, helloDenied+"no report\n")
		return
	}
	var attempts []Attempt
	if err := json.Unmarshal(line, &attempts); err != nil {
		io.WriteString(w, helloDenied+"the report is not a list of attempts\n")
		return
	}
	if err := g.record(ctx, attempts); err != nil {
		io.WriteString(w, helloDenied+strings.ReplaceAll(err.Error(), "\n", " ")+"\n")
		return
	}
	io.WriteString(w, helloOK+"\n")
}

// record writes an audit line of the run for each attempt not recorded
// yet (PreToolUse and PostToolBatch both report a call the hook refused).
// Only a built-in refused under run is taken, never a name of the vault's
// own tools: the line is the gate's record of a call it does not know,
// which runs nothing.
func (g *gateway) record(ctx context.Context, attempts []Attempt) error {
	caller := server.Caller{Via: server.ViaRun, Run: g.runID, Session: g.session, Policy: g.policy}
	set := g.gate.ToolSet(caller)
	var errs []error
	for _, a := range attempts {
		instead, refused := claude.RunInstead(a.Tool)
		if !refused {
			errs = append(errs, fmt.Errorf("%q is not a built-in refused under run", a.Tool))
			continue
		}
		if _, known := set.Lookup(a.Tool); known {
			errs = append(errs, fmt.Errorf("%q is a tool of the vault's", a.Tool))
			continue
		}
		if a.ToolUseID != "" {
			g.mu.Lock()
			if g.reported == nil {
				g.reported = map[string]bool{}
			}
			seen := g.reported[a.ToolUseID]
			g.reported[a.ToolUseID] = true
			g.mu.Unlock()
			if seen {
				continue
			}
		}
		// Denied with the reason the agent's hook gave it, in one line.
		refusal := caller
		refusal.Refusal = &policy.Deny{Rule: "run", Reason: say.RunBuiltinRefused{Tool: a.Tool, Instead: instead, Server: g.policy.Hook.ServerName}.Text(g.policy.Lang)}
		o := g.gate.Call(ctx, refusal, a.Tool, a.Input, server.Steps{Record: true})
		if o.Decision != server.Deny || o.Err != nil {
			// Not the refusal it must be: the line may be missing.
			errs = append(errs, fmt.Errorf("%s: %v", a.Tool, o.Text()))
			if a.ToolUseID != "" {
				g.mu.Lock()
				delete(g.reported, a.ToolUseID)
				g.mu.Unlock()
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}
