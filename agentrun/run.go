package agentrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/server"
)

// Options are one `vaultgate run`.
type Options struct {
	Config  *config.Config
	Agent   string   // the [agents.NAME] whose policy the agent is held to; "" the default
	Command []string // the agent's program and its arguments
	Cwd     string   // its working folder inside the view; "" its home
	Claude  bool     // the program is Claude Code: add run --claude's flags
	Environ []string // the launcher's environment, to pick from
	// Stdin, Stdout and Stderr are the agent's descriptors 0–2 (nil is
	// /dev/null); it inherits nothing else.
	Stdin, Stdout, Stderr *os.File
	Exe                   string // this vaultgate binary, absolute: bound into the view for connect
	Helper                string // the wall's helper (sandbox.WallConfig.Helper)
	// Signals are passed on: the first ends the agent (SIGTERM, then
	// SIGKILL after Grace), a second kills it at once.
	Signals <-chan os.Signal
	// Forward are signals passed to the agent as they are (SIGWINCH: the
	// terminal's size changed, and the agent, in a session of its own,
	// would not hear of it).
	Forward <-chan os.Signal
	Grace   time.Duration // 0 is DefaultGrace
	Log     io.Writer     // what the person should know; nil is os.Stderr
}

// DefaultGrace is how long the agent has to end after a signal.
const DefaultGrace = 5 * time.Second

// Error is why a run did not start, or why it ended the agent.
type Error struct {
	Step string // "config", "user", "wall", "home", "environment", "agent", "server"
	Err  error
}

