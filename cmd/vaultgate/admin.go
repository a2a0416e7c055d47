package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/admin"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/transport"
	"github.com/vaultgate/vaultgate/vaultid"
)

// adminTokenEnv holds the panel's token. Like every VAULTGATE_* variable it
// never reaches bash's children.
const adminTokenEnv = "VAULTGATE_ADMIN_TOKEN"

func init() {
	var src logSource
	var listen, tokenFile string
	register(&command{
		name:    "admin",
		summary: "serve a read-only web page of the audit log, live, behind a token",
		usage:   "[--audit FILE | --config FILE] [--listen 127.0.0.1:PORT] [--token-file FILE]",
		help: `Serves a read-only web page of the audit log. It opens on today: the
counts, per agent and per session, the sessions newest first (one click
shows a session's calls in order), then the day's calls live as they come,
with what needs a look (denies, failures, bash doing what was not
predicted, many files at once, deletes) standing out. Search over paths,
commands and reasons, filters by agent, via, tool, decision and time, kept
in the URL; one call's full record with its effects and their zones, a bash
call's command, exit code and output; charts of calls and denies over
time, by tool and by rule. A call that changed the vault shows its
diff (from the history in the state folder) and the "vaultgate undo ID"
line to copy. With --config the history is the config's state folder's,
and the panel shows only the lines and changes of the config's vault
(never another's that shares the log); with only --audit FILE the state
folder is taken to be the audit log's folder, and every line is shown.
The page is embedded in the binary and fetches nothing from elsewhere.

With --config the page can also undo a call, or a whole session: it
shows first what undo would do to each path (the plan "vaultgate undo
--dry-run" prints), then undoes it once you confirm, as vaultgate undo
does (the same conflict rules and words; an audit line of yours, via
"panel"). It is the panel's one act, a POST that needs the token in its
Authorization header (never a cookie or the URL), so another page can't
make your browser send it.

The token comes from $` + adminTokenEnv + ` or --token-file (at least 16
characters), never from a flag; without one the panel does not start. The
page asks for it once. An address without a host (":8090") binds to
loopback; any other host works but prints a warning.`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&listen, "listen", "127.0.0.1:8090", "the address to serve on")
			fs.StringVar(&tokenFile, "token-file", "", "read the token from this file instead of $"+adminTokenEnv)
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "admin takes no arguments, only flags")
			}
			path, err := src.path()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			token, err := adminToken(tokenFile)
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			if src.config != "" {
				if err := notAnAgentToken(src.config, token); err != nil {
					return fail(exitUsage, "%v", err)
				}
			}
			state, cfgPath, err := src.stateDir(path)
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			scope, err := src.vaultScope()
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			undo, err := src.personUndo()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			panel, err := admin.New(admin.Options{Log: path, Token: token, History: history.Dir(state), Config: cfgPath,
				Index: admin.IndexFile(state, path), Scope: scope, Undo: undo})
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			return serveAdmin(panel, listen, path)
		},
	})
}

// stateDir is the folder the panel reads diffs from (its history) and
// keeps its index in: the config's state folder, or else the audit log's
// own folder (the state folder is the log's). cfgPath is the config as
// the undo line names it, absolute.
func (s *logSource) stateDir(logPath string) (dir, cfgPath string, err error) {
	if s.config != "" {
		cfg, err := config.Load(s.config)
		if err != nil {
			return "", "", err
		}
		if cfgPath, err = filepath.Abs(s.config); err != nil {
			return "", "", err
		}
		return cfg.StateDir, cfgPath, nil
	}
	abs, err := filepath.Abs(logPath)
	if err != nil {
		return "", "", err
	}
	return filepath.Dir(abs), "", nil
}

// vaultScope is whose lines the panel shows: with --config, the config's
// vault's alone (package vaultid), as the state folder's registry stands
// at each request; with only --audit FILE, nil: every line of the log.
func (s *logSource) vaultScope() (func() (vaultid.Scope, error), error) {
	if s.config == "" {
		return nil, nil
	}
	cfg, err := config.Load(s.config)
	if err != nil {
		return nil, err
	}
	id, err := vaultid.Open(cfg.StateDir, cfg.Vault)
	if err != nil {
		return nil, err
	}
	return func() (vaultid.Scope, error) { return vaultid.ScopeOf(cfg.StateDir, id) }, nil
}

// personUndo is the panel's undo: with --config, each request opens the
// config's vault for the person (server.OpenPerson, as vaultgate undo
// does), undoes or plans through its gate (Gate.Undo, audited via
// "panel") and closes it; with only --audit FILE, nil: the panel knows no
// vault to undo in.
func (s *logSource) personUndo() (func(server.UndoRequest) (*server.Undone, error), error) {
	if s.config == "" {
		return nil, nil
	}
	cfg, err := config.Load(s.config)
	if err != nil {
		return nil, err
	}
	return func(req server.UndoRequest) (*server.Undone, error) {
		g, err := server.OpenPerson(cfg)
		if err != nil {
			return nil, err
		}
		defer g.Close()
		return g.Undo(req)
	}, nil
}

// adminToken reads the panel's token from the file, or else the
// environment; having none is an error, never an open panel.
func adminToken(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("--token-file %s is empty", file)
		}
		return tok, nil
	}
	if tok := strings.TrimSpace(os.Getenv(adminTokenEnv)); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("no admin token: set $%s or give --token-file FILE (at least %d characters); the panel never runs without one", adminTokenEnv, admin.MinTokenLen)
}

// notAnAgentToken refuses an admin token that an agent also holds: the
// log is hidden from the agent, and a shared token would show it anyway.
func notAnAgentToken(cfgPath, token string) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	tokens, err := transport.Tokens(cfg)
	if err != nil {
		return nil // no HTTP agents configured, so none holds a token
	}
	for name, t := range tokens {
		if t == token {
			return fmt.Errorf("the admin token is agent %q's HTTP token too: give the panel its own", name)
		}
	}
	return nil
}

func serveAdmin(panel *admin.Server, addr, logPath string) int {
	// Closed on every way out, a bad --listen too: the panel's first read
	// of the log runs in the background and keeps its index when it ends.
	defer func() {
		if cerr := panel.Close(); cerr != nil {
			fmt.Fprintf(stderr, "vaultgate: could not keep the panel's index (the next start reads the log again): %v\n", cerr)
		}
	}()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fail(exitUsage, "--listen %q: want HOST:PORT or :PORT (%v)", addr, err)
	}
	if host == "" {
		host = "127.0.0.1" // loopback unless told otherwise
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return fail(1, "%v", err)
	}
	if ip := net.ParseIP(host); (ip == nil && host != "localhost") || (ip != nil && !ip.IsLoopback()) {
		fmt.Fprintf(stderr, "vaultgate: WARNING: the admin panel is on %s, which is not loopback: anyone who can reach it and holds the token can read the whole audit log. Put TLS in front of it.\n", ln.Addr())
	}
	fmt.Fprintf(stderr, "vaultgate %s: audit panel for %s at http://%s/\n", version, logPath, ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{
		Handler: panel, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		// Live streams end with the server, not when the browser goes.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(shut) != nil {
			srv.Close() // live streams do not end by themselves
		}
	}()
	err = srv.Serve(ln)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fail(1, "%v", err)
	}
	return exitOK
}
