package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// The index is what lets the panel answer from a log of a million lines
// without reading it again: one small entry per line (its time, seq,
// names as numbers, decision, what needs a look, where the line is), and
// the line's searchable text in lower case. It is built once, in the
// background when the panel starts, and brought up to date from where it
// stopped before each request; a page of records is then read back from
// the files by offset. It holds the files open, so a rotation (the current
// file renamed to the next number) loses nothing.

// Look is why a call needs a person's look; a call can have several.
type Look uint16

const (
	LookDeny        Look = 1 << iota // refused by a rule
	LookFailed                       // allowed, then failed; or could not be judged at all
	LookUnpredicted                  // bash changed something its analysis did not predict
	LookMany                         // changed ManyFiles paths or more, or a whole folder
	LookDelete                       // deletes, or tried to
	LookRule                         // a rule named it without denying it (bash's changes it refused)
)

// ManyFiles is how many changed paths make a call a change to many files.
const ManyFiles = 5

var lookNames = []struct {
	name string
	bit  Look
}{
	{"deny", LookDeny}, {"failed", LookFailed}, {"unpredicted", LookUnpredicted},
	{"many", LookMany}, {"delete", LookDelete}, {"rule", LookRule},
}

// Names lists the reasons, in a fixed order.
func (l Look) Names() []string {
	var out []string
	for _, n := range lookNames {
		if l&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func parseLook(s string) (Look, error) {
	var l Look
	for w := range strings.SplitSeq(s, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if w == "any" {
			l |= lookAll
			continue
		}
		found := false
		for _, n := range lookNames {
			if n.name == w {
				l |= n.bit
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("look %q: want any, or some of deny, failed, unpredicted, many, delete, rule", w)
		}
	}
	return l, nil
}

const lookAll = LookDeny | LookFailed | LookUnpredicted | LookMany | LookDelete | LookRule

const (
	decAllow uint8 = iota
	decDeny
	decError
	decOther
)

// summary is what the index keeps of one record.
type summary struct {
	ms, seq                               int64  // unix milliseconds; seq
	session, agent, via, tool, rule, path uint32 // interned; path: the first path it changed
	vault                                 uint32 // interned: the vault the line names ("" none)
	changes                               uint16 // how many paths it changed (at most 65535)
	look                                  Look
	decision                              uint8
	failed                                bool // allowed, then failed
	after                                 bool // the hook's line after Claude Code ran the tool
	// part: the line continues a call whose line came before it (exec's,
	// or the hook's after line; audit.Joiner): it is part of that call's
	// entry, never a call of its own.
	part bool
}

// entry is one line of the log in the index.
type entry struct {
	summary
	// link joins an entry to the other lines of its call, as index+1 in
	// index.entries (0: none): a call's entry names its exec line and its
	// after line; a part's, in link[0], its call's entry.
	link          [2]int32
	file          int32 // in index.files
	n             int32 // the line's length, without its newline
	off           int64 // where it starts in its file
	text, textEnd uint32
	sum           uint32 // the line's CRC-32C, to know it again when read back
}

// interner numbers strings; 0 is "".
type interner struct {
	ids   map[string]uint32
	names []string
}

func (in *interner) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if in.ids == nil {
		in.ids = map[string]uint32{}
		in.names = []string{""}
	}
	if id, ok := in.ids[s]; ok {
		return id
	}
	id := uint32(len(in.names))
	in.ids[s] = id
	in.names = append(in.names, s)
	return id
}

func (in *interner) name(id uint32) string {
	if int(id) >= len(in.names) {
		return ""
	}
	return in.names[id]
}

// parsed is a record as the index derives it, before its names are
// numbered: made in parallel, numbered in order.
type parsed struct {
	sum                                   summary
	session, agent, via, tool, rule, path string
	vault                                 string
	text                                  []byte
	bad                                   error
	rec                                   audit.Record // the line, as scanLine read it: for the join, in order
}

func changesOp(op string) bool {
	switch op {
	case "create", "modify", "delete", "move-out", "move-in", "link":
		return true
	}
	return false
}

// derive works out what the index keeps of r read on its own.
func derive(r *audit.Record) parsed { return deriveCall(&audit.Call{Record: *r}) }

// deriveCall works out what the index keeps of a call: needs-a-look
// reasons, the paths it changed, its text for search. Its names and its
// decision are its own line's; whether it failed is audit.Call.Failed;
// what it changed is what the line that ran it (exec's, for Claude Code's
// Bash) says; the rest is any line's.
func deriveCall(c *audit.Call) parsed {
	r := &c.Record
	p := parsed{session: r.Session, agent: r.Agent, via: string(r.Via), tool: r.Tool, rule: r.Rule, vault: r.Vault}
	s := &p.sum
	s.ms, s.seq = r.Time.UnixMilli(), r.Seq
	s.after = r.Event != ""
	switch r.Decision {
	case "allow":
		s.decision = decAllow
	case "deny":
		s.decision = decDeny
		s.look |= LookDeny
	case "error":
		s.decision = decError
		s.look |= LookFailed
	default:
		s.decision = decOther
		s.look |= LookFailed
	}
	if c.Failed() {
		s.failed = true
		s.look |= LookFailed
	}
	lines := c.Lines()
	for _, l := range lines {
		if l.Rule != "" && l.Decision != "deny" {
			s.look |= LookRule // a deny names its rule anyway
		}
	}
	var text bytes.Buffer
	add := func(v string) {
		if v != "" {
			text.WriteString(strings.ToLower(v))
			text.WriteByte('\n')
		}
	}
	// What it changed: what bash really did when the line says, else the
	// planned effects; only of a call that went through. The person's
	// undo changed what its effects name even when it failed: its line
	// fails when it left a path alone (a conflict), after putting back
	// the rest, or when a restore failed part way.
	changed := map[string]bool{}
	subtree := false
	took := s.decision == decAllow && !s.after && (!s.failed || r.Via.Person())
	note := func(op, path string) {
		if op == "delete" {
			s.look |= LookDelete
		}
		if !took || !changesOp(op) || path == "" {
			return
		}
		if strings.HasSuffix(path, "/**") {
			subtree = true
		}
		if !changed[path] {
			changed[path] = true
			if p.path == "" {
				p.path = path
			}
		}
	}
	run := c.Ran()
	for _, l := range lines {
		ran := l == run
		for _, e := range l.Effects {
			add(e.Path)
			if e.Op == "delete" {
				s.look |= LookDelete
			}
			if ran && len(l.Real) == 0 {
				note(e.Op, e.Path)
			}
		}
		for _, e := range l.Real {
			add(e.Path)
			add(e.From)
			if e.Unpredicted {
				s.look |= LookUnpredicted
			}
			if e.Refused {
				continue
			}
			if e.Op == "delete" {
				s.look |= LookDelete
			}
			if ran {
				note(e.Op, e.Path)
			}
		}
	}
	s.changes = uint16(min(len(changed), 65535))
	if len(changed) >= ManyFiles || subtree {
		s.look |= LookMany
	}
	for _, l := range lines {
		add(l.Command())
		argText(l.Args, add, 0)
		add(l.Rule)
		add(l.Reason)
		add(l.Error)
	}
	p.text = text.Bytes()
	return p
}

// argText adds the path-like arguments, nested ones too (the hook logs
// Claude Code's tool_input as it came).
func argText(args map[string]any, add func(string), depth int) {
	if depth > 4 {
		return
	}
	for k, v := range args {
		switch v := v.(type) {
		case string:
			if pathKey(k) {
				add(v)
			}
		case []any:
			if pathKey(k) {
				for _, x := range v {
					if s, ok := x.(string); ok {
						add(s)
					}
				}
			}
		case map[string]any:
			argText(v, add, depth+1)
		}
	}
}

func pathKey(k string) bool {
	k = strings.ToLower(k)
	return k == "source" || k == "destination" || k == "pattern" || strings.HasSuffix(k, "path") || strings.HasSuffix(k, "paths")
}

type idxFile struct {
	name  string // as it was last seen
	f     *os.File
	info  os.FileInfo // what it is, to know it again under another name
	done  int64       // bytes indexed: up to the last whole line
	lines int         // lines seen
}

// index is the panel's index of one log.
type index struct {
	path string

	mu      sync.Mutex
	files   []*idxFile
	entries []entry
	arena   []byte
	strs    interner
	damaged error // the first line that is not a record
	lastSeq int64
	// join joins each line to the call it continues, as every reader of
	// the log joins them (audit.Joiner), so the panel's calls are audit
	// stats' calls.
	join audit.Joiner

	scanned int64 // bytes of the log read into the index, since it was loaded or last started over
	savedAt int64 // scanned when the index file was last written
	saving  bool
	stale   bool // a line read back was not what was indexed: start over
	closed  bool // the server is closed: nothing more is kept

	indexFile string // where it is kept between starts; "" nowhere
	loadErr   error  // why the kept index was not taken, if it was not
}

// reset empties the index, to read the log again from its start.
func (ix *index) reset() {
	for _, f := range ix.files {
		f.f.Close()
	}
	ix.files, ix.entries, ix.arena, ix.strs = nil, nil, nil, interner{}
	ix.damaged, ix.lastSeq, ix.scanned, ix.savedAt, ix.stale = nil, 0, 0, -1, false
	ix.join = audit.Joiner{}
}

func newIndex(path string) *index { return &index{path: path} }

// refresh brings the index up to the log's end. The caller holds mu.
// Files are known by their identity, not their name: the current file is
// renamed when the log rotates, and is then read on under its new name.
func (ix *index) refresh() error {
	if ix.stale {
		ix.reset()
	}
	names, err := audit.Files(ix.path)
	if err != nil {
		return err
	}
	for _, n := range names {
		st, err := os.Stat(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // rotated between the listing and now: seen next time
		}
		if err != nil {
			return fmt.Errorf("admin: index: %w", err)
		}
		var f *idxFile
		for _, g := range ix.files {
			if os.SameFile(g.info, st) {
				f = g
				break
			}
		}
		if f == nil {
			fd, err := os.Open(n)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("admin: index: %w", err)
			}
			info, err := fd.Stat()
			if err != nil || !os.SameFile(info, st) {
				fd.Close() // replaced between the stat and the open: seen next time
				continue
			}
			f = &idxFile{f: fd, info: info}
			ix.files = append(ix.files, f)
		}
		f.name = n
		if st.Size() < f.done {
			// Cut short: what was indexed is no longer all there.
			ix.reset()
			return ix.refresh()
		}
		if st.Size() > f.done {
			if err := ix.scan(f, n == ix.path); err != nil {
				return err
			}
		}
	}
	if ix.indexFile != "" && !ix.saving && ix.scanned-ix.savedAt > saveEvery {
		go ix.save(ix.indexFile) // after the request: it waits for mu
	}
	return nil
}

// saveEvery is how much newly read log makes the panel keep its index
// again while it runs.
const saveEvery = 64 << 20

// scanChunk is how much of a file is read at once.
const scanChunk = 8 << 20

// scan indexes f's whole lines from where it stopped. A line without its
// newline at the end of the current file is being written: it waits for
// the next scan. At the end of a rotated file it is torn.
func (ix *index) scan(f *idxFile, current bool) error {
	fileNo := int32(-1)
	for i, g := range ix.files {
		if g == f {
			fileNo = int32(i)
		}
	}
	buf := make([]byte, scanChunk)
	carry := 0 // bytes at buf's start left from the last read: a line's beginning
	for {
		n, err := f.f.ReadAt(buf[carry:], f.done+int64(carry))
		if err != nil && err != io.EOF {
			return fmt.Errorf("admin: index %s: %w", f.name, err)
		}
		have := carry + n
		end := bytes.LastIndexByte(buf[:have], '\n') + 1
		if end == 0 && have == len(buf) {
			// A line longer than the buffer: grow it.
			buf = append(buf, make([]byte, len(buf))...)
			carry = have
			continue
		}
		ix.addLines(f, fileNo, buf[:end])
		rest := have - end
		f.done += int64(end)
		ix.scanned += int64(end)
		if n == 0 || err == io.EOF {
			if rest > 0 && !current && ix.damaged == nil {
				ix.damaged = &audit.LineError{File: f.name, Line: f.lines + 1, Err: errors.New("torn line: no newline at the end")}
			}
			return nil
		}
		copy(buf, buf[end:have])
		carry = rest
	}
}

// addLines indexes whole lines, parsing them on every core and numbering
// them in order.
func (ix *index) addLines(f *idxFile, fileNo int32, chunk []byte) {
	if len(chunk) == 0 {
		return
	}
	var starts []int
	for i := 0; i < len(chunk); {
		starts = append(starts, i)
		j := bytes.IndexByte(chunk[i:], '\n')
		i += j + 1
	}
	out := make([]parsed, len(starts))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(starts)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for k := w; k < len(starts); k += workers {
				end := len(chunk) - 1
				if k+1 < len(starts) {
					end = starts[k+1] - 1
				}
				r, err := scanLine(chunk[starts[k]:end])
				if err != nil {
					out[k].bad = err
					continue
				}
				out[k] = derive(&r)
				out[k].rec = r
			}
		})
	}
	wg.Wait()
	base := f.done
	for k, p := range out {
		f.lines++
		if p.bad != nil {
			if ix.damaged == nil {
				ix.damaged = &audit.LineError{File: f.name, Line: f.lines, Err: p.bad}
			}
			continue
		}
		end := len(chunk) - 1
		if k+1 < len(starts) {
			end = starts[k+1] - 1
		}
		ix.add(p, fileNo, base+int64(starts[k]), chunk[starts[k]:end])
	}
}

