package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/zones"
)

// A walled bash call runs on an overlay of the vault, and is a
// transaction: when the command has ended, what it really changed (the
// upper layer, read by txn.Diff) becomes effects that the agent's chain
// judges like any other call's (the gate judges a Pending), and only if
// every one is allowed does txn.Commit apply them. The analysis stays the fast first
// gate; this is the judge of what actually happened.

// RealPart is the fact on each real effect of a call on the overlay: the
// change it comes from, for the bash rule (a special file) and the audit.
type RealPart struct {
	Change txn.Change
	// Unsafe are the bits of unsafeMode the change brings into the vault
	// (callModes.added); the bash rule refuses a change that has any.
	Unsafe fs.FileMode
}

// RealEffect is one real effect of a call, judged.
type RealEffect struct {
	policy.Effect
	Before, After *txn.State
	// Unpredicted marks an effect the analysis did not foresee.
	Unpredicted bool
	// Refused marks an effect the chain refused on its own.
	Refused bool
}

// bashTxn is one call's overlay layer, from before its command starts to
// after its changes were applied or thrown away.
type bashTxn struct {
	layer  *txn.Layer // nil for an in-memory layer until the command has ended
	memory *sandbox.MemoryLayer
	start  txn.Start // when the call began, for the commit's conflicts (txn.Begin)
	diff   txn.DiffOptions
}

// remove throws the layer away.
func (tx *bashTxn) remove() {
	if tx.layer != nil {
		_ = tx.layer.Remove()
	}
}

// beginBash returns the wall that mounts the vault as an overlay on the
// call's layer: a tmpfs of the call's own where the kernel's tmpfs can
// hold one (nothing is made on disk for a call that changes nothing, and
// a crash leaves nothing behind), else folders it makes in the state
// folder.
func (s *Set) beginBash(wall *sandbox.WallConfig) (*sandbox.WallConfig, *bashTxn, error) {
	if s.Vault.StateDir == "" {
		return nil, nil, errors.New("bash: the vault has no state folder for the call's overlay")
	}
	if s.Bash.MaxChangedFiles <= 0 || s.Bash.MaxChangedBytes <= 0 {
		// txn.Diff reads 0 as "no cap": a Bash not made by config.Load
		// must not run a transaction without one.
		return nil, nil, errors.New("bash: max_changed_files and max_changed_bytes must be set for a call on the overlay")
	}
	probe := sandbox.ProbeWall(wall.Helper)
	tx := &bashTxn{diff: txn.DiffOptions{
		Privileged: probe.Root,
		MaxFiles:   s.Bash.MaxChangedFiles,
		MaxBytes:   s.Bash.MaxChangedBytes,
	}}
	w := *wall
	if wall.Layers.MemoryLayer && !s.diskLayer {
		tx.memory = &sandbox.MemoryLayer{MaxBytes: s.Bash.MaxChangedBytes, MaxFiles: int64(s.Bash.MaxChangedFiles)}
		w.Overlay = &sandbox.Overlay{Memory: tx.memory}
	} else {
		l, err := txn.NewLayer(s.Vault.StateDir)
		if err != nil {
			return nil, nil, err
		}
		tx.layer = l
		w.Overlay = &sandbox.Overlay{Upper: l.Upper, Work: l.Work}
	}
	// The call starts here, under the vault lock, before its command
	// can run: whatever changed the vault before (the last call's commit,
	// the person's undo a moment ago) is older than the start, whatever
	// changes it from now on is a conflict at the commit.
	start, err := txn.Begin(s.Vault.Fs, s.Vault.StateDir)
	if err != nil {
		tx.remove()
		return nil, nil, err
	}
	tx.start = start
	return &w, tx, nil
}

// takeLayer makes an in-memory layer's txn.Layer from the upper folder
// the wall handed over.
func (s *Set) takeLayer(tx *bashTxn, res sandbox.Result) error {
	if tx.memory == nil {
		return nil
	}
	if res.Upper == nil {
		return errors.New("the wall handed over no upper layer")
	}
	l, err := txn.MemoryLayer(s.Vault.StateDir, res.Upper)
	if err != nil {
		res.Upper.Close()
		return err
	}
	tx.layer = l
	return nil
}

