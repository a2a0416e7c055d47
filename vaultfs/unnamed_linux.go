//go:build linux

package vaultfs

import (
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

var _ UnnamedCreator = (*NoFollowFs)(nil)

// CreateUnnamed opens an unnamed file in the Fs's root folder (O_TMPFILE):
// until Link names it, a crash leaves nothing behind. A kernel or file
// system without O_TMPFILE answers ErrUnnamedUnsupported.
func (f *NoFollowFs) CreateUnnamed(perm os.FileMode) (UnnamedFile, error) {
	fd, err := openat(f.fd, ".", unix.O_TMPFILE|unix.O_WRONLY, unixMode(perm))
	switch err {
	case nil:
		return &unnamedFile{File: os.NewFile(uintptr(fd), "(unnamed)"), dirfd: f.fd}, nil
	case unix.EOPNOTSUPP, unix.EISDIR, unix.EINVAL, unix.ENOENT:
		return nil, ErrUnnamedUnsupported
	}
	return nil, &fs.PathError{Op: "open O_TMPFILE", Path: f.name, Err: err}
}

type unnamedFile struct {
	*os.File
	dirfd int
}

// Link gives the file its name in the folder; an existing name is never
// replaced (EEXIST). The descriptor is linked through /proc, which needs
// no privilege, or, without /proc, by AT_EMPTY_PATH, which needs
// CAP_DAC_READ_SEARCH.
func (u *unnamedFile) Link(name string) error {
	if err := checkName("link", name); err != nil {
		return err
	}
	if _, base := split(name); base != name {
		return &fs.PathError{Op: "link", Path: name, Err: errBadName}
	}
	proc := "/proc/self/fd/" + strconv.Itoa(int(u.Fd()))
	err := unix.Linkat(unix.AT_FDCWD, proc, u.dirfd, name, unix.AT_SYMLINK_FOLLOW)
	if err == unix.ENOENT {
		if _, statErr := os.Stat("/proc/self/fd"); statErr != nil {
			err = unix.Linkat(int(u.Fd()), "", u.dirfd, name, unix.AT_EMPTY_PATH)
		}
	}
	if err != nil {
		return &fs.PathError{Op: "link", Path: name, Err: err}
	}
	return nil
}