func (ix *index) add(p parsed, fileNo int32, off int64, line []byte) {
	e := entry{summary: p.sum, file: fileNo, off: off, n: int32(len(line)), sum: crc32.Checksum(line, crcTable)}
	e.session, e.agent, e.via = ix.strs.id(p.session), ix.strs.id(p.agent), ix.strs.id(p.via)
	e.tool, e.rule, e.path = ix.strs.id(p.tool), ix.strs.id(p.rule), ix.strs.id(p.path)
	e.vault = ix.strs.id(p.vault)
	e.text = uint32(len(ix.arena))
	ix.arena = append(ix.arena, p.text...)
	e.textEnd = uint32(len(ix.arena))
	ix.entries = append(ix.entries, e)
	ix.lastSeq = max(ix.lastSeq, e.seq)
	ix.joinLast(p.rec)
}

// joinLast joins the entry just added, whose line is r, to the call it
// continues, if any (audit.Joiner): the entry becomes a part of the
// call's entry, and the call's summary is derived again from all its
// lines. The caller holds mu.
func (ix *index) joinLast(r audit.Record) {
	c, part := ix.join.Add(r)
	if part == audit.PartCall {
		return
	}
	i := len(ix.entries) - 1
	k := ix.callEntry(c.Seq, i)
	if k < 0 {
		return // never: the call's line was indexed, within the window
	}
	e := &ix.entries[i]
	e.part, e.link = true, [2]int32{int32(k + 1), 0}
	ce := &ix.entries[k]
	if part == audit.PartExec {
		ce.link[0] = int32(i + 1)
	} else {
		ce.link[1] = int32(i + 1)
	}
	q := deriveCall(c)
	ce.look, ce.changes, ce.failed, ce.path = q.sum.look, q.sum.changes, q.sum.failed, ix.strs.id(q.path)
}

