package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/hookcmd"
	"github.com/vaultgate/vaultgate/internal/judgesock"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/visible"
)

// judgeCheck is how often a judge looks at its config and its socket.
const judgeCheck = time.Second

func init() {
	var (
		src   source
		agent string
		idle  time.Duration
	)
	register(&command{
		name:    "hook-judge",
		summary: "answer vaultgate-hook's calls for one config and agent, until idle",
		usage:   "[--config FILE] [--agent NAME] [--idle DUR]",
		help: `Loads the config, opens the vault, the audit log and the history, compiles
the agent's rules, and answers the calls of vaultgate-hook for that config
and agent over a Unix socket (in $XDG_RUNTIME_DIR/vaultgate, or else
vaultgate-UID in the temporary folder), exactly as vaultgate hook would
judge them, each a line in the audit log. vaultgate-hook starts it on its
first call; there is no need to start it by hand.

It ends by itself when the config file is changed or removed (a hook of
the new config starts a judge of its own), when its socket is taken
away, after --idle without a call, or on SIGINT/SIGTERM. It exits 0 at
once if another judge already answers for the config and agent. What it
would say goes to stderr and to hook-judge.log in the state folder.`,
		flags: func(fs *flag.FlagSet) {
			src.configFlag(fs)
			fs.StringVar(&agent, "agent", config.DefaultAgent, "answer for this agent of the config")
			fs.DurationVar(&idle, "idle", 10*time.Minute, "end after this long without a call")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "hook-judge takes no arguments (got %q)", args[0])
			}
			if idle <= 0 {
				return fail(exitUsage, "hook-judge: --idle must be positive")
			}
			return hookJudge(&src, agent, idle)
		},
	})
}

func hookJudge(src *source, agent string, idle time.Duration) int {
	if !judgesock.Supported {
		return fail(1, "hook-judge: no judge can be reached on this system; vaultgate-hook judges each call with vaultgate hook")
	}
	cfg, err := src.load()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	p := cfg.Policy(agent)
	if p == nil {
		return fail(exitUsage, "no agent %q in the config", agent)
	}
	var logOut io.Writer = stderr
	if f, err := os.OpenFile(filepath.Join(cfg.StateDir, "hook-judge.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
		defer f.Close()
		logOut = io.MultiWriter(stderr, f)
	}
	// What the judge says may name the vault's files: through the one
	// escape, for whoever reads its stderr or its log.
	logOut = visible.Writer{W: logOut, Mode: visible.Block}
	errLog := log.New(logOut, fmt.Sprintf("vaultgate hook-judge %d: ", os.Getpid()), log.LstdFlags)
	// A judge is a server: it answers many calls, and what its start-up
	// settles it does under the vault lock, so a server running beside
	// it is not disturbed.
	g, err := server.OpenServer(cfg, logOut)
	if err != nil {
		errLog.Printf("%v", err)
		return openFailed(err)
	}
	// A judge whose config is gone leaves the gate as it is: its state
	// folder is likely going too, and a close writes into it (the
	// history's log sealed into a pack); the next open settles it.
	gone := false
	defer func() {
		if !gone {
			g.Close()
		}
	}()
	judge := hookcmd.ListenWarmFor(g, cfg, []string{p.Name}, errLog)
	defer judge.Close()
	if !judge.Listening() {
		return exitOK // another judge answers, or none can listen (said on errLog)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(judgeCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return exitOK
		case <-tick.C:
		}
		if why := judgeEnds(cfg, judge, idle); why != "" {
			errLog.Printf("ending: %s", why)
			_, err := os.Stat(cfg.File)
			gone = errors.Is(err, fs.ErrNotExist)
			return exitOK
		}
	}
}

// judgeEnds says why the judge should end now, or "".
func judgeEnds(cfg *config.Config, judge *hookcmd.WarmJudge, idle time.Duration) string {
	if d := judge.Idle(); d >= idle {
		return fmt.Sprintf("no call for %s", d.Round(time.Second))
	}
	if _, digest, err := judgesock.ConfigKey(cfg.File); err != nil || digest != cfg.Digest {
		return "the config was changed or removed"
	}
	if judge.Lost() {
		return "its socket was taken away"
	}
	return ""
}
