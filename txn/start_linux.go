package txn

import (
	"os"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a file with no name in dir (O_TMPFILE).
func openUnnamed(dir string) (*os.File, error) {
	return os.OpenFile(dir, unix.O_TMPFILE|os.O_RDWR, 0o600)
}
