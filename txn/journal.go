package txn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// The journal of a commit lives in its layer's folder: journal.json, the
// change list and the new content of every file the commit writes,
// written whole before anything is applied (a temporary name renamed into
// place, so a journal that exists is complete), and journal.progress, one
// line per finished wave: how many changes are in the vault for sure.
//
// journal.json is a JSON record on its first line, then the files'
// bytes, where the record's Data says. So a cut commit is finished from
// the journal alone: an in-memory upper layer is gone with the process
// that held it, and a layer on disk needs no sync of its own.
const (
	journalName  = "journal.json"
	progressName = "journal.progress"
)

type journalRecord struct {
	Version int      `json:"version"`
	Changes []Change `json:"changes"`
	// Data places each written file's new content in the bytes after the
	// record's line (version 2; version 1 read it from the upper layer).
	Data []journalData `json:"data,omitempty"`
}

// journalData is where change Change's content lies after the record.
type journalData struct {
	Change int   `json:"change"`
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
}

const journalVersion = 2

// writesContent tells whether change ch writes a file's bytes.
func writesContent(ch Change) bool {
	return (ch.Op == Create || ch.Op == Modify) && ch.After != nil && ch.After.Mode.IsRegular()
}

type journal struct {
	dir      string
	progress *os.File
}

// writeJournal makes the journal durable, the content of each file read
// from src: both files fsync'd, then the folder that names them.
func writeJournal(dir string, changes []Change, src contentSource) (*journal, error) {
	rec := journalRecord{Version: journalVersion, Changes: changes}
	var off int64
	for i, ch := range changes {
		if writesContent(ch) {
			rec.Data = append(rec.Data, journalData{Change: i, Offset: off, Size: ch.After.Size})
			off += ch.After.Size
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("txn: journal: %w", err)
	}
	p, err := os.OpenFile(filepath.Join(dir, progressName), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("txn: journal: %w", err)
	}
	j := &journal{dir: dir, progress: p}
	tmp := filepath.Join(dir, journalName+".tmp")
	if err := writeRecord(tmp, append(data, '\n'), rec.Data, changes, src); err != nil {
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

// writeRecord writes the record's line, then each file's bytes, and
// fsyncs.
func writeRecord(name string, head []byte, data []journalData, changes []Change, src contentSource) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	_, err = w.Write(head)
	for _, d := range data {
		if err != nil {
			break
		}
		var r io.ReadCloser
		if r, err = src.open(d.Change, changes[d.Change].Path); err != nil {
			break
		}
		var n int64
		n, err = io.Copy(w, io.LimitReader(r, d.Size+1))
		r.Close()
		if err == nil && n != d.Size {
			err = fmt.Errorf("%s in the upper layer is not the file that was judged", changes[d.Change].Path)
		}
	}
	if err == nil {
		err = w.Flush()
	}
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

// readJournal gives a layer's journalled changes, how many of them are
// surely applied, and where their content is: the journal's own bytes
// (version 2), or the upper layer (version 1, whose layer was on disk). A
// line cut by a crash is not a mark.
func readJournal(l *Layer) (*journal, []Change, int, contentSource, error) {
	fail := func(err error) (*journal, []Change, int, contentSource, error) { return nil, nil, 0, nil, err }
	jf, err := os.Open(filepath.Join(l.Dir, journalName))
	if err != nil {
		return fail(err)
	}
	head, err := bufio.NewReaderSize(jf, 64<<10).ReadBytes('\n')
	if err != nil && err != io.EOF {
		jf.Close()
		return fail(fmt.Errorf("txn: journal: %w", err))
	}
	var rec journalRecord
	if err := json.Unmarshal(head, &rec); err != nil {
		jf.Close()
		return fail(fmt.Errorf("txn: journal: %w", err))
	}
	var src contentSource
	switch rec.Version {
	case 1:
		jf.Close()
		up, err := openUpperTree(l.Upper)
		if err != nil {
			return fail(err)
		}
		src = up
	case journalVersion:
		js := &journalSource{f: jf, base: int64(len(head)), at: map[int]journalData{}}
		for _, d := range rec.Data {
			if d.Change < 0 || d.Change >= len(rec.Changes) || d.Offset < 0 || d.Size < 0 {
				jf.Close()
				return fail(fmt.Errorf("txn: journal: bad data record %+v", d))
			}
			js.at[d.Change] = d
		}
		src = js
	default:
		jf.Close()
		return fail(fmt.Errorf("txn: journal version %d is not %d", rec.Version, journalVersion))
	}
	p, err := os.OpenFile(filepath.Join(l.Dir, progressName), os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		src.close()
		return fail(fmt.Errorf("txn: journal: %w", err))
	}
	j := &journal{dir: l.Dir, progress: p}
	marks, err := os.ReadFile(p.Name())
	if err != nil {
		j.close()
		src.close()
		return fail(err)
	}
	done := 0
	if end := bytes.LastIndexByte(marks, '\n'); end >= 0 {
		marks = marks[:end]
		if i := bytes.LastIndexByte(marks, '\n'); i >= 0 {
			marks = marks[i+1:]
		}
		if done, err = strconv.Atoi(string(marks)); err != nil || done < 0 || done > len(rec.Changes) {
			j.close()
			src.close()
			return fail(fmt.Errorf("txn: journal progress %q is not a mark", marks))
		}
	}
	return j, rec.Changes, done, src, nil
}

// journalSource reads the files' content from a version 2 journal.
type journalSource struct {
	f    *os.File
	base int64 // where the bytes after the record's line begin
	at   map[int]journalData
}

func (s *journalSource) open(i int, name string) (io.ReadCloser, error) {
	d, ok := s.at[i]
	if !ok {
		return nil, fmt.Errorf("txn: the journal holds no content for change %d (%s)", i, name)
	}
	return io.NopCloser(io.NewSectionReader(s.f, s.base+d.Offset, d.Size)), nil
}

func (s *journalSource) close() { s.f.Close() }

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
