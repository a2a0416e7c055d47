//go:build !linux

package txn

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The transaction needs overlayfs and openat2, so only Linux commits one;
// elsewhere these keep the package building (the bash tool is off there).

func (c *committer) openUpper(name string) (*os.File, error) {
	return nil, errors.New("txn: commit: needs Linux")
}

func syncfs(fd int) error { return unix.Fsync(fd) }

func ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctimespec.Unix()) }
