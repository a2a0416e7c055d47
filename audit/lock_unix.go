//go:build unix

package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// flock takes or drops an exclusive lock on f. flock locks belong to the
// open file, so two Writers in one process exclude each other as two
// processes do.
func flock(f *os.File, lock bool) error {
	how := unix.LOCK_UN
	if lock {
		how = unix.LOCK_EX
	}
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}
