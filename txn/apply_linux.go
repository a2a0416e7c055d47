package txn

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// open opens a regular file of the upper layer without following a
// link anywhere in its name.
func (u *upperTree) open(_ int, name string) (io.ReadCloser, error) {
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
	}
	var fd int
	var err error
	for range 16 {
		if fd, err = unix.Openat2(u.fd, name, &how); err != unix.EAGAIN && err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "upper/" + name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("txn: upper/%s is not a regular file", name)
	}
	return f, nil
}

// ctime is when the entry's inode last changed.
func ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }
