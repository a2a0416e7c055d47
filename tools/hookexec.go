package tools

import (
	"context"
	"errors"
	"path"
	"time"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
)

// hookBashTimeout is Claude Code's timeout of the call as the bash tool's
// (claude.BashTimeout).
func hookBashTimeout(b *config.Bash, a args) time.Duration {
	ms, _ := toInt(a.m["timeout"]) // checked: a whole number
	return claude.BashTimeout(b, ms, a.has("timeout"))
}

// hookBash plans a built-in Bash command, run from the session's cwd: as
// the bash tool plans one (prepareBash), and, when allowed, rewritten to
// run through vaultgate exec (claude.Exec: why, and how). Its run makes the rewrite: the updatedInput
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
	input, err := s.Hook.Exec.RewriteBash(a.m, command, timeout)
	if err != nil {
		return bashRefused(s.say(say.HookNoExec{Problem: err.Error()})), nil
	}
	plan.Run = func(context.Context) (*Result, error) { return &Result{UpdatedInput: input}, nil }
	plan.HandsOn = true
	return plan, nil
}

// bashRefused is the plan of a bash call refused before any analysis.
func bashRefused(reason string) *Plan {
	return &Plan{TellAll: true, Facts: BashCall{Refusal: &policy.Deny{Rule: "bash", Reason: reason}},
		Run: func(context.Context) (*Result, error) { return nil, errors.New("refused") }}
}
