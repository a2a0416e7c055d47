package tools

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
)

// Claude Code runs its built-in Bash itself. So that the command runs as
// the bash tool's commands do — inside the wall, on the overlay, with the
// environment whitelist, the secrets, the limits, the timeout and an audit
// line — the hook allows a Bash call only by rewriting it (PreToolUse's
// updatedInput) into `vaultgate exec`, which runs the original command
// through the gate as the bash tool (via "exec"), prints its output and
// exits with its status. The hook judges the command first exactly as the
// bash tool will, so Claude Code hears a refusal as a deny, not as a
// failed command.

// HookExec is how the hook names `vaultgate exec` to Claude Code.
type HookExec struct {
	Binary string // the vaultgate binary, absolute
	Config string // the policy file, absolute
	Agent  string // the config's agent; "" is the default one
	// CallID is the id the gate issues for this call if it is allowed:
	// exec presents it to run as the judged call's continuation (the
	// same session, and an audit line naming the hook's).
	CallID string
}

// Command is the shell command that runs command through vaultgate exec
// with timeout. The command travels base64-encoded, so no quoting of its
// own (nor Claude Code's handling of it) can change what reaches exec;
// every other word is quoted for bash by the shell parser's own quoter.
func (x *HookExec) Command(command string, timeout time.Duration) (string, error) {
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

// ClaudeMaxTimeout is the longest Claude Code lets a Bash call run (its
// timeout field is at most 600000 ms).
const ClaudeMaxTimeout = 10 * time.Minute

// ExecGrace is what Claude Code's timeout gives exec past the command's
// own, to open the vault, judge what the command changed and commit it;
// Claude Code killing exec first would throw its work away.
const ExecGrace = 15 * time.Second

// hookBashTimeout maps Claude Code's timeout (milliseconds) onto the bash
// tool's: whole seconds, rounded up, within 1 s and [bash] max_timeout;
// none given is [bash] timeout.
func hookBashTimeout(b *config.Bash, a args) time.Duration {
	if !a.has("timeout") {
		return min(b.Timeout, b.MaxTimeout)
	}
	ms, _ := toInt(a.m["timeout"]) // checked: a whole number
	t := (time.Duration(ms)*time.Millisecond + time.Second - 1).Truncate(time.Second)
	return max(time.Second, min(t, b.MaxTimeout))
}

// hookBash plans a built-in Bash command, run from the session's cwd: as
// the bash tool plans one (prepareBash), and, when allowed, rewritten to
// run through vaultgate exec. Its run makes the rewrite: the updatedInput
// that replaces the whole tool input, keeping every field but the command
// and the timeout (description, run_in_background, and any Claude Code
// adds).
func hookBash(s *Set, a args) (*Plan, error) {
	b := s.Bash
	switch {
	case !path.IsAbs(s.Hook.Cwd):
		// not the vault root: relative paths judged from the wrong folder
		// are judged wrong
		return bashRefused(s.say(say.BashNoCwd{})), nil
	case b == nil || !b.Enabled:
		return bashRefused(s.say(say.HookBashOff{})), nil
	case s.Hook.Exec == nil || s.Hook.Exec.Binary == "":
		problem := s.Hook.ExecProblem
		if problem == "" {
			problem = "no vaultgate binary is known"
		}
		return bashRefused(s.say(say.HookNoExec{Problem: problem})), nil
	}
	if b.Wall == config.WallRequired && s.Hook.Sandbox != "" && !a.boolean("dangerouslyDisableSandbox") {
		return bashRefused(s.say(say.HookSandboxOn{Settings: s.Hook.Sandbox})), nil
	}
	command := a.str("command")
	timeout := hookBashTimeout(b, a)
	plan, _, err := s.prepareBash(command, s.Hook.Cwd)
	if err != nil || refusalOf(plan) != nil {
		return plan, err
	}
	input := make(map[string]any, len(a.m)+1)
	for k, v := range a.m {
		input[k] = v
	}
	rewritten, err := s.Hook.Exec.Command(command, timeout)
	if err != nil {
		return bashRefused(s.say(say.HookNoExec{Problem: err.Error()})), nil
	}
	input["command"] = rewritten
	input["timeout"] = int(min(timeout+ExecGrace, ClaudeMaxTimeout) / time.Millisecond)
	plan.Run = func(context.Context) (*Result, error) { return &Result{UpdatedInput: input}, nil }
	plan.HandsOn = true
	return plan, nil
}

// bashRefused is the plan of a bash call refused before any analysis.
func bashRefused(reason string) *Plan {
	return &Plan{TellAll: true, Facts: BashCall{Refusal: &policy.Deny{Rule: "bash", Reason: reason}},
		Run: func(context.Context) (*Result, error) { return nil, errors.New("refused") }}
}