func (e *Error) Error() string { return "run: " + e.Step + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func fail(step string, format string, args ...any) error {
	return &Error{Step: step, Err: fmt.Errorf(format, args...)}
}

// Run starts the agent behind the wall, serves the vault to it on the
// run's socket until it ends, and returns its exit status (128+N when
// signal N ended it). The error is for a run that could not start (then
// nothing of the agent ran) or whose server failed (then the agent was
// ended).
func Run(ctx context.Context, o Options) (int, error) {
	cfg := o.Config
	if err := cfg.CheckRun(); err != nil {
		return 0, &Error{Step: "config", Err: err}
	}
	name := o.Agent
	if name == "" {
		name = config.DefaultAgent
	}
	pol := cfg.Policy(name)
	if pol == nil {
		return 0, fail("config", "no agent %q in %s", name, cfg.File)
	}
	if len(o.Command) == 0 || o.Command[0] == "" {
		return 0, fail("agent", "no command to run")
	}
	if !filepath.IsAbs(o.Exe) {
		return 0, fail("agent", "the vaultgate binary %q is not absolute", o.Exe)
	}
	logw := o.Log
	if logw == nil {
		logw = os.Stderr
	}
	errLog := log.New(logw, "vaultgate: ", 0)

	u, uid, gid, err := agentUser(cfg.Run.User)
	if err != nil {
		return 0, err
	}
	if err := wallStands(o.Helper, cfg.Run.Network == config.NetworkHost, u != nil); err != nil {
		return 0, err
	}
	if err := prepareHome(cfg.Run.Home, uid, gid); err != nil {
		return 0, err
	}
	dir, err := runDir(uid, gid)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "sock")
	tokenFile := filepath.Join(dir, "token")
	mcpPath := filepath.Join(dir, "mcp.json")
	token := newToken()
	if err := writeOwned(tokenFile, []byte(token+"\n"), 0o400, uid, gid); err != nil {
		return 0, err
	}
	mcp, err := mcpConfig(pol.Hook.ServerName, o.Exe, sock, tokenFile)
	if err != nil {
		return 0, fail("server", "%v", err)
	}
	if err := writeOwned(mcpPath, mcp, 0o444, uid, gid); err != nil {
		return 0, err
	}
	argv := append([]string{}, o.Command...)
	if o.Claude {
		settings := filepath.Join(dir, "claude-settings.json")
		b, err := claudeSettings(o.Exe, string(pol.Lang), pol.Hook.ServerName, sock, tokenFile)
		if err != nil {
			return 0, fail("agent", "%v", err)
		}
		if err := writeOwned(settings, b, 0o444, uid, gid); err != nil {
			return 0, err
		}
		argv = claude.RunArgs(argv, mcpPath, settings)
	}
	userName := ""
	if u != nil {
		userName = u.Name
	} else if cu, err := user.Current(); err == nil {
		userName = cu.Username
	}
	env, err := Env(cfg.Run, o.Environ, map[string]string{
		"HOME": cfg.Run.Home, "USER": userName, "LOGNAME": userName, MCPConfigEnv: mcpPath,
	})
	if err != nil {
		return 0, &Error{Step: "environment", Err: err}
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd = cfg.Run.Home
	}
	if !filepath.IsAbs(cwd) {
		return 0, fail("agent", "--cwd %q is not absolute", cwd)
	}
	var hide []string
	home := ""
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) && h != "/" {
		home = filepath.Clean(h)
		hide = append(hide, home)
	}
	path, _ := lookup(env, "PATH")
	// What the view shows already: the system, [run] read_only, its home.
	shows := slices.Concat(systemDirs, cfg.Run.ReadOnly, []string{cfg.Run.Home})
	prog, err := locate(argv, path, places(o.Environ, home), func(p string) bool {
		return slices.ContainsFunc(shows, func(d string) bool { return under(p, d) })
	})
	if err != nil {
		return 0, &Error{Step: "agent", Err: err}
	}
	if err := apart(cfg, home, prog.Binds); err != nil {
		return 0, &Error{Step: "agent", Err: err}
	}
	wall, err := sandbox.AgentWall(sandbox.AgentView{
		Home: cfg.Run.Home, Hide: hide,
		Cover:   []string{cfg.Vault, cfg.File, cfg.StateDir, cfg.AuditPath},
		Binds:   append(append([]string{dir, o.Exe}, cfg.Run.ReadOnly...), prog.Binds...),
		Network: cfg.Run.Network == config.NetworkHost,
		User:    u,
	})
	if err != nil {
		return 0, &Error{Step: "wall", Err: err}
	}

	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return 0, fail("server", "listening on %s: %v", sock, err)
	}
	if err := os.Chown(sock, uid, gid); err != nil {
		ln.Close()
		return 0, fail("server", "%v", err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return 0, fail("server", "%v", err)
	}
	gate, err := server.OpenServer(cfg, logw)
	if err != nil {
		ln.Close()
		return 0, fail("server", "%v", err)
	}
	defer gate.Close()
	runID := newRunID()
	// The run's id is its session's: every connection's calls, and the
	// hook's reports, are one session, which --session filters take as
	// the id run prints.
	session := &policy.Session{ID: runID, Agent: pol.Name, State: policy.NewState()}
	gw := &gateway{ln: ln, gate: gate, policy: pol, runID: runID, session: session, token: token, uid: os.Geteuid(), errLog: errLog, conns: map[net.Conn]bool{}}
	if u != nil {
		gw.uid = u.UID
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- gw.serve(sctx) }()
	defer gw.close()

	proc, err := sandbox.StartAgent(&sandbox.Agent{
		Wall: wall, Helper: o.Helper, Path: prog.Path, Args: prog.Args, Env: env, Dir: cwd,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
	})
	if err != nil {
		return 0, &Error{Step: "agent", Err: err}
	}
	fmt.Fprintf(logw, "vaultgate: run %s: %s started as %s (uid %d) behind the wall; the vault is served to it on %s\n", runID, prog.Found, userName, uid, sock)
	if len(prog.Binds) > 0 {
		fmt.Fprintf(logw, "vaultgate: run %s: shown read-only for it to start: %s\n", runID, strings.Join(prog.Binds, ", "))
	}
	fmt.Fprintf(logw, "vaultgate: run %s: its calls: vaultgate audit tail --session %s; its changes: vaultgate history --session %s, vaultgate undo --session %s\n", runID, runID, runID, runID)

	var runErr error
	grace := o.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	var deadline <-chan time.Time
	signalled := false
	for done := false; !done; {
		select {
		case <-proc.Done():
			done = true
		case err := <-served:
			// The agent's only way to the vault is gone: end it.
			if err == nil {
				err = errors.New("the server stopped")
			}
			runErr = &Error{Step: "server", Err: fmt.Errorf("%w; the agent was ended", err)}
			proc.Kill()
			served = nil
		case sig := <-o.Signals:
			if signalled {
				proc.Kill()
				continue
			}
			signalled = true
			fmt.Fprintf(logw, "vaultgate: run %s: %v: ending the agent\n", runID, sig)
			proc.Signal(syscall.SIGTERM)
			deadline = time.After(grace)
		case sig := <-o.Forward:
			proc.Signal(sig)
		case <-deadline:
			proc.Kill()
		case <-ctx.Done():
			proc.Kill()
		}
	}
	code, _ := proc.Wait()
	return code, runErr
}

// DefaultUser is the agent's user that init names for a root launcher.
const DefaultUser = "vaultgate-agent"

// UserAdd is the command that creates the agent's user name: a system
// user with a group of its own, no home of the host's (run gives it its
// own) and no login shell.
func UserAdd(name string) string {
	q, err := syntax.Quote(name, syntax.LangBash)
	if err != nil {
		q = name // a NUL, which config refuses in a user's name; shown through the CLI's escape
	}
	return "useradd --system --user-group --no-create-home --shell /usr/sbin/nologin " + q
}

