package history

import (
	"os"

	"golang.org/x/sys/unix"
)

// dataSync flushes f's content and what is needed to read it back (its
// size), not its times.
func dataSync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