// finishBash reads what a command that has ended changed on its layer:
// nothing of it is applied when the command did not end by itself, or the
// changes can't be read or are over the caps; else out carries them as
// Pending, for the gate to judge and then commit or refuse. out is the
// command's result, to which it adds what became of its changes.
func (s *Set) finishBash(tx *bashTxn, res sandbox.Result, out *Result, predicted []policy.Effect) *Result {
	pending := false // the layer is the Pending's, to commit or remove
	defer func() {
		if !pending {
			tx.remove()
		}
	}()
	layerErr := s.takeLayer(tx, res)
	if res.TimedOut || res.Signal != 0 {
		return s.notApplied(out, say.BashUnfinished{}, nil)
	}
	if layerErr != nil {
		return s.notApplied(out, say.BashChangesUnread{Problem: layerErr.Error()}, nil)
	}
	if tx.memory != nil {
		// The tmpfs is sized so that a call within its caps never fills
		// it: a full one stopped a write past them (ENOSPC).
		full, err := sandbox.MemoryFull(res.Upper, *tx.memory)
		if err != nil {
			return s.notApplied(out, say.BashChangesUnread{Problem: err.Error()}, nil)
		}
		switch full {
		case "files":
			return s.notApplied(out, say.BashOverLimit{Key: "max_changed_files", Limit: tx.memory.MaxFiles}, nil)
		case "bytes":
			return s.notApplied(out, say.BashOverLimit{Key: "max_changed_bytes", Limit: tx.memory.MaxBytes}, nil)
		}
	}
	changes, err := txn.Diff(tx.layer, s.Vault.Root, tx.diff)
	var limit *txn.LimitError
	switch {
	case errors.As(err, &limit):
		key := map[string]string{"files": "max_changed_files", "bytes": "max_changed_bytes"}[limit.What]
		return s.notApplied(out, say.BashOverLimit{Key: key, Limit: limit.Limit}, nil)
	case err != nil:
		return s.notApplied(out, say.BashChangesUnread{Problem: err.Error()}, nil)
	}
	real, err := s.realEffects(changes, predicted)
	if err != nil { // a folder too big to judge on every path, or unreadable: nothing applied
		return s.notApplied(out, s.realRefusal(err), nil)
	}
	out.Real = real
	s.realLeads(out.Real, changes) // where each symlink it leaves leads (links.go)
	out.Pending = &Pending{set: s, tx: tx, changes: changes, out: out}
	pending = true
	return out
}

// notApplied marks out as a run none of whose changes reached the vault,
// for m's reason (d: the chain's refusal, when it was that).
func (s *Set) notApplied(out *Result, m say.Message, d *policy.Deny) *Result {
	out.NotApplied = m.Text(s.Lang)
	out.Text = out.NotApplied + out.Text
	out.Refused, out.Failed = d, true
	if so, ok := out.Structured.(BashOutput); ok {
		so.NotApplied = out.NotApplied
		out.Structured = so
	}
	return out
}

// Pending is what a bash call on the overlay really changed, read and
// zoned but not applied: the tool does not judge it. The gate judges its
// Effects with the agent's chain — the same chain that judged what the
// call would do — and then either commits it or refuses it; exactly one
// of Commit, Refuse and Discard is called, each of which ends the
// call's layer.
type Pending struct {
	set     *Set
	tx      *bashTxn
	changes []txn.Change
	out     *Result
	done    bool
}

// Effects are the real effects, in the order of Result.Real.
func (p *Pending) Effects() []policy.Effect {
	effects := make([]policy.Effect, len(p.out.Real))
	for i := range p.out.Real {
		effects[i] = p.out.Real[i].Effect
	}
	return effects
}

// Facts is what the bash rule reads of a call of real effects.
func (p *Pending) Facts() any { return BashCall{Real: true} }

// end takes the layer off the call, once.
func (p *Pending) end() bool {
	if p.done {
		return false
	}
	p.done = true
	p.out.Pending = nil
	return true
}