// callEntry finds, back from entry i, the entry of the call whose own
// line has seq: within audit.JoinWindow entries, since every line the
// Joiner saw is one.
func (ix *index) callEntry(seq int64, i int) int {
	for k := i - 1; k >= 0 && k >= i-audit.JoinWindow-1; k-- {
		if e := &ix.entries[k]; e.seq == seq && !e.part {
			return k
		}
	}
	return -1
}

// rejoin makes the Joiner what it was when the kept index was written,
// feeding it the lines that calls may still be waiting for parts from:
// the last audit.JoinWindow. The caller holds mu; on an error the kept
// index is not to be taken.
func (ix *index) rejoin() error {
	ix.join = audit.Joiner{}
	for i := max(0, len(ix.entries)-audit.JoinWindow); i < len(ix.entries); i++ {
		e := &ix.entries[i]
		buf := make([]byte, e.n)
		if _, err := ix.files[e.file].f.ReadAt(buf, e.off); err != nil {
			return fmt.Errorf("admin: read %s: %w", ix.files[e.file].name, err)
		}
		if crc32.Checksum(buf, crcTable) != e.sum {
			return fmt.Errorf("admin: %s changed since the index was kept", ix.files[e.file].name)
		}
		r, err := scanLine(buf)
		if err != nil {
			return fmt.Errorf("admin: %s: %w", ix.files[e.file].name, err)
		}
		ix.join.Add(r)
	}
	return nil
}

