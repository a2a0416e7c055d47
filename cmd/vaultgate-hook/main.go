// Command vaultgate-hook is the Claude Code hook as Claude Code starts it,
// a new process for every tool call. It judges nothing itself: it hands
// the call to a judge, a `vaultgate hook-judge` (or `vaultgate serve`)
// process of the same config that has the vault, the audit log, the
// history and the rules open, over a Unix socket (internal/judgesock), and
// prints the judge's answer. When no judge is running it starts one and
// waits for it; when none can be had it becomes `vaultgate hook`, which
// judges the call on its own. So it links only the standard library and
// x/sys, and starts as fast as a bare Go binary: what Claude Code waits
// for on every call is the judging, not the loading.
//
// Claude Code lets a call through when a hook crashes, times out or prints
// bad JSON, so every failure here exits 2 (block) with the reason on
// stderr.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/internal/judgesock"
)

const usage = "--config FILE [--agent NAME] | exec ARGS (see vaultgate exec --help)"

const help = `The Claude Code PreToolUse and PostToolUse hook: reads the hook's JSON on
stdin and prints the answer of the judge for the config and agent, a
vaultgate process beside this binary that keeps them loaded
(vaultgate hook-judge, started here on the first call and ended by
itself when the config changes or after 10 minutes without a call; or a
vaultgate serve of the same config). Without a judge it runs
vaultgate hook, which judges the call alone. Same answers, same audit
lines: see vaultgate hook --help.

Every failure exits 2 with the reason on stderr, which Claude Code treats
as a deny.

vaultgate-hook exec ARGS is vaultgate exec for the hook's rewrite of a
Claude Code Bash: it hands the command to the running judge and prints
its answer, or, with no judge, becomes vaultgate exec ARGS.`

// exitDenied is a failure of the hook's own: Claude Code blocks the call.
const exitDenied = 2

// exitRefused is exec's status when vaultgate, not the command, ends the
// call (vaultgate exec's).
const exitRefused = 125

// judgeStart bounds the wait for a judge this hook started; past it the
// call is judged by vaultgate hook instead.
const judgeStart = 3 * time.Second

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "exec" {
		return runExec(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("vaultgate-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := fs.String("config", "", "the policy file (TOML); required")
	agent := fs.String("agent", judgesock.DefaultAgent, "judge as this agent of the config")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: vaultgate-hook %s\n\n%s\n\nflags:\n", usage, help)
		fs.PrintDefaults()
	}
	// Claude Code runs whatever the settings name, so even --help or a
	// mistyped flag is an answer it reads: exit 2 blocks the call, where
	// exit 0 would let it through.
	if err := fs.Parse(args); err != nil {
		return exitDenied
	}
	deny := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "vaultgate hook: denied: "+format+"\n", a...)
		return exitDenied
	}
	if fs.NArg() > 0 {
		return deny("unexpected arguments %q", fs.Args())
	}
	if *cfg == "" {
		return deny("no --config given")
	}
	exe, err := judgesock.Beside()
	if err != nil {
		return deny("%v: the hook hands every call to it", err)
	}
	abs, digest, err := judgesock.ConfigKey(*cfg)
	if err != nil {
		return deny("config: %v", err)
	}
	if c := judge(exe, abs, digest, *agent); c != nil {
		req := judgesock.Request{Config: abs, Digest: digest, Agent: *agent, Exec: exe, Env: judgesock.Environ(judgesock.HookEnv)}
		code, err := judgesock.Ask(c, req, stdin, stdout, stderr)
		if err != nil {
			return deny("%v", err)
		}
		return code
	}
	// No judge: vaultgate hook judges the call itself, from the same stdin,
	// still unread.
	argv := []string{exe, "hook", "--config", *cfg, "--agent", *agent}
	err = syscall.Exec(exe, argv, os.Environ())
	return deny("running %s hook: %v", exe, err)
}

