package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/sandbox"
)

// runFile is the [run] table: how `vaultgate run` starts the agent's own
// process.
type runFile struct {
	User     string          `toml:"user"`
	Home     string          `toml:"home"`
	Env      []string        `toml:"env"`
	Network  string          `toml:"network"`
	ReadOnly []string        `toml:"read_only"`
	Secrets  []runSecretFile `toml:"secrets"`
}

type runSecretFile struct {
	Name     string `toml:"name"`
	FromEnv  string `toml:"from_env"`
	Optional bool   `toml:"optional"`
}

// Network settings of [run].
const (
	NetworkHost = "host" // the host's network: the agent reaches its model's API
	NetworkNone = "none" // a network namespace of its own with nothing in it
)

// DefaultRunEnv is what [run] env passes when it is not set.
var DefaultRunEnv = []string{"PATH", "LANG", "LC_*", "TERM", "TZ"}

// RunReserved are the variables `vaultgate run` sets itself.
var RunReserved = []string{"HOME", "USER", "LOGNAME", "VAULTGATE_MCP_CONFIG"}

func defaultRun() runFile {
	return runFile{
		Home:    "~/.local/share/vaultgate/agent-home",
		Env:     slices.Clone(DefaultRunEnv),
		Network: NetworkHost,
	}
}

// Run holds the [run] settings.
type Run struct {
	// User is the agent's user; required when vaultgate runs as root,
	// looked up only by `vaultgate run` (serve does not need it).
	User string
	// Home is the agent's own home folder, absolute: created for the
	// agent's user, and kept between runs.
	Home string
	// Env are the names and globs (LC_*) of the launcher's variables
	// that reach the agent; a name that looks like a credential never
	// matches a glob.
	Env     []string
	Network string // NetworkHost or NetworkNone
	// ReadOnly are host paths, absolute, bound read-only at their own
	// path into the agent's view besides the system folders: where the
	// agent's program lives when that is not /usr (~/.local/bin/claude,
	// /opt/…).
	ReadOnly []string
	Secrets  []RunSecret
}

// RunSecret is a [[run.secrets]] entry: the agent's variable Name gets the
// value of the launcher's FromEnv, read when the run starts. An unset
// FromEnv stops the run, unless Optional: then the agent starts without
// it (Claude Code with a subscription's login kept in its home has no API
// key to be given).
type RunSecret struct {
	Name     string
	FromEnv  string
	Optional bool
}

// run checks [run] against the rest of the config.
//
// A [run] home that overlaps a control path is an error of the file only
// when the file has a [run] table: a config without one still serves a
// vault that holds the default home (a vault of ~), and `vaultgate run`
// refuses it then (CheckRun).
func (c *Config) run(base string, r runFile, explicit bool) (Run, error) {
	fail := func(key string, err error) error { return &Error{File: c.File, Key: "run." + key, Err: err} }
	out := Run{User: r.User, Network: r.Network}
	if r.User != "" && (strings.ContainsAny(r.User, "/:\x00 ") || r.User == "root") {
		return Run{}, fail("user", fmt.Errorf("%q: give the name of an unprivileged user (e.g. \"vaultgate-agent\")", r.User))
	}
	home, err := expandPath(base, r.Home)
	if err != nil {
		return Run{}, fail("home", err)
	}
	if home == "/" {
		return Run{}, fail("home", errors.New("must be a folder of the agent's own, not /"))
	}
	out.Home = home
	if explicit {
		if err := c.checkApart(home); err != nil {
			return Run{}, fail("home", err)
		}
	}
	for _, e := range r.Env {
		switch {
		case !validEnvGlob(e):
			return Run{}, fail("env", fmt.Errorf("%q is not a variable name or a glob of one (e.g. \"LC_*\")", e))
		case slices.Contains(RunReserved, e):
			return Run{}, fail("env", fmt.Errorf("%q is set by vaultgate run itself", e))
		case !strings.ContainsAny(e, "*?") && sandbox.ChangesStart(e):
			return Run{}, fail("env", fmt.Errorf("%q changes how programs start; it is never passed", e))
		case !strings.ContainsAny(e, "*?") && sandbox.Blocked(e):
			return Run{}, fail("env", fmt.Errorf("%q looks like a credential; give it to the agent as a [[run.secrets]] entry (name, from_env) if it is the agent's own", e))
		}
	}
	out.Env = r.Env
	for _, p := range r.ReadOnly {
		abs, err := expandPath(base, p)
		if err != nil {
			return Run{}, fail("read_only", err)
		}
		if abs == "/" {
			return Run{}, fail("read_only", errors.New("\"/\" would show the agent everything: list the folders its program needs"))
		}
		if err := c.checkApart(abs); err != nil {
			return Run{}, fail("read_only", err)
		}
		out.ReadOnly = append(out.ReadOnly, abs)
	}
	switch r.Network {
	case NetworkHost, NetworkNone:
	default:
		return Run{}, fail("network", fmt.Errorf("%q: must be %q or %q", r.Network, NetworkHost, NetworkNone))
	}
	seen := map[string]bool{}
	for i, s := range r.Secrets {
		key := fmt.Sprintf("secrets[%d]", i)
		switch {
		case !validEnvName(s.Name):
			return Run{}, fail(key+".name", fmt.Errorf("%q is not a variable name", s.Name))
		case slices.Contains(RunReserved, s.Name) || s.Name == "PATH":
			return Run{}, fail(key+".name", fmt.Errorf("%q is set by vaultgate run itself", s.Name))
		case sandbox.ChangesStart(s.Name):
			return Run{}, fail(key+".name", fmt.Errorf("%q changes how programs start; it is never given", s.Name))
		case seen[s.Name]:
			return Run{}, fail(key+".name", fmt.Errorf("%q is given twice", s.Name))
		case !validEnvName(s.FromEnv):
			return Run{}, fail(key+".from_env", fmt.Errorf("%q is not a variable name", s.FromEnv))
		}
		seen[s.Name] = true
		out.Secrets = append(out.Secrets, RunSecret(s))
	}
	return out, nil
}

// inside reports whether p is dir or lies beneath it.
func inside(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// validEnvGlob is a variable name, or one with * and ? in it.
func validEnvGlob(s string) bool {
	if !strings.ContainsAny(s, "*?") {
		return validEnvName(s)
	}
	return validEnvName(strings.NewReplacer("*", "A", "?", "A").Replace(s)) || strings.Trim(s, "*?") == ""
}

// CheckRun is what `vaultgate run` checks before it starts anything, on
// top of what Load checked: that the agent's home lies apart from the
// vault, the config, the state folder and the audit log.
func (c *Config) CheckRun() error {
	if err := c.checkApart(c.Run.Home); err != nil {
		return &Error{File: c.File, Key: "run.home", Err: err}
	}
	return nil
}

// checkApart reports a path of the agent's view that overlaps what it
// must never see.
func (c *Config) checkApart(home string) error {
	for _, ctl := range []struct{ what, path string }{
		{"the vault", c.Vault}, {"the config", c.File}, {"the state folder", c.StateDir}, {"the audit log", c.AuditPath},
	} {
		if ctl.path == "" {
			continue
		}
		if inside(home, ctl.path) || inside(ctl.path, home) {
			return fmt.Errorf("%s overlaps %s (%s): what the agent sees must lie apart from what it must never see", home, ctl.what, ctl.path)
		}
	}
	return nil
}