// Refuse throws the changes away for the chain's refusal d: refused marks
// each real effect the chain refused on its own, and reasons are the
// refusals to name.
func (p *Pending) Refuse(d *policy.Deny, refused []bool, reasons []string) *Result {
	if !p.end() {
		return p.out
	}
	defer p.tx.remove()
	for i := range p.out.Real {
		p.out.Real[i].Refused = i < len(refused) && refused[i]
	}
	return p.set.notApplied(p.out, say.BashNotApplied{Refusals: reasons}, d)
}

// Discard throws the changes away without a judgement: a call that could
// not be judged to its end (a panic) applies nothing.
func (p *Pending) Discard() {
	if p.end() {
		p.tx.remove()
	}
}

// Commit applies every change, all or nothing: nothing when the history
// can't keep what they replace, or one conflicts with a change made
// meanwhile.
func (p *Pending) Commit() *Result {
	if !p.end() {
		return p.out
	}
	s, tx, out, changes := p.set, p.tx, p.out, p.changes
	keep := false // an incomplete commit keeps its layer, for Sweep
	defer func() {
		if !keep {
			tx.remove()
		}
	}()
	k, refusal := s.keepCommit(tx.layer, changes)
	if refusal != nil {
		return s.notApplied(out, refusal, nil)
	}
	err := txn.Commit(s.Vault.Fs, tx.layer, changes, txn.CommitOptions{Start: tx.start})
	k.settleCommit(err)
	var conflict *txn.ConflictError
	var incomplete *txn.IncompleteError
	switch {
	case errors.As(err, &conflict):
		return s.notApplied(out, say.BashConflict{Path: conflict.Path}, nil)
	case errors.As(err, &incomplete):
		keep = true
		return s.notApplied(out, say.BashCommitFailed{Problem: err.Error()}, nil)
	case err != nil:
		return s.notApplied(out, say.BashNotCommitted{Problem: err.Error()}, nil)
	}
	return out
}

// realEffects turns the changes into effects, zoned, in the terms the
// rules judge: a move is a move-out and a move-in from its source, a
// folder deleted or moved, or whose mode changed, takes everything in it
// (one effect per path, coverReal), a name replaced (a file renamed over
// another, one kind of file put where another stood) is a change of what
// was there. Each is marked when no predicted effect accounts for it.
func (s *Set) realEffects(changes []txn.Change, predicted []policy.Effect) ([]RealEffect, error) {
	replaced := map[string]bool{} // paths whose vault entry another change takes the place of
	deleted := map[string]bool{}
	for _, c := range changes {
		if c.Op == txn.Delete && !c.Dir {
			deleted[c.Path] = true
		}
	}
	for _, c := range changes {
		if c.Op == txn.Move || c.Op == txn.Create {
			if deleted[c.Path] && !c.Dir {
				replaced[c.Path] = true
			}
		}
	}
	modes := s.callModes(changes)
	var out []RealEffect
	var changeOf []int // for each of out, the index of its change
	current := 0
	add := func(c txn.Change, op zones.Op, at, from string, subtree bool) {
		changeOf = append(changeOf, current)
		e := policy.Effect{Op: op, Subtree: subtree, Cause: "bash", Fact: RealPart{Change: c, Unsafe: modes.added(c)}}
		p, ok := s.realPath(at)
		if !ok {
			e.Unknown = true // a name the zones can't place: refused
		}
		e.Path = p
		if from != "" {
			if src, ok := s.realPath(from); ok {
				e.Source = src
			} else {
				e.SourceUnknown = true
			}
		}
		out = append(out, RealEffect{Effect: e, Before: c.Before, After: c.After})
	}
	for i, c := range changes {
		current = i
		switch c.Op {
		case txn.Create:
			op := zones.OpCreate
			if replaced[c.Path] {
				op = zones.OpModify
			}
			add(c, op, c.Path, "", false)
			out[len(out)-1].Exists = replaced[c.Path]
		case txn.Modify:
			add(c, zones.OpModify, c.Path, "", c.Dir) // a folder's mode: of all it holds
			out[len(out)-1].Exists = true
		case txn.Delete:
			if replaced[c.Path] {
				continue // judged as the change of what takes its place
			}
			add(c, zones.OpDelete, c.Path, "", c.Dir)
			out[len(out)-1].Exists = true
		case txn.Move:
			add(c, zones.OpMoveOut, c.From, "", c.Dir)
			out[len(out)-1].Exists = true
			add(c, zones.OpMoveIn, c.Path, c.From, c.Dir)
			out[len(out)-1].Exists = replaced[c.Path]
		case txn.Link:
			add(c, zones.OpLink, c.Path, c.From, false)
		default: // Special, and any op this code does not know: refused by the bash rule
			add(c, zones.OpCreate, c.Path, "", false)
		}
	}
	fx := make([]policy.Effect, len(out))
	for i := range out {
		fx[i] = out[i].Effect
	}
	policy.Zoned(s.Zones, fx)
	for i := range out {
		out[i].Effect = fx[i]
		out[i].Unpredicted = !foreseen(out[i].Effect, predicted)
	}
	return s.coverReal(out, changes, changeOf)
}

