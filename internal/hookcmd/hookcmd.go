// Package hookcmd is the Claude Code hook as a command: it reads the hook's
// JSON on stdin, judges it through server.Gate.Hook within a time budget,
// and answers as Claude Code reads an answer. `vaultgate hook` and the
// vaultgate-hook binary both run it, so the two can't differ.
//
// Claude Code lets a call through when a hook crashes, times out or prints
// bad JSON. So this package must never end in any of those ways: every
// failure of its own exits 2 with the reason on stderr, which Claude Code
// treats as a deny.
package hookcmd

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/judgesock"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
)

// Budget is the hook's own time limit (judgesock.Budget, which the
// judge's hook keeps too): past it the hook denies rather than let Claude
// Code time it out, which would let the call through.
const Budget = judgesock.Budget

// maxInput bounds what the hook reads from stdin (a Write's content
// travels in it).
const maxInput = judgesock.MaxInput

// Exit statuses, as Claude Code reads them.
const (
	ExitAnswered = 0 // judged: the answer is the JSON on stdout (nothing after the call)
	ExitDenied   = 2 // a failure of the hook's own: Claude Code blocks the call and shows stderr
)

// Usage, Summary and Help describe the command to a person.
const (
	Usage   = "--config FILE [--agent NAME]"
	Summary = "the Claude Code PreToolUse and PostToolUse hook: judge a built-in tool call"
	Help    = `Reads Claude Code's hook JSON on stdin and judges the call by the same
effects and rules as the vault's own tools. On a deny it prints Claude
Code's deny JSON; on an allow, permissionDecision "allow", which lets
Claude Code run the call without asking. The vault's own tools
(mcp__<server_name>__*) pass, and so do Claude Code's tools that touch no
file; a few that touch files in ways it can't judge (worktrees, Monitor,
Workflow) are refused; any other tool is denied unless [hook] allow
lists it. Allow never switches off the checks of the tools the hook judges
itself (Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash): an
entry that matches one is reported on stderr and changes nothing.

A Bash call it allows is rewritten (the answer's updatedInput) to run as
"vaultgate exec ... --command-b64 CMD" from Claude Code's cwd: inside the
OS wall and the overlay transaction, with the environment whitelist,
secrets, limits, timeout and audit line of the MCP bash tool. Where the
config requires the wall (wall = "required") and it can't be raised here,
or Claude Code's own sandbox is on, Bash is denied with the reason.
vaultgate-hook runs the vaultgate binary beside it; vaultgate hook, itself.

Claude Code lets a call through when a hook crashes, times out or prints
bad JSON, so every failure of the hook's own — empty or broken input, a
missing config, a panic, running out of its time budget — exits 2 with
the reason on stderr, which Claude Code treats as a deny.

As a PostToolUse hook it records the files Claude Code read or wrote, so
that read_before_write knows them, and writes an audit line marked
"event":"after".`
)

// Flags are the command's flags.
type Flags struct {
	Config string // the policy file; required
	Agent  string // judge as this agent of the config

	// Exec is the vaultgate binary an allowed Bash runs through
	// (absolute), set by the binary that runs the hook, not a flag;
	// "" refuses every Bash, for ExecProblem's reason.
	Exec        string
	ExecProblem string
}

// Self is the running binary, as Exec for a binary that has the exec
// command (vaultgate hook).
func Self() (exe, problem string) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Sprintf("the running binary can't be named: %v", err)
	}
	return exe, ""
}

// Register defines the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Config, "config", "", "the policy file (TOML); required")
	fs.StringVar(&f.Agent, "agent", config.DefaultAgent, "judge as this agent of the config")
}

// Run judges the one call on stdin and returns the exit status: a panic
// or a check that outlives Budget is a deny like any other failure.
func Run(f Flags, stdin io.Reader, stdout, stderr io.Writer) int {
	h := &hook{flags: f, stdout: stdout, stderr: stderr}
	return h.guard(func() int { return h.judge(stdin) })
}

// guard runs judge within Budget: a panic or a check that outlives it is
// a deny like any other failure.
func (h *hook) guard(judge func() int) int {
	done := make(chan int, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- h.deny("internal error: %v", p)
			}
		}()
		done <- judge()
	}()
	select {
	case code := <-done:
		return code
	case <-time.After(Budget):
		return h.deny("the check took longer than its %s budget", Budget)
	}
}

