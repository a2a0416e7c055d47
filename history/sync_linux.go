package history

import (
	"os"

	"golang.org/x/sys/unix"
)

// dataSync flushes f's content and what is needed to read it back (its
// size), not its times.
func dataSync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }

// reserve allocates f's blocks from off for n bytes without changing its
// size, so that appends there need no block allocation: their flush then
// commits less. Best effort: a file system without it just allocates as
// it goes.
func reserve(f *os.File, off, n int64) {
	unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n)
}
