package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// snapshot is the chain as it stood at one moment: every file open, with
// the size it had then, and the head file. It is taken under a shared lock,
// so no writer is between its steps and no rotation is half done; reading
// then goes on without the lock, and lines appended meanwhile are not seen.
type snapshot struct {
	files   []snapFile
	head    *head
	headErr error
}

type snapFile struct {
	name string
	f    *os.File
	size int64
}

func takeSnapshot(path string) (*snapshot, error) {
	// Readers must work on a copy in a read-only folder too: a missing
	// lock file means no writer to wait for.
	if lf, err := os.Open(lockPath(path)); err == nil {
		defer lf.Close()
		if err := flock(lf, shared); err == nil {
			defer flock(lf, unlock)
		}
	}
	names, err := chainFiles(path)
	if err != nil {
		return nil, err
	}
	s := &snapshot{}
	for _, name := range names {
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // rotated away by a writer that takes no lock
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("audit: %w", err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			s.close()
			return nil, fmt.Errorf("audit: %w", err)
		}
		s.files = append(s.files, snapFile{name: name, f: f, size: st.Size()})
	}
	s.head, s.headErr = readHead(path)
	return s, nil
}

func (s *snapshot) close() {
	for _, sf := range s.files {
		sf.f.Close()
	}
}

// lines calls fn with each line of the file as it was at the snapshot,
// without its newline, until fn returns false; torn tells that the last one
// had none.
func (sf snapFile) lines(fn func(line []byte, n int, torn bool) bool) error {
	br := bufio.NewReaderSize(io.NewSectionReader(sf.f, 0, sf.size), 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err == io.EOF {
			if len(line) > 0 {
				fn(line, n, true)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: read %s: %w", sf.name, err)
		}
		if !fn(line[:len(line)-1], n, false) {
			return nil
		}
	}
}
