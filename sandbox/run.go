package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a call whose Request.Timeout is 0.
const DefaultTimeout = 2 * time.Minute

// ExitTimedOut is Result.ExitCode when the timeout ended the call, as
// timeout(1) reports it.
const ExitTimedOut = 124

// Secret is a value given to a command through its environment, under
// Name, and only when the command's analysis calls one of Commands (base
// names: "git", "gh"). It never goes into argv.
type Secret struct {
	Name     string
	Value    string
	Commands []string
}

// Request is one bash call.
type Request struct {
	Command string // the bash command
	Dir     string // the working directory: the vault root; absolute
	// Env is the whitelist of variable names passed through from Environ
	// when set (config bash.env); Blocked names never pass.
	Env     []string
	Environ []string // the environment to pick from: os.Environ() in production
	// Home is HOME for the child. When empty, Run creates a private folder
	// and removes it when the call is over.
	Home     string
	Programs []string // the programs the analysis found (base names), to match Secrets
	Secrets  []Secret
	Timeout  time.Duration // 0 is DefaultTimeout
	// MaxOutput is the number of bytes kept of each of stdout and stderr:
	// the first and the last half, with a notice of what was cut between
	// them. 0 is DefaultMaxOutput.
	MaxOutput int
	// Wall, when set, runs the command inside the OS wall built from the
	// zone table (see Wall and WallConfig); nil runs it on the analysis
	// alone, contained but not walled.
	Wall *WallConfig

	// Ahead starts the wall's helper of the next call when this one ends,
	// for a server that runs many: the next walled call then skips its
	// helper's start (ahead_linux.go).
	Ahead bool

	contain containMode // tests force the fallback with it
}

// Result is what a call did.
type Result struct {
	// ExitCode is bash's exit status; 128+N when a signal N killed it, as
	// bash reports it; ExitTimedOut when the timeout ended the call; -1
	// when the context was cancelled.
	ExitCode int
	Stdout   string // masked; capped as MaxOutput says
	Stderr   string
	TimedOut bool
	// Signal is the signal that ended bash itself (0 when it exited): a
	// call killed from outside (the OOM killer, a limit), whose changes
	// must not be taken as its work.
	Signal int
	// Truncated is true when either stream was cut; StdoutCut and StderrCut
	// are how many bytes each lost.
	Truncated            bool
	StdoutCut, StderrCut int64
	Duration             time.Duration
	// Isolation names the layers that held the call: "pidns" (a new pid
	// namespace), "userns" (a user namespace, to get the pid namespace
	// when not root) or "sweep" (no namespace could be had: the call's
	// processes were found in /proc and killed); then the wall's layers,
	// when it was up: "mountns", "ipcns", "utsns", "netns",
	// "landlock-abiN", "nonewprivs", "caps-dropped", "rlimits",
	// "pidmax-N", "overlay" (the vault was an overlay: its changes are in
	// WallConfig.Overlay.Upper, not in the vault), "uid:NAME", and the
	// helper that raised them (with the overlay, "layer:memory" or
	// "layer:disk" says where its upper layer was):
	// "helper:self" (this binary re-executed) or "helper:vaultgate-wall".
	Isolation []string
	// Upper is the in-memory layer's upper folder (WallConfig.Overlay.
	// Memory), on the call's own tmpfs, which lives as long as this stays
	// open: read the command's changes through it (/proc/self/fd/N), then
	// close it. Set only when Run returns no error.
	Upper *os.File
}

// ErrUnsupported is returned where the runner has no way to contain a
// command's processes.
var ErrUnsupported = errors.New("sandbox: running bash needs Linux")

