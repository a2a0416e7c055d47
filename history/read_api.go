package history

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// OpenReadOnly opens the store in dir for reading only: it creates
// nothing, takes no lock and sweeps nothing, so a reader such as the admin
// panel can never change the history it shows. Its Call, Calls, All, Blob,
// Diff and EntryDiffs work; nothing that writes may be called on it.
func OpenReadOnly(dir string) (*Store, error) {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("history: no store in %s: %w", dir, err)
		}
		return nil, fmt.Errorf("history: %w", err)
	}
	return &Store{dir: dir}, nil
}

// EntryDiffs is the diff of one call's entries, one text for each, in
// their order: each file the call changed is told once, under the deepest
// entry that holds it (a moved file under the entry of where it went), so
// an entry whose files are all told under another's has "". A body that
// can't be read is an error of that entry alone. The texts are as the
// files hold them (DiffRaw's): the panel shows them as text in a page,
// where no terminal reads them.
func (s *Store) EntryDiffs(es []Entry) ([]string, []error) {
	texts, errs := make([]strings.Builder, len(es)), make([]error, len(es))
	for _, f := range callFiles(es) {
		if errs[f.entry] == nil {
			errs[f.entry] = s.diffFile(&texts[f.entry], f, true)
		}
	}
	out := make([]string, len(es))
	for i := range texts {
		out[i] = texts[i].String()
	}
	return out, errs
}
