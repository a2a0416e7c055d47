//go:build !linux

package agentrun

import (
	"errors"
	"net"
)

func peerUID(*net.UnixConn) (int, error) { return 0, errors.ErrUnsupported }
