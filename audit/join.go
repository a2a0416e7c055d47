package audit

import (
	"cmp"
	"iter"
)

// One call of the agent can leave more than one line. Claude Code's Bash
// leaves three: the hook's judgement (via hook, tool Bash), the line of
// the `vaultgate exec` that ran it (via exec, tool bash: the wall, the
// exit code, what it really changed), whose Continues names the hook's
// line, and the hook's line after Claude Code ran it (event after, the
// same session and tool_use_id). Any other tool the hook lets through
// leaves the first and the last. Where the log is read for a person —
// audit tail, audit stats, the panel, history — these lines are joined
// into one Call by a Joiner, and nowhere else, so every reader shows and
// counts the same calls.

// Part is what a line is to the call it belongs to.
type Part uint8

const (
	// PartCall: the line opens a call; it holds the call's judgement.
	// Every line that continues no call within reach is one.
	PartCall Part = iota
	// PartExec: vaultgate exec's line that ran the hook's Bash: the run,
	// and what the command really changed.
	PartExec
	// PartAfter: the hook's line after Claude Code ran the tool.
	PartAfter
)

func (p Part) String() string {
	switch p {
	case PartExec:
		return "exec"
	case PartAfter:
		return "after"
	}
	return "call"
}

// JoinWindow is how many lines after a call's own line its exec and after
// lines may come and still be joined to it. One that comes later (a
// command that ran for longer than so many other lines took to be
// written) stands alone, as does one whose call's line is not in the log
// any more (rotated away) or that continues nothing (exec run by hand).
const JoinWindow = 10000

// Call is one call of the agent's as a person reads it: the line that
// judged it, and the lines that continue it. Record is the call's own
// line (for Claude Code's Bash, the hook's): its decision is the call's.
// Exec is the line of the vaultgate exec that ran the hook's Bash; After,
// the hook's line after Claude Code ran the tool; either nil when there is
// none (yet). The promoted Record methods Failed and FailedWhy are
// replaced by the call's own, which read every line.
type Call struct {
	Record
	Exec  *Record `json:"exec,omitempty"`
	After *Record `json:"after,omitempty"`

	at   int64 // the number of the call's line in its Joiner
	wait uint8 // waitExec, waitAfter: the parts that may still come
}

const (
	waitExec uint8 = 1 << iota
	waitAfter
)

// Open reports whether a later line may still join the call: its Joiner
// has not yet seen every line it waits for, within JoinWindow lines.
func (c *Call) Open() bool { return c.wait != 0 }

// Lines are the call's lines in the log's order: its own, then exec's,
// then the after line.
func (c *Call) Lines() []*Record {
	out := []*Record{&c.Record}
	if c.Exec != nil {
		out = append(out, c.Exec)
	}
	if c.After != nil {
		out = append(out, c.After)
	}
	return out
}

// Ran is the line that says how the call ran: exec's when the hook's Bash
// ran through it (its wall, exit code, output, outcome and real changes),
// else the call's own.
func (c *Call) Ran() *Record {
	if c.Exec != nil {
		return c.Exec
	}
	return &c.Record
}

// RealEffects is what a bash call really changed: the Real of the line
// that ran it.
func (c *Call) RealEffects() []RealEffect { return c.Ran().Real }

// execFailed reports whether the run through exec did not go through:
// refused there, not judged, or failed.
func execFailed(e *Record) bool {
	return e.Decision != "allow" || e.Failed()
}

// Failed reports whether the call was allowed and then failed: its own
// line says so, or the exec that ran it was refused or failed, or the
// hook's after line says it failed.
func (c *Call) Failed() bool {
	if c.Decision != "allow" {
		return false
	}
	return c.Record.Failed() || c.Exec != nil && execFailed(c.Exec) || c.After != nil && c.After.Failed()
}

// FailedWhy says in a few words why an allowed call failed, "" when it did
// not: the run's reason first (as Record.FailedWhy says it; a refusal at
// exec as its rule and reason), then the call's own line's, then the
// after line's.
func (c *Call) FailedWhy() string {
	if !c.Failed() {
		return ""
	}
	if e := c.Exec; e != nil && execFailed(e) {
		switch e.Decision {
		case "allow":
			return e.FailedWhy()
		case "deny":
			return "refused as it ran: [" + cmp.Or(e.Rule, NoRule) + "] " + e.Reason
		}
		return cmp.Or(e.Error, "could not be judged as it ran")
	}
	if why := c.Record.FailedWhy(); why != "" {
		return why
	}
	if c.After != nil {
		return c.After.FailedWhy()
	}
	return "failed"
}

// waitsForExec reports whether r is a line an exec line may continue: the
// hook's judgement of a Bash it let through.
func waitsForExec(r *Record) bool {
	return r.ID != "" && r.Via == "hook" && r.Event == "" && r.Tool == "Bash" && r.Decision == "allow"
}

// waitsForAfter reports whether r is a line the hook's after line may
// continue: its judgement of a tool it let Claude Code run.
func waitsForAfter(r *Record) bool {
	return r.ToolUseID != "" && r.Via == "hook" && r.Event == "" && r.Decision == "allow"
}

func useKey(r *Record) string { return r.Session + "\x00" + r.ToolUseID }