// realRefusal is why a call's real changes were not judged: a folder
// effect too big to judge on every path (refused whole), or one whose
// folder could not be read.
func (s *Set) realRefusal(err error) say.Message {
	var f *failure
	if errors.As(err, &f) {
		return say.BashNotApplied{Refusals: []string{f.text}}
	}
	return say.BashChangesUnread{Problem: err.Error()}
}

// realPath places a change's on-disk name in the zones' terms; ok is false
// for a name they can't judge.
func (s *Set) realPath(rel string) (zones.Path, bool) {
	if rel == "" {
		return zones.Path{}, false
	}
	p, err := zones.Normalize(s.Vault.Root, rel)
	if err != nil || p.Outside() {
		return zones.Path{}, false
	}
	return p, true
}

// foreseenAs lists, for each op of a real effect, the predicted ops that
// account for it: the analysis says create or modify by whether the file
// existed when it looked, and a rename's parts may be read as a removal
// and a write.
var foreseenAs = map[zones.Op][]zones.Op{
	zones.OpCreate:  {zones.OpCreate, zones.OpModify, zones.OpMoveIn, zones.OpLink},
	zones.OpModify:  {zones.OpModify, zones.OpCreate, zones.OpMoveIn},
	zones.OpDelete:  {zones.OpDelete, zones.OpMoveOut},
	zones.OpMoveOut: {zones.OpMoveOut, zones.OpDelete},
	zones.OpMoveIn:  {zones.OpMoveIn, zones.OpCreate, zones.OpModify},
	zones.OpLink:    {zones.OpLink, zones.OpCreate},
}

// foreseen reports whether a predicted effect accounts for real: one of a
// fitting op on its path, or on a folder holding it, or (a folder really
// removed) inside it.
func foreseen(real policy.Effect, predicted []policy.Effect) bool {
	if real.Unknown {
		return false
	}
	for _, p := range predicted {
		if p.Unknown || p.Op == zones.OpExec || p.Path.IsZero() {
			continue
		}
		// An edit by rename (sed -i) may keep the old file under another
		// name (sed -i.bak): its name is moved away, then written anew.
		part, _ := p.Fact.(BashPart)
		byRename := p.Op == zones.OpModify && part.ByRename
		if !opFits(real.Op, p.Op) && !(byRename && (real.Op == zones.OpMoveOut || real.Op == zones.OpDelete)) {
			continue
		}
		if p.Path == real.Path || p.Subtree && real.Path.Within(p.Path) || real.Subtree && p.Path.Within(real.Path) {
			return true
		}
	}
	return false
}

func opFits(real, predicted zones.Op) bool {
	for _, op := range foreseenAs[real] {
		if op == predicted {
			return true
		}
	}
	return false
}

