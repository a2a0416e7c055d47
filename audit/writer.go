package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Options configure a Writer.
type Options struct {
	// MaxSize rotates the current file before a line would take it past
	// this many bytes; 0 never rotates.
	MaxSize int64
	// Mask lists secret values to mask wherever they would appear in a line.
	Mask []string
	// Sync makes each Write fsync the log before it returns. Without it a
	// line has reached the kernel (write(2) completed) when Write returns:
	// it survives the process, not a power cut.
	Sync bool
}

// ErrClosed is returned by Write on a closed Writer.
var ErrClosed = errors.New("audit: writer closed")

// Writer appends records to a log shared with other processes. It is safe
// for concurrent use.
type Writer struct {
	path string
	opt  Options
	mask *masker

	mu      sync.Mutex
	lock    *os.File // PATH.lock, flocked around each append
	headF   headFile // PATH.head, rewritten after each append
	f       *os.File // the current file, O_APPEND
	fi      os.FileInfo
	known   head // the chain's end as this writer last left it
	knownOK bool
	closed  bool
}

// Open opens the log at path for appending, creating its folder (0700) and
// the file (0600) when they are missing. Nothing is read until the first
// Write, which picks the chain up wherever other writers have left it.
func Open(path string, opt Options) (*Writer, error) {
	if path == "" {
		return nil, errors.New("audit: empty log path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: create folder for %s: %w", path, err)
	}
	lock, err := os.OpenFile(lockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: open lock: %w", err)
	}
	w := &Writer{path: path, opt: opt, mask: newMasker(opt.Mask), lock: lock}
	if err := w.reopen(); err != nil {
		lock.Close()
		return nil, err
	}
	return w, nil
}

func (w *Writer) reopen() error {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: open %s: %w", w.path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: stat %s: %w", w.path, err)
	}
	w.f, w.fi, w.knownOK = f, fi, false
	return nil
}

