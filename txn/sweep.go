package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/afero"
)

// SweepReport says what Sweep did with the layers it found.
type SweepReport struct {
	Finished int            // journalled commits finished, their layers removed
	Removed  int            // layers without a journal (abandoned calls) removed
	Failed   []SweepFailure // layers kept: a commit that could not be finished, or a layer not removed
}

// SweepFailure is one layer Sweep had to leave, and why.
type SweepFailure struct {
	Layer string // the layer's folder
	Err   error
}

func (f SweepFailure) String() string { return f.Layer + ": " + f.Err.Error() }

// Sweep runs at start-up, under the vault's lock, before any call: it
// finishes every journalled commit in stateDir/txn by rolling it forward
// from its upper layer, and removes every layer that has no journal (a
// call cut before its commit began). A layer whose commit can't be
// finished is never removed; the report names it. The error is for a
// state folder that can't be read.
func Sweep(stateDir string, vault afero.Fs) (SweepReport, error) {
	var rep SweepReport
	root := filepath.Join(stateDir, "txn")
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("txn: sweep: %w", err)
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		l := &Layer{Dir: dir, Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work")}
		fail := func(err error) { rep.Failed = append(rep.Failed, SweepFailure{Layer: dir, Err: err}) }
		if !e.IsDir() {
			fail(errors.New("not a layer folder"))
			continue
		}
		_, err := os.Lstat(filepath.Join(dir, journalName))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := l.Remove(); err != nil {
				fail(err)
				continue
			}
			rep.Removed++
		case err != nil:
			fail(err)
		default:
			if err := finish(vault, l); err != nil {
				fail(err)
				continue
			}
			if err := l.Remove(); err != nil {
				fail(err)
				continue
			}
			rep.Finished++
		}
	}
	return rep, nil
}

// finish rolls a journalled commit forward from its last mark. Every
// step checks what the vault holds, since the crash may have come after
// it: what is neither the old state nor the new one stops the roll.
func finish(vault afero.Fs, l *Layer) error {
	j, changes, done, src, err := readJournal(l)
	if err != nil {
		return err
	}
	defer j.close()
	c := newCommitter(vault, l, changes, src)
	defer c.close()
	if err := validate(changes, filepath.Base(l.Dir)); err != nil {
		return err
	}
	c.journal = j
	if n, err := c.run(done, true); err != nil {
		return fmt.Errorf("txn: commit stopped after %d of %d changes: %w", n, len(changes), err)
	}
	return nil
}
