package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// LineError is a line of the log that is not a record.
type LineError struct {
	File string
	Line int // within File, 1-based
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("audit: %s:%d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Read calls fn with every record of the log at path, in order: the rotated
// files oldest first, then the current one, as they stood when Read began.
// A line that is not a record (a torn or damaged one) is skipped and
// reported at the end as a *LineError, the first such, so one damaged line
// does not hide the rest. When fn returns an error, Read stops and returns
// it.
func Read(path string, fn func(Record) error) error {
	snap, err := takeSnapshot(path)
	if err != nil {
		return err
	}
	defer snap.close()
	if len(snap.files) == 0 {
		return fmt.Errorf("audit: read %s: %w", path, fs.ErrNotExist)
	}
	var bad, stop error
	for _, sf := range snap.files {
		err := sf.lines(func(line []byte, n int, torn bool) bool {
			var r Record
			err := json.Unmarshal(line, &r)
			if err == nil && torn {
				err = errors.New("torn line: no newline at the end")
			}
			if err != nil {
				if bad == nil {
					bad = &LineError{File: sf.name, Line: n, Err: err}
				}
				return true
			}
			stop = fn(r)
			return stop == nil
		})
		if err != nil {
			return err
		}
		if stop != nil {
			return stop
		}
	}
	return bad
}

// followPoll is how often Follow looks for new lines.
var followPoll = 100 * time.Millisecond

// followHook, when set by a test, is called where a rotation racing with
// Follow would make it lose lines if the steps were in the wrong order.
var followHook func()

func runFollowHook() {
	if followHook != nil {
		followHook()
	}
}

// Follow calls fn with each record as it is appended to the log at path,
// like tail -f, until ctx is done (it then returns ctx.Err()) or fn returns
// an error. It follows the log across rotations and waits for a log that
// does not exist yet. from picks the start: 0, only lines appended from now
// on; n > 0, every record from seq n on (older rotated files are read as
// needed); -n, the last n records, then the new ones. Lines that are not
// records are skipped. When it can no longer tell which files came after
// the one it was reading (that file was moved or removed rather than
// rotated, or a rotated file vanished before it was read), it returns an
// error rather than go on past lines it may have missed.
func Follow(ctx context.Context, path string, from int64, fn func(Record) error) error {
	fl := &follower{path: path, fn: fn}
	if from < 0 {
		last, err := lastSeq(path)
		if err != nil {
			return err
		}
		from = max(1, last+from+1)
	}
	var before []string
	if from == 0 {
		// Taken before the current file is opened, so that with no current
		// file a rotation in between is not counted as old.
		var err error
		if before, _, err = rotated(path); err != nil {
			return err
		}
	}
	// Hold the current file before looking at the rotated ones: should it
	// be rotated meanwhile, the rotation is seen below and nothing is lost.
	f, err := os.Open(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit: follow: %w", err)
	}
	fl.cur = f
	defer func() {
		if fl.cur != nil {
			fl.cur.Close()
		}
	}()
	switch {
	case from > 0:
		fl.min = from
		if err := fl.catchUp(from); err != nil {
			return err
		}
	case f != nil:
		if err := seekAfterLastLine(f); err != nil {
			return err
		}
	default:
		if err := fl.markNewest(before); err != nil {
			return err
		}
	}
	return fl.follow(ctx)
}

type follower struct {
	path    string
	fn      func(Record) error
	min     int64  // records below this seq are not delivered
	partial []byte // an unfinished line at the end of what was read
	cur     *os.File
	// With cur nil: the newest rotated file already dealt with, nil when
	// every rotated file that shows up is still to be read.
	done os.FileInfo
}

// markNewest makes the newest of names (a listing of rotated files) the one
// dealt with last, for when there is no current file.
func (fl *follower) markNewest(names []string) error {
	if len(names) == 0 {
		return nil
	}
	st, err := os.Stat(names[len(names)-1])
	if err != nil {
		return fmt.Errorf("audit: follow: %w", err)
	}
	fl.done = st
	return nil
}

// deliver hands out every complete line in b, keeping an unfinished one.
func (fl *follower) deliver(b []byte) error {
	fl.partial = append(fl.partial, b...)
	for {
		i := bytes.IndexByte(fl.partial, '\n')
		if i < 0 {
			return nil
		}
		line := fl.partial[:i]
		fl.partial = fl.partial[i+1:]
		if fl.min > 0 {
			if seq, _, err := parseChain(line); err != nil || seq < fl.min {
				continue
			}
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			continue
		}
		if err := fl.fn(r); err != nil {
			return err
		}
	}
}

// readAll reads f from its offset to EOF and delivers what it holds.
func (fl *follower) readAll(f *os.File) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if err := fl.deliver(buf[:n]); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: follow %s: %w", f.Name(), err)
		}
	}
}

// readFiles reads whole rotated files; a torn end of one stays there.
func (fl *follower) readFiles(names []string) error {
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("audit: follow: %w", err)
		}
		err = fl.readAll(f)
		f.Close()
		fl.partial = fl.partial[:0]
		if err != nil {
			return err
		}
	}
	return nil
}