// realEffectDeny is the bash rule's own judgement of a real effect: a
// special file never enters the vault, nor does a setuid, setgid, sticky
// or world-writable bit (callModes.added). The zones judge the rest: a mode
// change is a modify of its file or folder, judged like any other.
func realEffectDeny(c *policy.ToolCall, e *policy.Effect) *policy.Deny {
	part, _ := e.Fact.(RealPart)
	switch part.Change.Op {
	case txn.Create, txn.Modify, txn.Delete, txn.Move, txn.Link:
		if part.Change.After == nil || part.Change.After.Mode&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) == 0 {
			if part.Unsafe == 0 {
				return nil
			}
			return &policy.Deny{Effect: e, Reason: say.UnsafeMode{
				Path: e.Path.String(), Mode: octalMode(part.Change.After.Mode),
				Setuid: part.Unsafe&fs.ModeSetuid != 0, Setgid: part.Unsafe&fs.ModeSetgid != 0,
				Sticky: part.Unsafe&fs.ModeSticky != 0, WorldWritable: part.Unsafe&0o002 != 0,
			}.Text(c.Lang)}
		}
	}
	return &policy.Deny{Effect: e, Reason: say.SpecialFile{Path: e.Path.String()}.Text(c.Lang)}
}

// unsafeMode are the bits of a mode that no bash command brings into the
// vault: setuid and setgid (a program run from the vault would run with
// its owner's or group's rights; on a folder, setgid hands its group to
// all that is made in it), sticky, and world-writable (any user of the
// machine could change the note, or what a folder holds).
const unsafeMode = fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky | 0o002

// callModes is what added needs to know of a call's changes besides
// each one: for each name a change touches, the vault's entry that the
// call leaves there (moved or changed), and the entry itself.
type callModes struct {
	s      *Set
	before map[string]*txn.State // the vault's entry now at the name; nil for one the call made
	final  map[string]*txn.State // the entry the call leaves; nil for a name it removes
}

func (s *Set) callModes(changes []txn.Change) callModes {
	m := callModes{s: s, before: map[string]*txn.State{}, final: map[string]*txn.State{}}
	for _, c := range changes {
		switch c.Op {
		case txn.Link:
			continue // a further name of an inode another change names
		case txn.Delete:
			delete(m.before, c.Path)
		case txn.Create:
			m.before[c.Path] = nil
		case txn.Move:
			m.before[c.Path] = c.Before
		default:
			if _, seen := m.before[c.Path]; !seen {
				m.before[c.Path] = c.Before
			}
		}
		m.final[c.Path] = c.After
	}
	return m
}

// added is the one place that decides which mode bits of a bash call
// reach the vault: the bits of unsafeMode that a change's new entry has
// and the vault's entry it changes (what was moved, modified, or linked
// to) did not. It refuses rather than strips — fail closed: what the
// command did is either committed as it did it, or not at all, and the
// model is told why — and keeps what the person set: a setgid folder, a
// world-writable note (a vault on a shared disk) may still be
// written, moved and linked to, and a new folder takes the setgid its
// parent folder has, as the kernel gives it. Only regular files and
// folders have modes that mean anything (a symlink's are always 0777). A
// call's changes pass here on every route bash takes (the bash tool, and
// Claude Code's Bash through exec, under run too): each is judged by the
// bash rule before txn.Commit, which never makes a setuid or setgid file
// either.
func (m callModes) added(c txn.Change) fs.FileMode {
	if c.After == nil || !c.After.Mode.IsRegular() && !c.After.Mode.IsDir() {
		return 0
	}
	was := c.Before
	switch c.Op {
	case txn.Create:
		was = nil
	case txn.Link:
		// The inode's mode is the one its first name's change gives it:
		// what the vault held there, or nothing for a name the call made.
		was = c.After
		if b, changed := m.before[c.From]; changed {
			was = b
		}
	}
	bits := c.After.Mode & unsafeMode
	if was != nil {
		bits &^= was.Mode & unsafeMode
	}
	if c.Op == txn.Create && c.Dir && bits&fs.ModeSetgid != 0 && m.dirHas(path.Dir(c.Path), fs.ModeSetgid) {
		bits &^= fs.ModeSetgid // the kernel's, from a setgid parent
	}
	return bits
}

// dirHas tells whether the folder dir, as the call leaves it, has the
// bits want: set by a change of the call, or (none changed it) in the
// vault.
func (m callModes) dirHas(dir string, want fs.FileMode) bool {
	if st, changed := m.final[dir]; changed {
		return st != nil && st.Mode.IsDir() && st.Mode&want == want
	}
	fi, err := m.s.Vault.Fs.Stat(dir)
	return err == nil && fi.IsDir() && fi.Mode()&want == want
}

