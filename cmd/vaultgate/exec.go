package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
)

// exitRefused is exec's status when vaultgate, not the command, ends the
// call: refused before it ran, unable to run it, or none of its changes
// applied. As env(1) and timeout(1) do, 125 stays out of the way of the
// statuses a command itself gives (126, 127, 128+N).
const exitRefused = 125

// execFlags are exec's flags.
type execFlags struct {
	src     source
	agent   string
	session string
	timeout time.Duration
	b64     string
}

func init() {
	var f execFlags
	register(&command{
		name:    "exec",
		summary: "run one bash command from a folder of the vault, as the MCP bash tool runs it",
		usage:   "(--config FILE | --vault DIR) [--agent NAME] [--session LABEL] [--timeout DUR] (--command-b64 B64 | -- CMD...)",
		help: `Runs one bash command from the current folder, which must be inside the
vault, through the same path as the MCP bash tool: the analysis and the
rules judge it first; it runs inside the OS wall, on an overlay of the
vault whose changes are judged and applied only if all are allowed (when
the wall is up); with the [bash] environment whitelist, secrets, limits
and timeout; and one audit line records it, with "via":"exec". Its
stdout and stderr are the command's own, and its exit status is the
command's. When vaultgate ends the call instead — a refusal before it
ran, a wall that wall = "required" needs and can't raise, a timeout past
--timeout's bounds, a commit refused or cut short — the reason goes to
stderr and the status is 125; nothing of the command's changes reached
the vault.

The command is the one argument after "--" (several are joined by single
spaces, as ssh joins them), or --command-b64, its bytes in standard
base64, which no shell quoting can alter: the hook hands Claude Code's
Bash commands to exec that way.

--session is a label for the audit line, to find a session's calls by;
it is not an identity and grants nothing: whoever runs exec is the
person, and the config's agent (--agent) is whose rules apply.`,
		flags: func(fs *flag.FlagSet) {
			f.src.flags(fs)
			fs.StringVar(&f.agent, "agent", config.DefaultAgent, "run as this agent of the config")
			fs.StringVar(&f.session, "session", "", "a label for the audit line's session (not an identity); default exec-<id>")
			fs.DurationVar(&f.timeout, "timeout", 0, "the command's timeout (rounded up to whole seconds), within [bash] max_timeout; default [bash] timeout")
			fs.StringVar(&f.b64, "command-b64", "", "the command, base64-encoded (instead of the words after --)")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			return runExec(f, args, stdout, stderr)
		},
	})
}

func runExec(f execFlags, args []string, out, errw io.Writer) int {
	refuse := func(format string, a ...any) int {
		fmt.Fprintf(errw, "vaultgate exec: "+format+"\n", a...)
		return exitRefused
	}
	command, err := execCommand(f.b64, args)
	if err != nil {
		return fail(exitUsage, "exec: %v", err)
	}
	cfg, err := f.src.load()
	if err != nil {
		return fail(exitUsage, "exec: %v", err)
	}
	p := cfg.Policy(f.agent)
	if p == nil {
		return fail(exitUsage, "exec: no agent %q in the config", f.agent)
	}
	callArgs := map[string]any{"command": command}
	if f.timeout != 0 {
		if f.timeout < 0 {
			return fail(exitUsage, "exec: --timeout %v is negative", f.timeout)
		}
		callArgs["timeout"] = int((f.timeout + time.Second - 1) / time.Second)
	}
	cwd, err := os.Getwd()
	if err == nil {
		cwd, err = filepath.EvalSymlinks(cwd)
	}
	if err != nil {
		return refuse("the current folder: %v", err)
	}
	label := f.session
	if label == "" {
		label = "exec-" + audit.NewID()
	}
	settle(cfg.AuditPath)
	g, closeAll, err := server.Open(cfg, server.OpenOptions{WallHelper: sandbox.HelperBeside(), Log: errw})
	if err != nil {
		return refuse("%v", err)
	}
	defer closeAll()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	caller := server.Caller{
		Via:     server.ViaExec,
		Session: &policy.Session{ID: label, Agent: p.Name, State: policy.NewState()},
		Policy:  p,
		Cwd:     cwd,
	}
	o := g.Call(ctx, caller, "bash", callArgs, server.Serve)
	switch {
	case o.Deny != nil:
		return refuse("refused: %s", o.Deny.Reason)
	case o.Err != nil:
		return refuse("%v", o.Err)
	case o.Result == nil:
		return refuse("the call came to nothing") // never: an allowed bash call has a result
	}
	res, _ := o.Result.Structured.(tools.BashOutput)
	io.WriteString(out, res.Stdout)
	io.WriteString(errw, res.Stderr)
	switch {
	case res.NotApplied != "":
		return refuse("%s", strings.TrimSpace(res.NotApplied))
	case res.TimedOut:
		fmt.Fprintf(errw, "vaultgate exec: the command timed out\n")
	}
	if res.ExitCode < 0 || res.ExitCode > 255 {
		return refuse("the command ended without an exit status")
	}
	return res.ExitCode
}

// execCommand is the command exec runs: --command-b64 decoded, or the
// words after "--".
func execCommand(b64 string, args []string) (string, error) {
	switch {
	case b64 != "" && len(args) > 0:
		return "", fmt.Errorf("give the command after -- or as --command-b64, not both")
	case b64 != "":
		b, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil {
			return "", fmt.Errorf("--command-b64: %v", err)
		}
		return string(b), nil
	case len(args) == 0:
		return "", fmt.Errorf("no command: give it after -- (vaultgate exec --config FILE -- 'ls -la')")
	}
	return strings.Join(args, " "), nil
}

// settle waits out the few milliseconds after another call's audit line
// (so its commit) during which the commit's files would look changed
// meanwhile to this call's transaction: a server waits that moment out
// between its own calls, and exec is one call per process.
func settle(auditPath string) {
	const margin = 25 * time.Millisecond
	fi, err := os.Stat(auditPath)
	if err != nil {
		return
	}
	if wait := time.Until(fi.ModTime().Add(margin)); wait > 0 && wait <= margin {
		time.Sleep(wait)
	}
}
