//go:build !linux

// Package peercred reads who is at the other end of a Unix socket, as the
// kernel recorded it when the peer connected.
package peercred

import (
	"errors"
	"net"
)

// Supported: here no peer is named, and UID always fails.
const Supported = false

// UID fails: peer credentials are read on Linux only.
func UID(*net.UnixConn) (int, error) { return 0, errors.ErrUnsupported }
