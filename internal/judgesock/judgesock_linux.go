package judgesock

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Supported: a judge can be reached here, and who listens is known.
const Supported = true

// dialTimeout bounds a connect: a judge that is there is accepted by the
// kernel at once, before the judge reads.
const dialTimeout = 250 * time.Millisecond

// Dial connects to the socket at path and checks that the process that
// listens on it runs as this user; the file it returns reads and writes
// the connection. It uses the system calls directly (no package net), which
// keeps the hook binary free of cgo and so statically linked.
func Dial(path string) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	tv := unix.NsecToTimeval(dialTimeout.Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if int(cred.Uid) != os.Getuid() {
		unix.Close(fd)
		return nil, fmt.Errorf("judgesock: %s is served by uid %d, not this user", path, cred.Uid)
	}
	// The rest is bounded by deadlines on the file (Ask: the hook's
	// budget; AskExec: the hand-over, then the command's own timeout,
	// which the judge keeps). Non-blocking, so that they hold, and so that
	// a Close from another goroutine (exec interrupted) ends a read under
	// way and tells the judge at once: on a blocking file the close waited
	// for the read. (The socket's own timeouts, the hook's budget on each
	// read, ended every command that ran past it: exec read its answer
	// under them too.)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// control runs fn on f's descriptor without taking it out of the poller
// (f.Fd would make it blocking, and its deadlines would no longer hold).
func control(f *os.File, fn func(fd int) error) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// PeerPID is the pid of the process at the other end of the connection f.
func PeerPID(f *os.File) (int, error) {
	pid := 0
	err := control(f, func(fd int) error {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		if err == nil {
			pid = int(cred.Pid)
		}
		return err
	})
	return pid, err
}

// CloseWrite ends what f sends: the judge reads the input to EOF.
func CloseWrite(f *os.File) error {
	return control(f, func(fd int) error { return unix.Shutdown(fd, unix.SHUT_WR) })
}
