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
// two Writers in one process exclude each other as two processes do.
func flock(f *os.File, mode lockMode) error {
	how := map[lockMode]int{unlock: unix.LOCK_UN, exclusive: unix.LOCK_EX, shared: unix.LOCK_SH}[mode]
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}