// Run runs r.Command and returns what it printed and how it ended. A
// command that fails or times out is not an error: the Result says so. The
// error is for a call that could not be made, or whose context was
// cancelled (the Result then holds what was printed until then).
//
// Run returns only when every process of the call has ended.
func Run(ctx context.Context, r Request) (Result, error) {
	if err := r.check(); err != nil {
		return Result{}, err
	}
	secretVars, err := secretEnv(r.Secrets, r.Programs)
	if err != nil {
		return Result{}, err
	}
	home := r.Home
	switch {
	case home == "" && r.Wall != nil && r.Wall.Layers.Mount:
		// Inside the new root the home is a tmpfs of the wall's own, under
		// the wall's own /tmp: nothing of it is on the host, so nothing is
		// made there (a folder made and removed cost 0.1-0.3 ms a call).
		// Each call's is fresh and its own; its name is the process's, so
		// that a helper started ahead makes it before its call comes.
		home = wallHome()
	case home == "":
		home, err = os.MkdirTemp("", "vaultgate-home-")
		if err != nil {
			return Result{}, fmt.Errorf("sandbox: private home: %w", err)
		}
		// Every process of the call has ended when run returns, so nothing
		// can write here any more.
		defer os.RemoveAll(home)
	}
	var wall *Wall
	var mounts *mountRead
	if r.Ahead && r.Wall != nil && r.contain == containAuto {
		// A helper started ahead serves the call only if the server's
		// mount table is still the one it copied (takeSpare): read it
		// now, beside the wall's building, not after it.
		mounts = readMounts()
	}
	if r.Wall != nil {
		if wall, err = buildWallFor(r.Wall, home); err != nil {
			return Result{}, err
		}
	}
	c := call{
		wall:    wall,
		command: r.Command,
		dir:     r.Dir,
		env:     mergeEnv(BuildEnv(r.Env, r.Environ, home), secretVars),
		timeout: r.Timeout,
		max:     r.MaxOutput,
		secrets: r.Secrets,
		ahead:   r.Ahead,
		mounts:  mounts,
		contain: r.contain,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.max == 0 {
		c.max = DefaultMaxOutput
	}
	return run(ctx, &c)
}

func (r *Request) check() error {
	switch {
	case strings.IndexByte(r.Command, 0) >= 0:
		return errors.New("sandbox: command holds a NUL byte")
	case r.Timeout < 0:
		return fmt.Errorf("sandbox: timeout %v is negative", r.Timeout)
	case r.MaxOutput < 0:
		return fmt.Errorf("sandbox: max output %d is negative", r.MaxOutput)
	case !filepath.IsAbs(r.Dir):
		return fmt.Errorf("sandbox: working directory %q is not absolute", r.Dir)
	case r.Home != "" && !filepath.IsAbs(r.Home):
		return fmt.Errorf("sandbox: home %q is not absolute", r.Home)
	}
	fi, err := os.Stat(r.Dir)
	if err != nil {
		return fmt.Errorf("sandbox: working directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("sandbox: working directory %q is not a directory", r.Dir)
	}
	return nil
}

// wallHome is the name of the home inside the wall, one per process.
var wallHome = sync.OnceValue(func() string {
	var b [8]byte
	rand.Read(b[:])
	return "/tmp/vaultgate-home-" + hex.EncodeToString(b[:])
})

// buildWallFor builds the call's wall and resolves its user.
func buildWallFor(cfg *WallConfig, home string) (*Wall, error) {
	w, err := BuildWall(cfg, home)
	if err != nil {
		return nil, err
	}
	if cfg.RunAs != "" {
		if w.RunAs, err = lookupUser(cfg.RunAs); err != nil {
			return nil, err
		}
	}
	if w.Overlay != nil && w.Overlay.Memory == nil {
		if err := prepareOverlay(w); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// call is a checked Request, ready to run.
type call struct {
	wall    *Wall // nil: no wall
	command string
	dir     string
	env     []string
	timeout time.Duration
	max     int
	secrets []Secret
	ahead   bool
	mounts  *mountRead // the server's mount table, being read; nil unread
	contain containMode
}

// mountRead is the server's mount table (its sha256), read in the
// background.
type mountRead struct {
	done chan struct{}
	sum  [sha256.Size]byte
	err  error
}

// table waits for the reading.
func (m *mountRead) table() ([sha256.Size]byte, error) {
	<-m.done
	return m.sum, m.err
}

// containMode chooses how a call's processes are contained.
type containMode int

const (
	containAuto  containMode = iota // a pid namespace where one can be had, else the sweep
	containSweep                    // the sweep only: the fallback, forced by tests
)