type hook struct {
	flags          Flags
	stdout, stderr io.Writer
	env            map[string]string // the asking hook's, for a judge; nil: this process's own
}

// getenv reads the environment of the hook process that asked.
func (h *hook) getenv(key string) string {
	if h.env != nil {
		return h.env[key]
	}
	return os.Getenv(key)
}

// deny is the exit of every failure of the hook's own.
func (h *hook) deny(format string, args ...any) int {
	fmt.Fprintf(h.stderr, "vaultgate hook: denied: "+format+"\n", args...)
	return ExitDenied
}

func (h *hook) judge(stdin io.Reader) int {
	if h.flags.Config == "" {
		return h.deny("no --config given")
	}
	// The config comes first: a call of an agent with rules that this
	// binary can't evaluate goes on to one that can, stdin unread.
	cfg, err := config.Load(h.flags.Config)
	if err != nil {
		return h.deny("config: %v", err)
	}
	p := cfg.Policy(h.flags.Agent)
	if p == nil {
		return h.deny("no agent %q in the config", h.flags.Agent)
	}
	// A server that loaded this very config answers faster than this
	// process could open the vault, let alone start CEL (see warm.go).
	if c := dialWarm(cfg, p.Name); c != nil {
		return h.askWarm(c, cfg, p.Name, stdin)
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return h.deny("reading stdin: %v", err)
	}
	if len(data) > maxInput {
		return h.deny("the hook input is over %d MiB", maxInput>>20)
	}
	in, err := claude.ParseHookInput(data)
	if err != nil {
		return h.deny("%v", err)
	}
	// The hook never runs bash, but probes the wall that vaultgate exec
	// will raise (answer), with exec's helper.
	g, err := server.OpenCall(cfg, p.Name)
	if err != nil {
		return h.deny("%v", err)
	}
	defer g.Close()
	return h.answer(g, cfg, p, in)
}

// execClient is the binary whose exec command an allowed Bash is
// rewritten to: vaultgate-hook beside exe, the lean client that hands the
// command to the running judge (and becomes exe's exec when there is
// none), or else exe itself.
func execClient(exe string) string {
	if exe == "" {
		return ""
	}
	client := filepath.Join(filepath.Dir(exe), "vaultgate-hook")
	if fi, err := os.Stat(client); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return client
	}
	return exe
}

// helper is the wall's helper of the exec command Bash will run through.
func (h *hook) helper() string {
	if h.flags.Exec == "" {
		return ""
	}
	return sandbox.HelperFor(h.flags.Exec)
}

// answer judges the parsed call with g and writes the answer: the hook
// process's own gate, or a server's for its warm judge.
func (h *hook) answer(g *server.Gate, cfg *config.Config, p *config.Policy, in *claude.HookInput) int {
	if judged := tools.JudgedDespiteAllow(p.Hook.Allow); len(judged) > 0 {
		fmt.Fprintf(h.stderr, "vaultgate hook: warning: [hook] allow matches %s, which the hook judges itself; allow never switches their checks off\n", strings.Join(judged, ", "))
	}
	if helper := h.helper(); helper != "" && in.ToolName == "Bash" && !in.After() && p.Bash.Enabled && p.Bash.Wall != config.WallOff {
		rememberProbe(cfg.StateDir, helper)
	}
	ctx, cancel := context.WithTimeout(context.Background(), Budget)
	defer cancel()
	// The hook process inherits Claude Code's environment, so its HOME is
	// Claude Code's home, where ~ in a path leads (a judge gets the
	// asking hook's: judgesock.HookEnv).
	opt := server.HookOptions{Exec: execClient(h.flags.Exec), ExecProblem: h.flags.ExecProblem, Home: h.getenv("HOME")}
	if in.ToolName == "Bash" && !in.After() {
		opt.Sandbox = claude.SandboxSettings(in.Cwd, h.getenv)
	}
	answer, err := g.HookWith(ctx, p, in, opt)
	if err != nil {
		return h.deny("%v", err)
	}
	if !answer.Silent() {
		if _, err := h.stdout.Write(append(answer.JSON(), '\n')); err != nil {
			if answer.Deny != "" {
				return h.deny("%s", answer.Deny)
			}
			return h.deny("writing the answer: %v", err)
		}
	}
	return ExitAnswered
}
