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
	// The rest is bounded by the hook's budget, each read and write (the
	// file is blocking, so a deadline on it would not hold).
	tv = unix.NsecToTimeval(Budget.Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	return os.NewFile(uintptr(fd), path), nil
}

// PeerPID is the pid of the process at the other end of the connection f.
func PeerPID(f *os.File) (int, error) {
	cred, err := unix.GetsockoptUcred(int(f.Fd()), unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Pid), nil
}

// CloseWrite ends what f sends: the judge reads the input to EOF.
func CloseWrite(f *os.File) error { return unix.Shutdown(int(f.Fd()), unix.SHUT_WR) }
