package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// launchSpec is everything needed to start a call's first process. Today
// that process is bash itself. The wall (issue 4) changes only this step:
// it points path and args at the vaultgate binary re-executed as a helper,
// adds mount and network namespaces to the clone flags, and hands the
// helper its plan (mounts, Landlock rules, uid, limits) on an extra file;
// the helper builds the new root and then execs bash with exactly bashArgs
// and env. Containment, output and the timeout stay as they are.
type launchSpec struct {
	path  string   // the program, absolute
	args  []string // its argv, args[0] included
	env   []string
	dir   string
	attr  syscall.SysProcAttr
	files []*os.File // inherited as fd 3 and up
	// walled: the wall's helper, which must never run without the
	// namespaces it was asked for (no fallback to the sweep).
	walled bool
}

// bashCandidates are the only places bash is taken from: never the child's
// PATH, which the command controls.
var bashCandidates = []string{"/bin/bash", "/usr/bin/bash"}

func findBash() (string, error) {
	for _, p := range bashCandidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("sandbox: no bash at /bin/bash or /usr/bin/bash")
}

// bashArgs is the argv that runs command with no startup files.
func bashArgs(command string) []string {
	return []string{"bash", "--noprofile", "--norc", "-c", command}
}

// bashLaunch is the launch of today: bash directly.
func bashLaunch(c *call) (launchSpec, error) {
	bash, err := findBash()
	if err != nil {
		return launchSpec{}, err
	}
	return launchSpec{
		path: bash,
		args: bashArgs(c.command),
		env:  c.env,
		dir:  c.dir,
		attr: syscall.SysProcAttr{
			// Its own session: no controlling terminal, and the sweep's
			// first way of finding the call's processes.
			Setsid: true,
			// If the server dies, bash dies; in a pid namespace so does
			// everything else.
			Pdeathsig: syscall.SIGKILL,
		},
	}, nil
}

// command turns the spec into a Cmd with the given standard files.
func (s *launchSpec) command(stdin, stdout, stderr *os.File) *exec.Cmd {
	attr := s.attr
	env := s.env
	if env == nil {
		env = []string{} // a nil Env would make exec pass the server's own
	}
	return &exec.Cmd{
		Path:        s.path,
		Args:        s.args,
		Env:         env,
		Dir:         s.dir,
		Stdin:       stdin,
		Stdout:      stdout,
		Stderr:      stderr,
		ExtraFiles:  s.files,
		SysProcAttr: &attr,
	}
}