// Write appends r as one line. It fills r.Seq and r.Prev, and r.ID and
// r.Time when they are empty. When it returns nil the line is in the log;
// when it returns an error the caller must treat the call as unrecorded
// and refuse it.
func (w *Writer) Write(r *Record) error {
	if r.ID == "" {
		r.ID = NewID()
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	body, err := encodeBody(r)
	if err != nil {
		return fmt.Errorf("audit: encode: %w", err)
	}
	body = w.mask.mask(body)

	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := flock(w.lock, exclusive); err != nil {
		return fmt.Errorf("audit: lock %s: %w", lockPath(w.path), err)
	}
	defer flock(w.lock, unlock)

	end, err := w.tail()
	if err != nil {
		return err
	}
	line := finishLine(body, end.Lines+1, end.Hash)
	if w.opt.MaxSize > 0 && end.Size > 0 && end.Size+int64(len(line)) > w.opt.MaxSize {
		if err := w.rotate(); err != nil {
			return err
		}
		end.Size = 0
	}
	n, err := w.f.Write(line)
	if err != nil || n != len(line) {
		// Take a torn line back out so the next writer does not inherit it;
		// if that fails too, the next writer seals it off (see tail).
		w.f.Truncate(end.Size)
		w.knownOK = false
		if err == nil {
			err = fmt.Errorf("short write (%d of %d bytes)", n, len(line))
		}
		return fmt.Errorf("audit: append to %s: %w", w.path, err)
	}
	if w.opt.Sync {
		if err := w.f.Sync(); err != nil {
			w.knownOK = false
			return fmt.Errorf("audit: sync %s: %w", w.path, err)
		}
	}
	next := head{Lines: end.Lines + 1, Hash: lineHash(line[:len(line)-1]), Size: end.Size + int64(len(line))}
	r.Seq, r.Prev = next.Lines, end.Hash
	// The line is in the log even if the head is not updated; the next
	// writer recovers from the line. The error still fails the call closed.
	if err := w.headF.write(w.path, next, w.opt.Sync); err != nil {
		w.knownOK = false
		return fmt.Errorf("audit: line %d written, but: %w", next.Lines, err)
	}
	w.known, w.knownOK = next, true
	return nil
}

// tail returns where the chain ends, with the lock held. When this writer
// made the last append (same file, same size), it knows; otherwise the head
// file says, unless it disagrees with the log, and then the log's own last
// line does.
func (w *Writer) tail() (head, error) {
	st, err := os.Stat(w.path)
	if err != nil || !os.SameFile(st, w.fi) {
		// Another writer rotated the file, or it was removed.
		if err := w.reopen(); err != nil {
			return head{}, err
		}
		st = w.fi
	}
	size := st.Size()
	if w.knownOK && w.known.Size == size {
		return w.known, nil
	}
	h, herr := readHead(w.path)
	if herr == nil && h != nil && h.Size == size {
		return *h, nil
	}
	// Recovery: a writer stopped between appending and updating the head,
	// or the head is gone or unreadable, or the file changed under us.
	if herr != nil {
		h = nil // an unreadable head is no witness; the log is
	}
	return w.recover(h, size)
}

// recover finds the chain's end from the log itself. A torn fragment at the
// end (a writer died mid-append) is sealed with a newline so it stands alone
// as one bad line that Verify will name, and the chain goes on from the last
// good line. When the head records more lines than the log holds (the tail
// was cut), the head wins: the next line then leaves a gap Verify reports,
// rather than papering over the cut.
func (w *Writer) recover(h *head, size int64) (head, error) {
	rf, err := os.Open(w.path)
	if err != nil {
		return head{}, fmt.Errorf("audit: recover: %w", err)
	}
	defer rf.Close()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := rf.ReadAt(last, size-1); err != nil {
			return head{}, fmt.Errorf("audit: recover: %w", err)
		}
		if last[0] != '\n' {
			if _, err := w.f.Write([]byte{'\n'}); err != nil {
				return head{}, fmt.Errorf("audit: seal torn line in %s: %w", w.path, err)
			}
			size++
		}
	}
	l, ok, err := lastLink(rf, size)
	if err != nil {
		return head{}, err
	}
	if !ok {
		// Nothing usable in this file: it is new after a rotation, or was
		// emptied. Go on from the head, or else from the rotated files.
		if h != nil {
			return head{Lines: h.Lines, Hash: h.Hash, Size: size}, nil
		}
		if l, _, err = lastRotatedLink(w.path); err != nil { // none: start from zero
			return head{}, err
		}
	}
	if h != nil && h.Lines > l.Seq {
		return head{Lines: h.Lines, Hash: h.Hash, Size: size}, nil
	}
	return head{Lines: l.Seq, Hash: l.Hash, Size: size}, nil
}

// lastRotatedLink is the last good line of the newest rotated file that has one.
func lastRotatedLink(path string) (link, bool, error) {
	names, _, err := rotated(path)
	if err != nil {
		return link{}, false, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		f, err := os.Open(names[i])
		if err != nil {
			return link{}, false, fmt.Errorf("audit: recover: %w", err)
		}
		st, err := f.Stat()
		if err == nil {
			var l link
			var ok bool
			l, ok, err = lastLink(f, st.Size())
			if err == nil && ok {
				f.Close()
				return l, true, nil
			}
		}
		f.Close()
		if err != nil {
			return link{}, false, fmt.Errorf("audit: recover: %w", err)
		}
	}
	return link{}, false, nil
}

// rotate renames the current file to the next free PATH.N and starts a new
// one, with the lock held.
func (w *Writer) rotate() error {
	_, nums, err := rotated(w.path)
	if err != nil {
		return err
	}
	n := 1
	if len(nums) > 0 {
		n = nums[len(nums)-1] + 1
	}
	dst := rotatedPath(w.path, n)
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit: rotate: %s is in the way", dst)
	}
	if err := os.Rename(w.path, dst); err != nil {
		return fmt.Errorf("audit: rotate %s: %w", w.path, err)
	}
	if err := w.reopen(); err != nil {
		return err
	}
	if w.opt.Sync {
		if d, err := os.Open(filepath.Dir(w.path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// Close closes the log. Writes after Close return ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.headF.close()
	err := w.f.Close()
	if lerr := w.lock.Close(); err == nil {
		err = lerr
	}
	return err
}
