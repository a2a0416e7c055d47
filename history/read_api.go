package history

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// OpenReadOnly opens the store in dir for reading only: it creates
// nothing, takes no lock and sweeps nothing, so a reader such as the admin
// panel can never change the history it shows. Its Call, Calls, All, Blob,
// Diff and DiffEntry work; nothing that writes may be called on it.
func OpenReadOnly(dir string) (*Store, error) {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("history: no store in %s: %w", dir, err)
		}
		return nil, fmt.Errorf("history: %w", err)
	}
	return &Store{dir: dir}, nil
}

// DiffEntry writes the unified diff of one entry's text files, and a line
// for each binary one, a link or anything else, as Diff does for a call.
func (s *Store) DiffEntry(w io.Writer, e Entry) error {
	for _, f := range files(e.Path, e.Before, e.After) {
		if err := s.diffFile(w, f); err != nil {
			return err
		}
	}
	return nil
}