// call reads a call's lines back: its entry's, and its parts'. The
// caller holds mu.
func (ix *index) call(e *entry) (audit.Call, error) {
	r, err := ix.record(e)
	c := audit.Call{Record: r}
	if err != nil {
		return c, err
	}
	for k, l := range e.link {
		if l == 0 || e.part {
			continue
		}
		p, err := ix.record(&ix.entries[l-1])
		if err != nil {
			return c, err
		}
		if k == 0 {
			c.Exec = &p
		} else {
			c.After = &p
		}
	}
	return c, nil
}

// callTexts are the searchable texts of a call's lines. The caller holds
// mu.
func (ix *index) callTexts(e *entry) (t [3][]byte) {
	t[0] = ix.text(e)
	if !e.part {
		for k, l := range e.link {
			if l != 0 {
				t[k+1] = ix.text(&ix.entries[l-1])
			}
		}
	}
	return t
}

// matchEntry reports whether the call of entry e passes m; a part never
// does (its call's entry answers for it). The caller holds mu.
func (ix *index) matchEntry(m *matcher, e *entry) bool {
	if e.part {
		return false
	}
	t := ix.callTexts(e)
	return ix.match(m, &e.summary, t[:]...)
}

// record reads one entry's line back. The caller holds mu.
func (ix *index) record(e *entry) (audit.Record, error) {
	var r audit.Record
	buf := make([]byte, e.n)
	if _, err := ix.files[e.file].f.ReadAt(buf, e.off); err != nil {
		return r, fmt.Errorf("admin: read %s: %w", ix.files[e.file].name, err)
	}
	if crc32.Checksum(buf, crcTable) != e.sum {
		ix.stale = true
		return r, fmt.Errorf("admin: %s changed under the panel: it reads the log again", ix.files[e.file].name)
	}
	err := json.Unmarshal(buf, &r)
	return r, err
}

