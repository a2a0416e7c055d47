//go:build !linux

package hookcmd

import (
	"errors"
	"net"
)

// warmSupported: elsewhere no server listens, and every hook judges cold.
const warmSupported = false

func peerUID(*net.UnixConn) (int, error) {
	return 0, errors.New("peer credentials are read on Linux only")
}
