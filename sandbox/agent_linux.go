package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// Agent is an agent's own process to start behind the wall (vaultgate
// run): the program, as it will be found inside the view (absolute), its
// argv, environment and working folder inside the view, and its standard
// files (nil is /dev/null). Nothing else is inherited.
type Agent struct {
	Wall                  *Wall // from AgentWall
	Helper                string
	Path                  string
	Args, Env             []string
	Dir                   string
	Stdin, Stdout, Stderr *os.File
}

// AgentProcess is a started agent: pid 1 of a pid namespace of its own,
// so that when it ends the kernel ends everything it started.
type AgentProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// LookupUser resolves the agent's user, refusing root.
func LookupUser(name string) (*User, error) { return lookupUser(name) }

// agentCaps are what the helper keeps through its exec in a user
// namespace that maps the launcher's own uid (not root): enough to build
// the view and then drop everything, including these, before the agent
// runs.
var agentCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE}

// StartAgent builds the wall's view with the helper and execs the agent
// in it. It returns once the helper has said it is about to exec the
// agent, or with the reason the wall could not stand up (then nothing of
// the agent ran).
func StartAgent(a *Agent) (*AgentProcess, error) {
	w := a.Wall
	if w == nil || !w.Layers.Mount {
		return nil, errors.New("sandbox: agent: no wall")
	}
	mnt, err := mountNS()
	if err != nil {
		return nil, fmt.Errorf("sandbox: agent: own mount namespace: %w", err)
	}
	w.HostMountNS = mnt
	root := os.Geteuid() == 0
	if root && w.RunAs == nil {
		return nil, errors.New("sandbox: agent: a root launcher needs the agent's user")
	}
	env := a.Env
	if env == nil {
		env = []string{}
	}
	plan := helperPlan{Version: planVersion, Wall: w, Bash: a.Path, Args: a.Args, Env: env, Dir: a.Dir, UserNS: !root, HostMNT: mnt}
	pf, err := planFile(&plan)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	sr, sw, err := statusSocket()
	if err != nil {
		return nil, fmt.Errorf("sandbox: agent: status socket: %w", err)
	}
	defer sr.Close()
	attr := &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWPID | wallCloneflags(w),
		// No controlling terminal: the agent can't push input into the
		// person's terminal (TIOCSTI) nor signal its shell's job.
		Setsid:    true,
		Pdeathsig: syscall.SIGKILL,
	}
	if !root {
		// The same uid and gid inside as outside, and nothing else: the
		// helper keeps what it needs to build the view through its exec
		// as ambient capabilities, and drops them all before the agent.
		uid, gid := os.Geteuid(), os.Getegid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		attr.AmbientCaps = agentCaps
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	std := func(f *os.File) *os.File {
		if f == nil {
			return devnull
		}
		return f
	}
	cmd := &exec.Cmd{
		Path: helperPath(a.Helper), Args: []string{HelperBinary, HelperArg}, Env: []string{}, Dir: "/",
		Stdin: std(a.Stdin), Stdout: std(a.Stdout), Stderr: std(a.Stderr),
		ExtraFiles: []*os.File{pf, sw}, SysProcAttr: attr,
	}
	if err := cmd.Start(); err != nil {
		sw.Close()
		return nil, fmt.Errorf("sandbox: agent: starting the wall's helper %s: %w", cmd.Path, err)
	}
	sw.Close()
	p := &AgentProcess{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	if _, err := readStatus(sr, false); err != nil {
		p.Kill()
		<-p.done
		return nil, fmt.Errorf("sandbox: agent: %w", err)
	}
	return p, nil
}

// Pid is the agent's pid in the launcher's pid namespace.
func (p *AgentProcess) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the agent (pid 1 of its namespace: a signal it has
// no handler for is ignored, except SIGKILL).
func (p *AgentProcess) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill ends the agent and, with it, every process of its namespace.
func (p *AgentProcess) Kill() { p.cmd.Process.Kill() }

// Done is closed when the agent has ended and been reaped.
func (p *AgentProcess) Done() <-chan struct{} { return p.done }

// Wait waits for the agent and returns its exit status, 128+N when signal
// N ended it.
func (p *AgentProcess) Wait() (int, error) {
	<-p.done
	return exitCode(p.cmd.ProcessState), nil
}
