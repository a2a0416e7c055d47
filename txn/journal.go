package txn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// The journal of a commit lives in its layer's folder: journal.json, the
// change list, written whole before anything is applied (a temporary name
// renamed into place, so a journal that exists is complete), and
// journal.progress, one line per finished wave: how many changes are in
// the vault for sure.
const (
	journalName  = "journal.json"
	progressName = "journal.progress"
)

type journalRecord struct {
	Version int      `json:"version"`
	Changes []Change `json:"changes"`
}

const journalVersion = 1

type journal struct {
	dir      string
	progress *os.File
}

// writeJournal makes the journal durable: both files fsync'd, then the
// folder that names them.
func writeJournal(dir string, changes []Change) (*journal, error) {
	data, err := json.Marshal(journalRecord{Version: journalVersion, Changes: changes})
	if err != nil {
		return nil, fmt.Errorf("txn: journal: %w", err)
	}
	p, err := os.OpenFile(filepath.Join(dir, progressName), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("txn: journal: %w", err)
	}
	j := &journal{dir: dir, progress: p}
	tmp := filepath.Join(dir, journalName+".tmp")
	if err := writeSynced(tmp, data); err != nil {
		return nil, errors.Join(fmt.Errorf("txn: journal: %w", err), j.discard())
	}
	if err := os.Rename(tmp, filepath.Join(dir, journalName)); err != nil {
		return nil, errors.Join(fmt.Errorf("txn: journal: %w", err), j.discard())
	}
	if err := syncPath(dir); err != nil {
		return nil, errors.Join(fmt.Errorf("txn: journal: %w", err), j.discard())
	}
	return j, nil
}

func writeSynced(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func syncPath(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

// readJournal gives a layer's journalled changes and how many of them
// are surely applied. A line cut by a crash is not a mark.
func readJournal(dir string) (*journal, []Change, int, error) {
	data, err := os.ReadFile(filepath.Join(dir, journalName))
	if err != nil {
		return nil, nil, 0, err
	}
	var rec journalRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, nil, 0, fmt.Errorf("txn: journal: %w", err)
	}
	if rec.Version != journalVersion {
		return nil, nil, 0, fmt.Errorf("txn: journal version %d is not %d", rec.Version, journalVersion)
	}
	p, err := os.OpenFile(filepath.Join(dir, progressName), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("txn: journal: %w", err)
	}
	j := &journal{dir: dir, progress: p}
	marks, err := os.ReadFile(p.Name())
	if err != nil {
		j.close()
		return nil, nil, 0, err
	}
	done := 0
	if end := bytes.LastIndexByte(marks, '\n'); end >= 0 {
		marks = marks[:end]
		if i := bytes.LastIndexByte(marks, '\n'); i >= 0 {
			marks = marks[i+1:]
		}
		if done, err = strconv.Atoi(string(marks)); err != nil || done < 0 || done > len(rec.Changes) {
			j.close()
			return nil, nil, 0, fmt.Errorf("txn: journal progress %q is not a mark", marks)
		}
	}
	return j, rec.Changes, done, nil
}

// mark records that the first done changes are in the vault (their
// folders fsync'd already), durably if sync.
func (j *journal) mark(done int, sync bool) error {
	if _, err := j.progress.WriteString(strconv.Itoa(done) + "\n"); err != nil {
		return fmt.Errorf("txn: journal: %w", err)
	}
	if !sync {
		return nil
	}
	if err := j.progress.Sync(); err != nil {
		return fmt.Errorf("txn: journal: %w", err)
	}
	return nil
}

// discard removes the journal of a commit that changed nothing in the
// vault, so that Sweep does not redo it.
func (j *journal) discard() error {
	err := os.Remove(filepath.Join(j.dir, journalName))
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, syncPath(j.dir))
}

func (j *journal) close() { j.progress.Close() }
