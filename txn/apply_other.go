//go:build !linux

package txn

import (
	"errors"
	"io"
	"syscall"
	"time"
)

// The transaction needs overlayfs and openat2, so only Linux commits one;
// elsewhere these keep the package building (the bash tool is off there).

func (u *upperTree) open(_ int, name string) (io.ReadCloser, error) {
	return nil, errors.New("txn: commit: needs Linux")
}

func ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctimespec.Unix()) }
