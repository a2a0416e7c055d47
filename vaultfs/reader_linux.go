//go:build linux

package vaultfs

import (
	"io"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"
)

// OpenReader opens name for reading it through once, as search reads a
// note. On NoFollowFs it is the bare descriptor: an os.File would cost two
// more system calls a file (the poller's probe of a descriptor opened
// O_NONBLOCK), which on 10,000 notes is a sixth of a search. A FIFO put in
// a file's place answers EAGAIN, which ends it. Any other Fs opens name
// with Open.
func OpenReader(fsys afero.Fs, name string) (io.ReadCloser, error) {
	nf, ok := fsys.(*NoFollowFs)
	if !ok {
		return fsys.Open(name)
	}
	fd, err := nf.openFd(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return fdReader(fd), nil
}

type fdReader int

func (fd fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (fd fdReader) Close() error { return unix.Close(int(fd)) }
