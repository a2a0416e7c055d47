package claude

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/config"
)

// Claude Code runs its built-in Bash itself. So that the command runs as
// the bash tool's commands do — inside the wall, on the overlay, with the
// environment whitelist, the secrets, the limits, the timeout and an audit
// line — the hook allows a Bash call only by rewriting it (PreToolUse's
// updatedInput) into vaultgate exec, which runs the original command
// through the gate as the bash tool (via "exec"), prints its output and
// exits with its status. The hook judges the command first exactly as the
// bash tool will, so Claude Code hears a refusal as a deny, not as a
// failed command.

// Exec is how the hook names vaultgate exec to Claude Code.
type Exec struct {
	// Binary is a binary of this build whose exec command runs the call,
	// absolute: vaultgate-hook (the lean client) or vaultgate.
	Binary string
	Config string // the policy file, absolute
	Agent  string // the config's agent; "" is the default one
	// CallID is the id the gate issues for this call if it is allowed:
	// exec presents it to run as the judged call's continuation (the
	// same session, and an audit line naming the hook's).
	CallID string
}

// MaxTimeout is the longest Claude Code lets a Bash call run (its timeout
// field is at most 600000 ms).
const MaxTimeout = 10 * time.Minute

// ExecGrace is what Claude Code's timeout gives exec past the command's
// own, to judge what the command changed and commit it; Claude Code
// killing exec first would throw its work away.
const ExecGrace = 15 * time.Second

// BashTimeout maps Claude Code's timeout (ms, a whole number; given false
// when the call has none) onto the bash tool's: whole seconds, rounded up,
// within 1 s and [bash] max_timeout; none given is [bash] timeout.
func BashTimeout(b *config.Bash, ms int, given bool) time.Duration {
	if !given {
		return min(b.Timeout, b.MaxTimeout)
	}
	t := (time.Duration(ms)*time.Millisecond + time.Second - 1).Truncate(time.Second)
	return max(time.Second, min(t, b.MaxTimeout))
}

// Command is the shell command that runs command through exec with
// timeout. The command travels base64-encoded, so no quoting of its own
// (nor Claude Code's handling of it) can change what reaches exec; every
// other word is quoted for bash by the shell parser's own quoter.
func (x *Exec) Command(command string, timeout time.Duration) (string, error) {
	w := []string{x.Binary, "exec", "--config", x.Config}
	if x.Agent != "" && x.Agent != config.DefaultAgent {
		w = append(w, "--agent", x.Agent)
	}
	w = append(w, "--call", x.CallID,
		"--timeout", fmt.Sprintf("%ds", int(timeout/time.Second)),
		"--command-b64", base64.StdEncoding.EncodeToString([]byte(command)))
	for i, word := range w {
		q, err := syntax.Quote(word, syntax.LangBash)
		if err != nil {
			return "", fmt.Errorf("%q can't be one word of a bash command: %w", word, err)
		}
		w[i] = q
	}
	return strings.Join(w, " "), nil
}

// RewriteBash is the updatedInput of an allowed Bash: the whole tool
// input, every field kept (description, run_in_background, and any Claude
// Code adds) but the command, which runs through exec, and the timeout,
// which gives exec its grace.
func (x *Exec) RewriteBash(input map[string]any, command string, timeout time.Duration) (map[string]any, error) {
	rewritten, err := x.Command(command, timeout)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(input)
	if out == nil {
		out = map[string]any{}
	}
	out["command"] = rewritten
	out["timeout"] = int(min(timeout+ExecGrace, MaxTimeout) / time.Millisecond)
	return out, nil
}