// Joiner joins the lines of the log into calls as they are read, in the
// log's order. It is the one place where lines become calls: every reader
// that shows or counts calls feeds it every line it reads (filters apply
// to the calls it makes, never to the lines), so they agree. The zero
// Joiner is ready to use; it is not safe for concurrent use.
//
// An exec line joins the call whose line's id its Continues names; the
// hook's after line joins the call whose hook line has its session and
// tool_use_id; each joins at most once, and only within JoinWindow lines.
// Any other line opens a call of its own.
type Joiner struct {
	n     int64            // lines added
	exec  map[string]*Call // calls whose exec line may still come, by their line's id
	after map[string]*Call // calls whose after line may still come, by useKey
	queue []waiting        // the calls above, by their line, oldest first
	head  int              // queue[:head] are done with
}

type waiting struct {
	c   *Call
	bit uint8
	key string
}

// Add joins the next line of the log to what was read before it. It
// returns the call the line belongs to and what the line is to it: for a
// line that continues an earlier call, the *Call Add returned for that
// call's line, with this line in it now; else a new call of its own.
func (j *Joiner) Add(r Record) (*Call, Part) {
	j.n++
	j.expire()
	if r.Continues != "" {
		if c := j.take(j.exec, r.Continues, waitExec); c != nil {
			c.Exec = &r
			return c, PartExec
		}
	}
	if r.Event == EventAfter && r.ToolUseID != "" {
		if c := j.take(j.after, useKey(&r), waitAfter); c != nil {
			c.After = &r
			return c, PartAfter
		}
	}
	c := &Call{Record: r, at: j.n}
	if waitsForExec(&c.Record) {
		j.exec = j.wait(j.exec, c, c.ID, waitExec)
	}
	if waitsForAfter(&c.Record) {
		j.after = j.wait(j.after, c, useKey(&c.Record), waitAfter)
	}
	return c, PartCall
}

// wait notes that c waits for the part bit, found by key. A call that
// waited under the same key (a duplicate id) waits no more.
func (j *Joiner) wait(m map[string]*Call, c *Call, key string, bit uint8) map[string]*Call {
	if m == nil {
		m = map[string]*Call{}
	}
	if old := m[key]; old != nil {
		old.wait &^= bit
	}
	m[key] = c
	c.wait |= bit
	j.queue = append(j.queue, waiting{c: c, bit: bit, key: key})
	return m
}

func (j *Joiner) take(m map[string]*Call, key string, bit uint8) *Call {
	c := m[key]
	if c == nil {
		return nil
	}
	delete(m, key)
	c.wait &^= bit
	return c
}

// expire lets go of the calls whose line is more than JoinWindow lines
// back: no later line joins them.
func (j *Joiner) expire() {
	for j.head < len(j.queue) && j.n-j.queue[j.head].c.at > JoinWindow {
		w := j.queue[j.head]
		j.queue[j.head] = waiting{}
		j.head++
		if w.c.wait&w.bit == 0 {
			continue // joined already, or replaced
		}
		w.c.wait &^= w.bit
		m := j.exec
		if w.bit == waitAfter {
			m = j.after
		}
		if m[w.key] == w.c {
			delete(m, w.key)
		}
	}
	if j.head > 1024 && j.head*2 > len(j.queue) {
		j.queue = append(j.queue[:0], j.queue[j.head:]...)
		j.head = 0
	}
}

// Calls feeds records to j and yields the calls they make, in the order
// of the lines that opened them, each once no later line can join it (or
// the records have ended): whole. The calls still open at the end stay in
// j, so lines added after (a log followed on) still join them.
func (j *Joiner) Calls(records iter.Seq[Record]) iter.Seq[*Call] {
	return func(yield func(*Call) bool) {
		var win []*Call // calls opened and not yet yielded, in order
		head := 0
		for r := range records {
			if c, part := j.Add(r); part == PartCall {
				win = append(win, c)
			}
			for head < len(win) && !win[head].Open() {
				c := win[head]
				win[head] = nil
				head++
				if !yield(c) {
					return
				}
			}
			if head > 1024 && head*2 > len(win) {
				win = append(win[:0], win[head:]...)
				head = 0
			}
		}
		for _, c := range win[head:] {
			if !yield(c) {
				return
			}
		}
	}
}

// Join yields the calls the records make, joined as a new Joiner joins
// them, in the order of the lines that opened them.
func Join(records iter.Seq[Record]) iter.Seq[*Call] {
	var j Joiner
	return j.Calls(records)
}

// Read calls fn with every call of the log at path, joined, in the order
// of the lines that opened them; as the package's Read, a damaged line is
// skipped and reported at the end, and an error from fn stops it and is
// returned. The calls still open at the end stay in j.
func (j *Joiner) Read(path string, fn func(*Call) error) error {
	var err, stop error
	records := func(yield func(Record) bool) {
		err = Read(path, func(r Record) error {
			if !yield(r) {
				return errStop
			}
			return nil
		})
	}
	for c := range j.Calls(records) {
		if stop = fn(c); stop != nil {
			break
		}
	}
	if stop != nil {
		return stop
	}
	return err
}

// ReadCalls calls fn with every call of the log at path, joined by a new
// Joiner; see Joiner.Read.
func ReadCalls(path string, fn func(*Call) error) error {
	var j Joiner
	return j.Read(path, fn)
}
