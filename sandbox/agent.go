package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// ChangesStart reports whether a variable named name must never be given
// to a program by anyone's choice: a name that is not a plain identifier,
// or one that changes what bash, the loader or the C library runs (LD_*,
// BASH_ENV, …). A credential's name (an API key) may be given on purpose;
// these may not.
func ChangesStart(name string) bool {
	return !validName(name) || execBlocked(name)
}

// AgentView is what an agent's own process (vaultgate run) may see: the
// wall's fixed system part (read-only /usr, /bin, /lib*, the few /etc
// files programs need, a fresh /proc, a minimal /dev, private /tmp,
// /var/tmp, /run and /dev/shm), its home, and the few host paths listed
// here. Nothing else of the host is there.
type AgentView struct {
	// Home is the agent's own home folder, bound writable at its own
	// path. It must exist.
	Home string
	// Hide are host folders covered by an empty tmpfs (the person's
	// home), so that nothing under them shows even where a bind lies
	// beneath.
	Hide []string
	// Cover are the paths that must not be there at all: the vault, the
	// config, the state folder, the audit log. One that would show
	// through the system part is covered by an empty, read-only mount;
	// the rest are simply absent. Home and Binds may not overlap them.
	Cover []string
	// Binds are host paths bound read-only at their own path: the run's
	// folder (its socket and MCP config), the vaultgate binary.
	Binds   []string
	Network bool  // the host's network; false: a network namespace with nothing in it
	User    *User // the agent's user (a root launcher); nil keeps the uid, in a user namespace
}

// agentSystemDirs are bound read-only into an agent's view beside the
// wall's system folders.
var agentSystemDirs = []string{"/opt"}

// AgentWall turns an agent's view into the plan the wall's helper builds.
// Layers says which layers to raise: all of the mount part, no_new_privs
// and the dropping of capabilities, the user switch when User is set, and
// the network namespace unless Network; Landlock, rlimits beyond core
// dumps and pid_max are the bash wall's, not the agent's.
func AgentWall(v AgentView) (*Wall, error) {
	if !filepath.IsAbs(v.Home) {
		return nil, fmt.Errorf("sandbox: agent: home %q is not absolute", v.Home)
	}
	clean := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			if p != "" {
				out = append(out, filepath.Clean(p))
			}
		}
		return out
	}
	covers := clean(v.Cover)
	for _, p := range append([]string{v.Home}, v.Binds...) {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sandbox: agent: %q is not absolute", p)
		}
		for _, c := range covers {
			if within(p, c) || within(c, p) {
				return nil, fmt.Errorf("sandbox: agent: %s overlaps %s, which the agent must never see", p, c)
			}
		}
	}
	w := &Wall{
		Hide:    clean(v.Hide),
		Network: v.Network,
		RunAs:   v.User,
		Layers: Layers{
			Mount: true, Net: !v.Network, NoNew: true, Caps: true,
			// Rlimits with zero Limits sets only RLIMIT_CORE to 0: no
			// core dump of a process that holds the agent's secrets.
			Rlimits: true,
			RunAs:   v.User != nil,
		},
		Required: true,
	}
	fi, err := os.Lstat(v.Home)
	if err != nil {
		return nil, fmt.Errorf("sandbox: agent: home: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: agent: home %s is not a folder", v.Home)
	}
	w.Mounts = append(w.Mounts, Mount{Path: filepath.Clean(v.Home), Kind: MountRW, Zone: "home", Dir: true, MakePoint: true})
	// /opt is system too for an agent, whose program may live there; the
	// covers below hold beneath it as beneath /usr.
	for _, d := range agentSystemDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			w.Mounts = append(w.Mounts, Mount{Path: d, Kind: MountRO, Zone: "system", Dir: true, MakePoint: true})
		}
	}
	for _, b := range clean(v.Binds) {
		fi, err := os.Lstat(b)
		if err != nil {
			return nil, fmt.Errorf("sandbox: agent: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("sandbox: agent: %s is a symlink", b)
		}
		w.Mounts = append(w.Mounts, Mount{Path: b, Kind: MountRO, Zone: "run", Dir: fi.IsDir(), MakePoint: true})
	}
	for _, c := range covers {
		fi, err := os.Lstat(c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // nothing there to hide
		case err != nil:
			return nil, fmt.Errorf("sandbox: agent: %w", err)
		case fi.Mode()&fs.ModeSymlink != 0:
			continue // a mount would follow it; and the link alone shows nothing
		}
		if !underSystem(c) && !slices.ContainsFunc(agentSystemDirs, func(d string) bool { return within(c, d) }) {
			continue // not bound at all, so not there
		}
		w.Mounts = append(w.Mounts, Mount{Path: c, Kind: MountEmpty, Zone: "covered", Dir: fi.IsDir()})
	}
	slices.SortStableFunc(w.Mounts, func(a, b Mount) int { return byDepth(a.Path, b.Path) })
	return w, nil
}
