package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/hookcmd"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/transport"
	"github.com/vaultgate/vaultgate/visible"
)

func init() {
	var src source
	var httpAddr string
	register(&command{
		name:    "serve",
		summary: "serve the vault to an MCP client over stdio, or Streamable HTTP",
		usage:   "[--config FILE | --vault DIR] [--http ADDR]",
		help: `Serves the vault's tools (read, write, edit, move, delete, list, search,
bash) over MCP on stdin and stdout: this is the command an MCP client such
as Claude Code launches. One process is one session. Every call is checked
against the zones and written to the audit log before its result goes back.

With --http ADDR it serves Streamable HTTP at /mcp instead. Every request
needs a bearer token: the default agent's from $VAULTGATE_TOKEN (or [http]
token_env / token_file), each [agents.NAME]'s from its own token_env or
token_file — never from a flag. The token names the agent, and the agent is
the session. ADDR without a host ("` + ":8080" + `") binds to loopback; binding
elsewhere works but warns.

Without --config or --vault the config is $VAULTGATE_CONFIG's, else the one
vaultgate init set up for the vault that holds the current folder. A
protected or hidden entry of [zones] that names nothing on the disk (a
typo: "Archve") stops it with exit 2 and a "did you mean"; end the entry
with ? for a folder that is to appear later (".trash?").`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&httpAddr, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "serve takes no arguments (got %q)", args[0])
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			// An entry that leaves open what it was to close stops the
			// gate from opening (config.ZonesReady, in server.OpenServer);
			// one that opens nothing is only said.
			for _, m := range cfg.MissingZones() {
				if !m.Opens && !m.Later {
					fmt.Fprintf(stderr, "vaultgate: warning: %s (vaultgate doctor)\n", visible.Line.Escape(m.String()))
				}
			}
			if httpAddr != "" {
				return serveHTTP(cfg, httpAddr)
			}
			return serveStdio(cfg)
		},
	})
}

// serverLog is where a server says what it does for the person: its
// stderr, through the one escape (what it says at start-up and of a
// failed call may name the vault's files), its own lines kept.
var serverLog = visible.Writer{W: os.Stderr, Mode: visible.Block}

func serveStdio(cfg *config.Config) int {
	g, err := server.OpenServer(cfg, serverLog)
	if err != nil {
		return openFailed(err)
	}
	defer g.Close()
	errLog := log.New(serverLog, "vaultgate: ", 0)
	// Claude Code's hook for an agent with rules asks this server, which
	// has them compiled, rather than start CEL in a process of its own.
	judge := hookcmd.ListenWarm(g, cfg, errLog)
	defer judge.Close()
	p := cfg.Policy(config.DefaultAgent)
	session := &policy.Session{ID: "stdio-" + audit.NewID(), Agent: p.Name, State: policy.NewState()}
	if id := claudeSession(os.Getenv("CLAUDE_CODE_SESSION_ID")); id != "" {
		// Claude Code names its session to the servers it starts: the
		// server's lines then carry the same session as the hook's.
		session.ID = id
	}
	if isTerminal(os.Stdin) {
		// A person started this by hand: say what it is and how to use it,
		// on stderr, since stdout belongs to the protocol.
		fmt.Fprintf(serverLog, "vaultgate %s: serving %s over MCP on stdin/stdout\n", version, cfg.Vault)
		fmt.Fprintf(serverLog, "  audit log: %s\n", cfg.AuditPath)
		fmt.Fprintf(serverLog, "  zones:     vaultgate zones %s\n", describeSource(cfg))
		fmt.Fprintf(serverLog, "  connect:   let your MCP client launch this command (see `vaultgate init`); Ctrl-D ends it\n")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := transport.ServeStdio(ctx, g, p, session, os.Stdin, os.Stdout, errLog); err != nil && ctx.Err() == nil {
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

func serveHTTP(cfg *config.Config, addr string) int {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fail(exitUsage, "--http %q: want HOST:PORT or :PORT (%v)", addr, err)
	}
	if host == "" {
		host = "127.0.0.1" // loopback unless told otherwise
	}
	addr = net.JoinHostPort(host, port)
	tokens, err := transport.Tokens(cfg)
	if err != nil {
		return fail(1, "%v", err)
	}
	g, err := server.OpenServer(cfg, serverLog)
	if err != nil {
		return openFailed(err)
	}
	defer g.Close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fail(1, "%v", err)
	}
	if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
		fmt.Fprintf(os.Stderr, "vaultgate: WARNING: serving on %s, which is not loopback: anyone who can reach it and holds a token can act in the vault. Put TLS in front of it.\n", ln.Addr())
	}
	names := make([]string, 0, len(tokens))
	for n := range tokens {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(serverLog, "vaultgate %s: serving %s over Streamable HTTP at http://%s%s for agents %s\n",
		version, cfg.Vault, ln.Addr(), transport.Endpoint, strings.Join(names, ", "))
	fmt.Fprintf(serverLog, "  audit log: %s\n", cfg.AuditPath)
	srv := &http.Server{Handler: transport.HTTPHandler(g, tokens), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(1, "%v", err)
	}
	return exitOK
}

// claudeSession is Claude Code's session id as it gives it to the MCP
// servers it starts, or "" when it is absent or not an id (a label for the
// audit, not an identity: whoever starts the server chooses it).
func claudeSession(id string) string {
	if id == "" || len(id) > 128 {
		return ""
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return ""
		}
	}
	return id
}