// runExec is `vaultgate-hook exec`, the lean client the hook's rewrite of
// a Claude Code Bash names: it hands the command to the running judge for
// the config and agent (judgesock.AskExec), which runs it as `vaultgate
// exec` would, and prints the answer. So a Bash pays for this small
// binary's start and a socket, not the vaultgate binary's start (tens of
// milliseconds of package initialisation). Whenever it can't — no judge,
// no --config, any doubt about the arguments — it becomes `vaultgate exec`
// with the very same arguments, which reads them alike
// (judgesock.ExecArgs) and says what is wrong.
func runExec(args []string, stdout, stderr io.Writer) int {
	exe, err := judgesock.Beside()
	if err != nil {
		fmt.Fprintf(stderr, "vaultgate exec: %v\n", err)
		return exitRefused
	}
	if c, req, ok := execJudge(exe, args); ok {
		// Exec interrupted closes the connection, and the judge stops the
		// command: set up once the command is handed over, off its path
		// (a signal before then ends this process, which closes it too).
		a, err := judgesock.AskExecSent(c, req, func() {
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			go func() { <-stop; c.Close() }()
		})
		if err != nil {
			fmt.Fprintf(stderr, "vaultgate exec: %v\n", err)
			return exitRefused
		}
		stdout.Write(a.Stdout)
		stderr.Write(a.Stderr)
		return a.Code
	}
	err = syscall.Exec(exe, append([]string{exe, "exec"}, args...), os.Environ())
	fmt.Fprintf(stderr, "vaultgate exec: running %s exec: %v\n", exe, err)
	return exitRefused
}

// execJudge is the connection to the running judge for exec's arguments,
// and the request to send it; ok is false when there is none to have, or
// the arguments are for vaultgate exec to read and judge.
func execJudge(exe string, args []string) (*os.File, judgesock.Request, bool) {
	var a judgesock.ExecArgs
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a.Register(fs)
	if fs.Parse(args) != nil || a.Config == "" || a.Vault != "" || !judgesock.Supported {
		return nil, judgesock.Request{}, false
	}
	command, err := a.Command(fs.Args())
	if err != nil {
		return nil, judgesock.Request{}, false
	}
	cwd, err := judgesock.ExecCwd()
	if err != nil {
		return nil, judgesock.Request{}, false
	}
	abs, digest, err := judgesock.ConfigKey(a.Config)
	if err != nil {
		return nil, judgesock.Request{}, false
	}
	dir := judgesock.Dir()
	name, err := judgesock.Name(dir, abs, digest, a.Agent, exe)
	if err != nil || judgesock.CheckDir(dir) != nil {
		return nil, judgesock.Request{}, false
	}
	c, err := judgesock.Dial(name)
	if err != nil {
		return nil, judgesock.Request{}, false
	}
	call := judgesock.ExecCall{CallID: a.Call, Label: a.Session, Cwd: cwd, Command: command, Timeout: a.Seconds(), Environ: os.Environ()}
	return c, judgesock.Request{Config: abs, Digest: digest, Agent: a.Agent, Run: &call}, true
}

// judge connects to the judge for the config and agent, starting one if
// none is running; nil when none can be had here.
func judge(exe, abs, digest, agent string) *os.File {
	if !judgesock.Supported {
		return nil
	}
	dir := judgesock.Dir()
	name, err := judgesock.Name(dir, abs, digest, agent, exe)
	if err != nil {
		return nil
	}
	if judgesock.CheckDir(dir) == nil {
		if c, err := judgesock.Dial(name); err == nil {
			return c
		}
	}
	if judgesock.EnsureDir(dir) != nil {
		return nil
	}
	// A judge of its own session, so that it outlives this process and is
	// not in Claude Code's process group; its output goes to its log in
	// the state folder, and nothing of this process's stays open in it.
	cmd := exec.Command(exe, "hook-judge", "--config", abs, "--agent", agent)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	for wait, deadline := time.Millisecond, time.Now().Add(judgeStart); time.Now().Before(deadline); wait = min(2*wait, 20*time.Millisecond) {
		select {
		case <-exited:
			// It ended without listening (a config it can't load, or
			// another judge that came first): one last try, then alone.
			if c, err := judgesock.Dial(name); err == nil {
				return c
			}
			return nil
		case <-time.After(wait):
		}
		if c, err := judgesock.Dial(name); err == nil {
			return c
		}
	}
	return nil
}
