//go:build unix

package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

type lockMode int

const (
	unlock lockMode = iota
	exclusive
	shared
)

// flock takes or drops a lock on f. flock locks belong to the open file, so
// two Writers in one process exclude each other as two processes do. It
// reaches the descriptor through SyscallConn, not Fd, which would switch the
// file to blocking mode with two fcntl calls every time.
func flock(f *os.File, mode lockMode) error {
	how := unix.LOCK_UN
	switch mode {
	case exclusive:
		how = unix.LOCK_EX
	case shared:
		how = unix.LOCK_SH
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	cerr := rc.Control(func(fd uintptr) {
		for {
			err = unix.Flock(int(fd), how)
			if err != unix.EINTR {
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}