// catchUp reads the rotated files older than fl.cur that may hold seq from
// or later.
func (fl *follower) catchUp(from int64) error {
	names, _, err := rotated(fl.path)
	if err != nil {
		return err
	}
	if fl.cur == nil {
		// The files rotated until now are read here; any later, on the
		// move to the current file.
		if err := fl.markNewest(names); err != nil {
			return err
		}
	} else if fi, err := fl.cur.Stat(); err == nil {
		if i := indexOf(names, fi); i >= 0 {
			names = names[:i] // cur itself, already rotated: follow reads it
		}
	}
	// Start at the newest file whose first line is at or before from.
	start := 0
	for i := len(names) - 1; i >= 0; i-- {
		if first, ok := firstSeq(names[i]); ok && first <= from {
			start = i
			break
		}
	}
	return fl.readFiles(names[start:])
}

func (fl *follower) follow(ctx context.Context) error {
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	wait := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			return nil
		}
	}
	for {
		if fl.cur != nil {
			if err := fl.readAll(fl.cur); err != nil {
				return err
			}
		}
		if err := wait(); err != nil {
			return err
		}
		if fl.cur != nil {
			st, err := os.Stat(fl.path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("audit: follow: %w", err)
			}
			fi, ferr := fl.cur.Stat()
			if ferr != nil {
				return fmt.Errorf("audit: follow: %w", ferr)
			}
			if err != nil || os.SameFile(st, fi) {
				continue // no rotation, or the new file is not there yet
			}
			// Rotated: writers finished with the old file before renaming
			// it, so read it to its end before moving on.
			if err := fl.readAll(fl.cur); err != nil {
				return err
			}
			fl.partial = fl.partial[:0]
		}
		if err := fl.advance(); err != nil {
			return err
		}
	}
}

// advance moves from the file dealt with last (fl.cur, now rotated, or
// fl.done) to the current file, first reading the files rotated in between.
// It leaves things as they were when there is no current file yet.
func (fl *follower) advance() error {
	last := fl.done
	if fl.cur != nil {
		fi, err := fl.cur.Stat()
		if err != nil {
			return fmt.Errorf("audit: follow: %w", err)
		}
		last = fi
	}
	// Open the new current file before listing the rotated ones: a file
	// rotated after the listing would be in neither. One rotated between
	// the two shows up in the listing, and is read as the current file.
	nf, err := os.Open(fl.path)
	if errors.Is(err, fs.ErrNotExist) {
		runFollowHook()
		return nil // mid-rotation, or no log yet: look again next time
	}
	if err != nil {
		return fmt.Errorf("audit: follow: %w", err)
	}
	runFollowHook()
	names, _, err := rotated(fl.path)
	if err != nil {
		nf.Close()
		return err
	}
	runFollowHook()
	lo, hi := 0, len(names)
	if last != nil {
		if lo = indexOf(names, last) + 1; lo == 0 {
			nf.Close()
			return fmt.Errorf("audit: follow %s: the file last read was moved or removed, not rotated: lines after it may be missed", fl.path)
		}
	}
	if nfi, err := nf.Stat(); err != nil {
		nf.Close()
		return fmt.Errorf("audit: follow: %w", err)
	} else if i := indexOf(names, nfi); i >= 0 {
		hi = i
	}
	if hi < lo {
		nf.Close()
		return fmt.Errorf("audit: follow %s: rotated files out of order", fl.path)
	}
	if err := fl.readFiles(names[lo:hi]); err != nil {
		nf.Close()
		return err
	}
	if fl.cur != nil {
		fl.cur.Close()
	}
	fl.cur, fl.done = nf, nil
	return nil
}

// indexOf is the index of the file fi among names, or -1.
func indexOf(names []string, fi os.FileInfo) int {
	for i, name := range names {
		if st, err := os.Stat(name); err == nil && os.SameFile(st, fi) {
			return i
		}
	}
	return -1
}

// seekAfterLastLine puts f's offset just past its last newline, so a line
// being written as Follow starts is delivered once it is whole.
func seekAfterLastLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit: follow: %w", err)
	}
	off := int64(0)
	pos := st.Size()
	buf := make([]byte, 4096)
	for pos > 0 && off == 0 {
		n := min(int64(len(buf)), pos)
		if _, err := f.ReadAt(buf[:n], pos-n); err != nil && err != io.EOF {
			return fmt.Errorf("audit: follow: %w", err)
		}
		pos -= n
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			off = pos + int64(i) + 1
		}
	}
	_, err = f.Seek(off, io.SeekStart)
	return err
}

// firstSeq is the seq of the first line of a file, if it parses.
func firstSeq(name string) (int64, bool) {
	f, err := os.Open(name)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadBytes('\n')
	if err != nil {
		return 0, false
	}
	seq, _, err := parseChain(bytes.TrimSuffix(line, []byte{'\n'}))
	return seq, err == nil
}

// lastSeq is the seq of the last line of the chain, 0 for an empty one.
func lastSeq(path string) (int64, error) {
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return 0, fmt.Errorf("audit: %w", err)
		}
		if l, ok, err := lastLink(f, st.Size()); err != nil || ok {
			return l.Seq, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("audit: %w", err)
	}
	l, _, err := lastRotatedLink(path)
	return l.Seq, err
}

// errStop ends a Read early from inside its callback.
var errStop = errors.New("audit: stop")
