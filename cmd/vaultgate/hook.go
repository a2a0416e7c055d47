package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/server"
)

// hookBudget is the hook's own time limit, well under Claude Code's hook
// timeout: past it the hook denies rather than let Claude Code time it out,
// which would let the call through.
const hookBudget = 5 * time.Second

// maxHookInput bounds what the hook reads from stdin (a Write's content
// travels in it).
const maxHookInput = 64 << 20

func init() {
	var cfgPath, agent string
	register(&command{
		name:    "hook",
		summary: "the Claude Code PreToolUse hook: judge a built-in tool call",
		usage:   "--config FILE",
		help: `Reads Claude Code's hook JSON on stdin and judges the call by the same
effects and rules as the vault's own tools. On a deny it prints Claude
Code's deny JSON; on an allow it prints nothing. The vault's own tools
(mcp__<server_name>__*) pass; any other tool is denied unless [hook] allow
lists it. A built-in Bash is never walled, so commands of unknown effect
are always denied.

Claude Code lets a call through when a hook crashes, times out or prints
bad JSON, so every failure of the hook's own — empty or broken input, a
missing config, a panic, running out of its time budget — exits 2 with
the reason on stderr, which Claude Code treats as a deny.

As a PostToolUse hook it records the files Claude Code read or wrote, so
that read_before_write knows them.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&cfgPath, "config", "", "the policy file (TOML); required")
			fs.StringVar(&agent, "agent", config.DefaultAgent, "judge as this agent of the config")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			return runHook(cfgPath, agent, os.Stdin)
		},
	})
}

// hookDeny is the exit of every failure of the hook's own.
func hookDeny(format string, args ...any) int {
	fmt.Fprintf(stderr, "vaultgate hook: denied: "+format+"\n", args...)
	return exitUsage // 2: Claude Code blocks the call and shows stderr
}

func runHook(cfgPath, agent string, stdin io.Reader) (code int) {
	done := make(chan int, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- hookDeny("internal error: %v", p)
			}
		}()
		done <- judgeHook(cfgPath, agent, stdin)
	}()
	select {
	case code = <-done:
		return code
	case <-time.After(hookBudget):
		return hookDeny("the check took longer than its %s budget", hookBudget)
	}
}

func judgeHook(cfgPath, agent string, stdin io.Reader) int {
	if cfgPath == "" {
		return hookDeny("no --config given")
	}
	data, err := io.ReadAll(io.LimitReader(stdin, maxHookInput+1))
	if err != nil {
		return hookDeny("reading stdin: %v", err)
	}
	if len(data) > maxHookInput {
		return hookDeny("the hook input is over %d MiB", maxHookInput>>20)
	}
	in, err := server.ParseHookInput(data)
	if err != nil {
		return hookDeny("%v", err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return hookDeny("config: %v", err)
	}
	p := cfg.Policy(agent)
	if p == nil {
		return hookDeny("no agent %q in the config", agent)
	}
	g, closeAll, err := openGate(cfg, false)
	if err != nil {
		return hookDeny("%v", err)
	}
	defer closeAll()
	ctx, cancel := context.WithTimeout(context.Background(), hookBudget)
	defer cancel()
	answer, err := g.Hook(ctx, p, in)
	if err != nil {
		return hookDeny("%v", err)
	}
	if answer.Deny != "" {
		if _, err := stdout.Write(append(answer.JSON(), '\n')); err != nil {
			return hookDeny("%s", answer.Deny)
		}
	}
	return exitOK
}