// slimLine is the part of a line the index reads: a record without what
// only its full view shows (the output, the wall, the sizes of what bash
// changed), and with only the arguments that hold a path or a command.
type slimLine struct {
	Time      time.Time `json:"time"`
	ID        string    `json:"id"`
	ToolUseID string    `json:"tool_use_id"`
	Continues string    `json:"continues"`
	Vault     string    `json:"vault"`
	Session   string    `json:"session"`
	Agent     string    `json:"agent"`
	Via       audit.Via `json:"via"`
	Event     string    `json:"event"`
	Tool      string    `json:"tool"`
	Args      slimArgs  `json:"args"`
	Effects   []audit.Effect
	Real      []slimReal
	Decision  audit.Decision `json:"decision"`
	Rule      string         `json:"rule"`
	Reason    string         `json:"reason"`
	Outcome   audit.Outcome  `json:"outcome"`
	Error     string         `json:"error"`
	ExitCode  *int           `json:"exit_code"`
	TimedOut  bool           `json:"timed_out"`
	Signal    int            `json:"signal"`
	Seq       int64          `json:"seq"`
}

type slimReal struct {
	Op          string `json:"op"`
	Path        string `json:"path"`
	From        string `json:"from"`
	Unpredicted bool   `json:"unpredicted"`
	Refused     bool   `json:"refused"`
}

// slimArgs are the arguments derive reads: the path-like ones and bash's
// command, at the top level where the tools and the hook put them.
type slimArgs struct {
	Command      string   `json:"command"`
	Path         string   `json:"path"`
	Source       string   `json:"source"`
	Destination  string   `json:"destination"`
	FilePath     string   `json:"file_path"`
	NotebookPath string   `json:"notebook_path"`
	Pattern      string   `json:"pattern"`
	Paths        []string `json:"paths"`
}

func (l *slimLine) record() audit.Record {
	r := audit.Record{Time: l.Time, ID: l.ID, ToolUseID: l.ToolUseID, Continues: l.Continues, Vault: l.Vault, Session: l.Session, Agent: l.Agent, Via: l.Via, Event: l.Event, Tool: l.Tool,
		Effects: l.Effects, Decision: l.Decision, Rule: l.Rule, Reason: l.Reason, Outcome: l.Outcome, Error: l.Error,
		ExitCode: l.ExitCode, TimedOut: l.TimedOut, Signal: l.Signal, Seq: l.Seq, Args: map[string]any{}}
	for _, e := range l.Real {
		r.Real = append(r.Real, audit.RealEffect{Op: e.Op, Path: e.Path, From: e.From, Unpredicted: e.Unpredicted, Refused: e.Refused})
	}
	a := &l.Args
	for _, kv := range [...]struct{ k, v string }{{"command", a.Command}, {"path", a.Path}, {"source", a.Source},
		{"destination", a.Destination}, {"file_path", a.FilePath}, {"notebook_path", a.NotebookPath}, {"pattern", a.Pattern}} {
		if kv.v != "" {
			r.Args[kv.k] = kv.v
		}
	}
	if len(a.Paths) > 0 {
		ps := make([]any, len(a.Paths))
		for i, p := range a.Paths {
			ps[i] = p
		}
		r.Args["paths"] = ps
	}
	return r
}
