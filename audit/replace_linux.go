package audit

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// replaceFile gives src's content the name dst atomically. It exchanges the
// two names when dst exists, so src keeps the old content and need not be
// created again; otherwise it renames.
func replaceFile(src, dst string) error {
	err := unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS),
		errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EXDEV):
		return os.Rename(src, dst)
	default:
		return &os.LinkError{Op: "renameat2", Old: src, New: dst, Err: err}
	}
}
