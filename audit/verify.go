package audit

import (
	"fmt"
	"io/fs"
)

// VerifyReport is what Verify found. Lines counts every line of the chain,
// across rotated files. When OK is false, FirstBad is the number of the
// first broken line within the whole chain (1-based; one past the last line
// when the tail was cut), File and FileLine say where it is, and Problem
// says what is wrong.
type VerifyReport struct {
	Lines    int    `json:"lines"`
	OK       bool   `json:"ok"`
	FirstBad int    `json:"first_bad,omitempty"`
	Problem  string `json:"problem,omitempty"`
	File     string `json:"file,omitempty"`
	FileLine int    `json:"file_line,omitempty"`
	// Head tells whether a head file was there to check the end against;
	// without one a cut tail cannot be seen.
	Head bool `json:"head"`
	// Note explains something that is not a break: a missing head file, or
	// one a line behind after a writer stopped between its two steps.
	Note string `json:"note,omitempty"`
}

// Verify walks the chain of the log at path — rotated files oldest first,
// then the current one — and reports the first line that is not what the
// chain recorded: a line edited, removed or moved, a torn or unparseable
// line, and, when the head file is there, a tail cut off or a last line
// changed. The error is for a log it could not read at all.
func Verify(path string) (*VerifyReport, error) {
	snap, err := takeSnapshot(path)
	if err != nil {
		return nil, err
	}
	defer snap.close()
	h, herr := snap.head, snap.headErr
	if len(snap.files) == 0 && h == nil {
		if herr != nil {
			return nil, herr
		}
		return nil, fmt.Errorf("audit: verify %s: %w", path, fs.ErrNotExist)
	}
	v := &verifier{rep: VerifyReport{OK: true}, head: h}
	for _, sf := range snap.files {
		err := sf.lines(func(line []byte, n int, torn bool) bool {
			v.rep.Lines++
			v.line(where{n: v.rep.Lines, file: sf.name, line: n}, line, torn)
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	v.end(path, herr)
	return &v.rep, nil
}

// String says in one line what Verify found, naming the file and its line.
func (r *VerifyReport) String() string {
	if r.OK {
		s := fmt.Sprintf("ok: %d lines, chain intact", r.Lines)
		if r.Note != "" {
			s += " (" + r.Note + ")"
		}
		return s
	}
	if r.FirstBad == 0 {
		return "broken: " + r.Problem
	}
	return fmt.Sprintf("broken at line %d (%s:%d): %s", r.FirstBad, r.File, r.FileLine, r.Problem)
}

type where struct {
	n    int // line number in the chain
	file string
	line int // line number in the file
}

type verifier struct {
	rep  VerifyReport
	head *head

	prev     string // hash of the line before
	prevAt   where
	lastSeq  int64 // seq of the last line that parsed
	expected int64 // seq the next line should have

	// A prev that does not match is blamed on the line before it, unless
	// the line after shows that this line itself changed (its own prev
	// field edited): the decision waits one line.
	pending   bool
	pendingAt where // the line whose prev did not match
	pendBack  where // the line before it

	headAt  where // the line whose seq the head names, if seen
	headHit string
}

func (v *verifier) fail(n int, file string, line int, problem string) {
	if !v.rep.OK {
		return
	}
	v.rep.OK = false
	v.rep.FirstBad, v.rep.File, v.rep.FileLine, v.rep.Problem = n, file, line, problem
}

func (v *verifier) resolvePending(lineChanged bool) {
	if !v.pending {
		return
	}
	v.pending = false
	if lineChanged {
		at := v.pendingAt
		v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d was changed: its hash is not what line %d records, nor is its own prev the hash of line %d", at.n, at.n+1, at.n-1))
		return
	}
	at := v.pendBack
	v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d was changed: its hash is not the prev that line %d records", at.n, at.n+1))
}

func (v *verifier) line(at where, line []byte, torn bool) {
	hash := lineHash(line)
	defer func() {
		v.prev, v.prevAt = hash, at
	}()
	seq, prev, perr := parseChain(line)
	if v.expected == 0 {
		v.expected = 1
	}
	switch {
	case torn && perr != nil:
		v.resolvePending(false)
		v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d is torn: no newline at the end, and not valid JSON (%v)", at.n, perr))
		v.expected++
		return
	case torn:
		v.resolvePending(false)
		v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d is torn: no newline at the end", at.n))
	case perr != nil:
		v.resolvePending(false)
		v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d is not a log line: %v", at.n, perr))
		v.expected++
		return
	}
	v.lastSeq = seq
	if v.head != nil && seq == v.head.Lines {
		v.headAt, v.headHit = at, hash
	}
	if seq != v.expected {
		v.resolvePending(false)
		what := "a line before it is missing or was moved"
		if seq < v.expected {
			what = "it was moved or repeated"
		}
		v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d has seq %d where %d was expected: %s", at.n, seq, v.expected, what))
		v.expected = seq + 1
		return
	}
	v.expected = seq + 1
	if v.pending {
		// The line before ours had a prev that did not match; if ours
		// does not match that line's hash either, that line changed.
		v.resolvePending(prev != v.prev)
	}
	want := v.prev
	if at.n == 1 {
		want = ""
	}
	if prev != want {
		if at.n == 1 {
			v.fail(at.n, at.file, at.line, fmt.Sprintf("line 1 has prev %q: the first line of the chain has none", truncate([]byte(prev), 16)))
			return
		}
		if v.rep.OK {
			v.pending, v.pendingAt, v.pendBack = true, at, v.prevAt
		}
	}
}

// end checks the end of the chain against the head file.
func (v *verifier) end(path string, herr error) {
	last := v.prevAt
	h := v.head
	v.rep.Head = h != nil
	switch {
	case herr != nil:
		v.resolvePending(false)
		v.fail(0, headPath(path), 0, herr.Error())
	case h == nil:
		v.resolvePending(false)
		v.rep.Note = "no head file: a cut tail cannot be detected"
	case h.Lines > v.lastSeq:
		v.resolvePending(false)
		file := last.file
		if file == "" {
			file = path
		}
		ends := fmt.Sprintf("ends after line %d", last.n)
		if last.n == 0 {
			ends = "is empty"
		}
		v.fail(last.n+1, file, last.line+1, fmt.Sprintf("the head file records %d lines but the log %s: the tail was cut", h.Lines, ends))
	case h.Lines == v.lastSeq:
		if v.pending {
			// The last line's prev is wrong; if its hash is not the
			// head's either, the last line itself changed.
			v.resolvePending(h.Hash != v.prev)
		}
		if h.Hash != v.prev {
			v.fail(last.n, last.file, last.line, fmt.Sprintf("line %d was changed: its hash is not the one the head file records", last.n))
		}
	default: // the head is behind the log
		v.resolvePending(false)
		switch {
		case h.Lines > 0 && v.headAt.n == 0:
			v.fail(0, headPath(path), 0, fmt.Sprintf("the head file records %d lines, and no line of the log has that seq", h.Lines))
		case h.Lines > 0 && v.headHit != h.Hash:
			at := v.headAt
			v.fail(at.n, at.file, at.line, fmt.Sprintf("line %d was changed: its hash is not the one the head file records", at.n))
		default:
			v.rep.Note = fmt.Sprintf("the head file records %d of %d lines: a writer stopped between appending and updating the head; the next write repairs it", h.Lines, v.lastSeq)
		}
	}
}