// agentUser is the agent's user: required, and looked up, when the
// launcher is root; otherwise the launcher's own uid, in a user namespace.
func agentUser(name string) (u *sandbox.User, uid, gid int, err error) {
	if os.Geteuid() != 0 {
		if name != "" {
			cu, cerr := user.Current()
			if cerr != nil || cu.Username != name {
				return nil, 0, 0, fail("user", "[run] user %q: running the agent as another user needs vaultgate to run as root (it runs as uid %d); remove [run] user to run the agent as you, in a user namespace", name, os.Geteuid())
			}
		}
		return nil, os.Geteuid(), os.Getegid(), nil
	}
	if name == "" {
		return nil, 0, 0, fail("user", "[run] user is required when vaultgate runs as root: the agent must not run as root (name one in [run] user, e.g. %q, and create it: %s)", DefaultUser, UserAdd(DefaultUser))
	}
	su, err := sandbox.LookupUser(name)
	if err != nil {
		return nil, 0, 0, fail("user", "[run] user %q: %v (create it: %s)", name, errors.Unwrap(err), UserAdd(name))
	}
	return su, su.UID, su.GID, nil
}

// wallStands checks, before anything starts, that every layer the agent's
// wall needs is there.
func wallStands(helper string, network, switchUser bool) error {
	p := sandbox.ProbeWall(helper)
	var missing []string
	need := func(ok bool, name string) {
		if !ok {
			why := p.Missing[name]
			if why == "" {
				why = "unavailable"
			}
			missing = append(missing, name+" ("+why+")")
		}
	}
	need(p.Layers.Mount, "mount namespace")
	if !network {
		need(p.Layers.Net, "network namespace")
	}
	need(p.Layers.NoNew, "no_new_privs")
	need(p.Layers.Caps, "dropping capabilities")
	if switchUser {
		need(p.Layers.RunAs, "run_as")
	}
	if len(missing) > 0 {
		return fail("wall", "the wall can't stand up here, so the agent was not started: missing %s", strings.Join(missing, "; "))
	}
	return nil
}

// prepareHome makes the agent's home exist, as a folder of its user's
// own, mode 0700. An existing one must already be the agent's, or empty.
func prepareHome(home string, uid, gid int) error {
	fi, err := os.Lstat(home)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
			return fail("home", "%v", err)
		}
		if err := os.Mkdir(home, 0o700); err != nil {
			return fail("home", "%v", err)
		}
	case err != nil:
		return fail("home", "%v", err)
	case !fi.IsDir():
		return fail("home", "%s is not a folder (a symlink is not taken either)", home)
	default:
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != uid {
			ents, err := os.ReadDir(home)
			if err != nil || len(ents) > 0 {
				return fail("home", "%s belongs to uid %d, not to the agent's user (uid %d): give the agent a home of its own in [run] home", home, st.Uid, uid)
			}
		}
	}
	if err := os.Lchown(home, uid, gid); err != nil {
		return fail("home", "%v", err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		return fail("home", "%v", err)
	}
	return nil
}

// runDir is the run's own folder (the socket, the token, the MCP config):
// mode 0700, the agent's user's, bound read-only into the view.
func runDir(uid, gid int) (string, error) {
	base := os.TempDir()
	// A socket's path is at most 107 bytes.
	if len(base) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "vaultgate-run-")
	if err != nil {
		return "", fail("server", "the run's folder: %v", err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		os.RemoveAll(dir)
		return "", fail("server", "the run's folder: %v", err)
	}
	return dir, nil
}

func writeOwned(p string, b []byte, mode os.FileMode, uid, gid int) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fail("server", "%v", err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chown(p, uid, gid), os.Chmod(p, mode)); err != nil {
		return fail("server", "%s: %v", p, err)
	}
	return nil
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// apart refuses a bind of the agent's program that would show what the
// agent must never see: the vault, the config, the state folder, the audit
// log, or the person's home (or a folder holding it).
func apart(cfg *config.Config, home string, binds []string) error {
	for _, b := range binds {
		for _, ctl := range []struct{ what, path string }{
			{"the vault", cfg.Vault}, {"the config", cfg.File}, {"the state folder", cfg.StateDir}, {"the audit log", cfg.AuditPath},
		} {
			if ctl.path != "" && (under(b, ctl.path) || under(ctl.path, b)) {
				return fmt.Errorf("the agent's program needs %s shown, which overlaps %s (%s): install it apart from what the agent must never see", b, ctl.what, ctl.path)
			}
		}
		if b == "/" || home != "" && under(home, b) {
			return fmt.Errorf("the agent's program needs %s shown, which holds your home: install it in a folder of its own", b)
		}
	}
	return nil
}