// octalMode is a mode as chmod writes it: "3777".
func octalMode(m fs.FileMode) string {
	n := uint32(m.Perm())
	for bit, v := range map[fs.FileMode]uint32{fs.ModeSetuid: 0o4000, fs.ModeSetgid: 0o2000, fs.ModeSticky: 0o1000} {
		if m&bit != 0 {
			n |= v
		}
	}
	return fmt.Sprintf("%04o", n)
}

// String is a real effect as the tests and errors name it.
func (r RealEffect) String() string {
	s := fmt.Sprintf("%s %s", r.Op, r.Path)
	if r.Subtree {
		s += "/**"
	}
	if !r.Source.IsZero() {
		s += " <- " + r.Source.String()
	}
	return s
}

// CallFile is the file in a call's layer folder that names the call whose
// history entries its commit belongs to: when txn.Sweep finishes the
// commit at start-up, those entries are settled (history.Store.Settle).
const CallFile = "call"

// keepCommit takes the pre-images of every path the changes touch, keyed
// by the call's id, before any reaches the vault, and names the call in
// the layer for a commit that Sweep may have to finish. Its error is the
// reason the commit is refused (fail closed).
func (s *Set) keepCommit(l *txn.Layer, changes []txn.Change) (*kept, say.Message) {
	if s.History == nil || len(changes) == 0 {
		return &kept{}, nil
	}
	targets := commitTargets(changes)
	comingFrom(l, changes, targets)
	problem := func(err error) say.Message {
		return say.BashNotKept{Problem: err.Error()}
	}
	if err := l.MakeDir(); err != nil {
		return nil, problem(err)
	}
	c, err := s.History.Begin(s.CallID, s.Call, targets)
	if err != nil {
		return nil, problem(err)
	}
	if err := writeCallFile(filepath.Join(l.Dir, CallFile), []byte(s.CallID)); err != nil {
		c.Failed()
		return nil, problem(err)
	}
	return &kept{c: c}, nil
}

// settleCommit records the commit's outcome; an incomplete one leaves the
// entries pending until Sweep has finished it.
func (k *kept) settleCommit(err error) {
	var incomplete *txn.IncompleteError
	if errors.As(err, &incomplete) {
		return
	}
	k.settle(err)
}

// commitTargets are the history's targets for a change list, one per
// path, in the list's order: a move is its two names, as the move tool
// keeps it.
func commitTargets(changes []txn.Change) []history.Target {
	var out []history.Target
	seen := map[string]bool{}
	add := func(t history.Target) {
		if !seen[t.Path] {
			seen[t.Path] = true
			out = append(out, t)
		}
	}
	for _, c := range changes {
		switch c.Op {
		case txn.Move:
			add(history.Target{Op: history.OpMove, Path: c.From, To: c.Path})
			add(history.Target{Op: history.OpMove, Path: c.Path, From: c.From})
		default:
			add(history.Target{Op: history.Op(c.Op.String()), Path: c.Path})
		}
	}
	return out
}

// comingFrom gives each target whose change leaves a regular file the
// file's new body, read from the layer: the history keeps it with the
// pre-images, so a disk with no room for it refuses the commit before
// anything reaches the vault, rather than leave an entry with no
// after-state.
func comingFrom(l *txn.Layer, changes []txn.Change, targets []history.Target) {
	at := make(map[string]int, len(targets))
	for i, t := range targets {
		at[t.Path] = i
	}
	for _, c := range changes {
		if c.After == nil || !c.After.Mode.IsRegular() || c.After.SHA256 == "" || c.Op == txn.Link {
			continue
		}
		i, ok := at[c.Path]
		if !ok {
			continue
		}
		name := c.Path
		targets[i].Coming = &history.Body{SHA256: c.After.SHA256, Size: c.After.Size,
			Open: func() (io.ReadCloser, error) { return l.Open(name) }}
	}
}

func writeCallFile(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
