package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

func init() {
	var src source
	register(&command{
		name:    "serve",
		summary: "serve the vault to an MCP client over stdio",
		usage:   "(--config FILE | --vault DIR)",
		help: `Serves the vault's tools (read, write, edit, move, delete, list, search)
over MCP on stdin and stdout: this is the command an MCP client such as
Claude Code launches. One process is one session. Every call is checked
against the zones and written to the audit log before its result goes back.`,
		flags: src.flags,
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "serve takes no arguments (got %q)", args[0])
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			return serveStdio(cfg)
		},
	})
}

func serveStdio(cfg *config.Config) int {
	g, closeAll, err := openGate(cfg, false)
	if err != nil {
		return fail(1, "%v", err)
	}
	defer closeAll()
	p := cfg.Policy(config.DefaultAgent)
	session := &policy.Session{ID: "stdio-" + audit.NewID(), Agent: p.Name, State: policy.NewState()}
	if isTerminal(os.Stdin) {
		// A person started this by hand: say what it is and how to use it,
		// on stderr, since stdout belongs to the protocol.
		fmt.Fprintf(os.Stderr, "vaultgate %s: serving %s over MCP on stdin/stdout\n", version, cfg.Vault)
		fmt.Fprintf(os.Stderr, "  audit log: %s\n", cfg.AuditPath)
		fmt.Fprintf(os.Stderr, "  zones:     vaultgate zones %s\n", describeSource(cfg))
		fmt.Fprintf(os.Stderr, "  connect:   let your MCP client launch this command (see `vaultgate init`); Ctrl-D ends it\n")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errLog := log.New(os.Stderr, "vaultgate: ", 0)
	if err := g.ServeStdio(ctx, p, session, os.Stdin, os.Stdout, errLog); err != nil && ctx.Err() == nil {
		return fail(1, "%v", err)
	}
	return exitOK
}

func describeSource(cfg *config.Config) string {
	if cfg.File != "" {
		return "--config " + cfg.File
	}
	return "--vault " + cfg.Vault
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// secretValues are the values of configured secrets, to be masked in the log.
func secretValues(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.Agents {
		for _, s := range p.Bash.Secrets {
			if v := os.Getenv(s.FromEnv); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
