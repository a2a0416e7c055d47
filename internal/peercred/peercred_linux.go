// Package peercred reads who is at the other end of a Unix socket, as the
// kernel recorded it when the peer connected.
package peercred

import (
	"net"
	"syscall"
)

// Supported: the kernel names a socket's peer here.
const Supported = true

// UID is the uid of the process at the other end of c.
func UID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return int(cred.Uid), nil
}
