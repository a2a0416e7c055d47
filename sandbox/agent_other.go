//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// Agent is an agent's own process to start behind the wall.
type Agent struct {
	Wall                  *Wall
	Helper                string
	Path                  string
	Args, Env             []string
	Dir                   string
	Stdin, Stdout, Stderr *os.File
}

// AgentProcess is a started agent.
type AgentProcess struct{}

// StartAgent needs Linux.
func StartAgent(*Agent) (*AgentProcess, error) {
	return nil, errors.New("sandbox: vaultgate run needs Linux (mount, pid and user namespaces)")
}

// LookupUser resolves the agent's user.
func LookupUser(name string) (*User, error) { return lookupUser(name) }

func (*AgentProcess) Pid() int               { return 0 }
func (*AgentProcess) Signal(os.Signal) error { return errors.ErrUnsupported }
func (*AgentProcess) Kill()                  {}
func (*AgentProcess) Wait() (int, error)     { return -1, errors.ErrUnsupported }
func (*AgentProcess) Done() <-chan struct{}  { return nil }
