package main

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/execcmd"
	"github.com/vaultgate/vaultgate/internal/hookcmd"
	"github.com/vaultgate/vaultgate/internal/judgesock"
	"github.com/vaultgate/vaultgate/server"
)

// exitRefused is exec's status when vaultgate, not the command, ends the
// call (execcmd.ExitRefused).
const exitRefused = execcmd.ExitRefused

func init() {
	var f judgesock.ExecArgs
	register(&command{
		name:    "exec",
		summary: "run one bash command from a folder of the vault, as the MCP bash tool runs it",
		usage:   "(--config FILE | --vault DIR) [--agent NAME] [--session LABEL | --call ID] [--timeout DUR] (--command-b64 B64 | -- CMD...)",
		help: `Runs one bash command from the current folder, which must be inside the
vault, through the same path as the MCP bash tool: the analysis and the
rules judge it first; it runs inside the OS wall, on an overlay of the
vault whose changes are judged and applied only if all are allowed (when
the wall is up); with the [bash] environment whitelist, secrets, limits
and timeout; and one audit line records it, with "via":"exec". Its
stdout and stderr are the command's own, passed through as they are
(Claude Code reads them as its Bash's output; unlike the rest of what
vaultgate prints, they are not escaped), and its exit status is the
command's. When vaultgate ends the call instead — a refusal before it
ran, a wall that wall = "required" needs and can't raise, a timeout past
--timeout's bounds, a commit refused or cut short — the reason goes to
stderr, its terminal controls escaped, and the status is 125; nothing of
the command's changes reached the vault.

The command is the one argument after "--" (several are joined by single
spaces, as ssh joins them), or --command-b64, its bytes in standard
base64, which no shell quoting can alter: the hook hands Claude Code's
Bash commands to exec that way.

--call ID is how the hook's rewrite of a Claude Code Bash runs: the id
the hook issued when it allowed that very command. The run then continues
the hook's call: the same agent, the same Claude Code session (its reads
and its counters for the config's session.* rules), and an audit line
that names the hook's line ("continues"). An id is spent by its first
use, void after a few minutes, and opens only the command it was issued
for; one that is unknown, spent, expired or for another command runs
nothing (status 125).

When a judge for the config and agent is running (the hook-judge that
vaultgate-hook starts, or serve), exec hands the command to it over its
socket — the same socket, and the same check that the peer is this
user, as the hook's — and prints what it answers: the judge has the
vault, the rules and the wall's helper ready, so the command costs a
socket rather than a start-up. Interrupting exec stops the command
there. With no judge, exec opens the vault itself; either way the call
is the same.

Without --call, exec is a session of its own. --session is then a label
for the audit line, to find a session's calls by; it is not an identity
and grants nothing: whoever runs exec is the person, and the config's
agent (--agent) is whose rules apply.`,
		flags: f.Register,
		run: func(fs *flag.FlagSet, args []string) int {
			return runExec(f, args, stdout, stderr)
		},
	})
}

func runExec(f judgesock.ExecArgs, args []string, out, errw io.Writer) int {
	command, err := f.Command(args)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	src := source{config: f.Config, vault: f.Vault}
	cfg, err := src.load()
	if err != nil {
		return fail(exitUsage, "exec: %v", err)
	}
	p := cfg.Policy(f.Agent)
	if p == nil {
		return fail(exitUsage, "exec: no agent %q in the config", f.Agent)
	}
	cwd, err := judgesock.ExecCwd()
	if err != nil {
		errw.Write(execcmd.Reason(nil, "%v", err))
		return exitRefused
	}
	call := judgesock.ExecCall{CallID: f.Call, Label: f.Session, Cwd: cwd, Command: command, Timeout: f.Seconds(), Environ: os.Environ()}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	var r execcmd.Reply
	if c := hookcmd.DialJudge(cfg, p.Name); c != nil {
		// A judge (hook-judge, serve) has the vault, the rules and the
		// wall's helper ready: the command costs a socket, not a start.
		r = askJudge(ctx, c, cfg, p.Name, call)
	} else {
		g, err := server.OpenCall(cfg, p.Name)
		if err != nil {
			errw.Write(execcmd.Reason(nil, "%v", err))
			return exitRefused
		}
		defer g.Close()
		r = execcmd.Run(ctx, g, server.ExecRequest{Agent: p, CallID: call.CallID, Label: call.Label, Cwd: cwd, Args: call.Args()})
	}
	// The command's own output, as it is (Claude Code reads it as Bash's);
	// exec's own reasons in it went through the one escape (execcmd.Reason).
	out.Write(r.Stdout)
	errw.Write(r.Stderr)
	return r.Code
}

// askJudge hands the command to the judge on c, and closes the line (so
// the judge stops the command) when exec is interrupted.
func askJudge(ctx context.Context, c *os.File, cfg *config.Config, agent string, call judgesock.ExecCall) execcmd.Reply {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	a, err := judgesock.AskExec(c, judgesock.Request{Config: cfg.File, Digest: cfg.Digest, Agent: agent, Run: &call})
	if err != nil {
		return execcmd.Reply{Stderr: execcmd.Reason(nil, "%v", err), Code: execcmd.ExitRefused}
	}
	return execcmd.Reply{Stdout: a.Stdout, Stderr: a.Stderr, Code: a.Code}
}
