package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

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
// judges like any other call's (Set.Judge), and only if every one is
// allowed does txn.Commit apply them. The analysis stays the fast first
// gate; this is the judge of what actually happened.

// RealPart is the fact on each real effect of a call on the overlay: the
// change it comes from, for the bash rule (a special file) and the audit.
type RealPart struct {
	Change txn.Change
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

// commitSettle is how long after a commit the next call waits to start:
// more than txn's conflict margin (20 ms), which judges a vault file
// whose ctime is that close to a call's start as changed meanwhile.
const commitSettle = 25 * time.Millisecond

// bashTxn is one call's overlay layer, from before its command starts to
// after its changes were applied or thrown away.
type bashTxn struct {
	layer   *txn.Layer // nil for an in-memory layer until the command has ended
	memory  *sandbox.MemoryLayer
	started time.Time
	diff    txn.DiffOptions
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
	// A file this process changed a moment ago (a commit, a file tool)
	// would look changed from outside to a call that starts within the
	// commit's conflict margin of it: wait that moment out (an agent's
	// next call rarely comes so soon, a script's may).
	if last := s.Vault.changed.Load(); last != 0 {
		if wait := time.Duration(last) + commitSettle - time.Duration(time.Now().UnixNano()); wait > 0 && wait <= commitSettle {
			time.Sleep(wait)
		}
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
	tx.started = time.Now()
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

// finishBash decides what becomes of the changes of a command that has
// ended: none when it did not end by itself, or any is refused, or one
// conflicts with a change made meanwhile; else all of them. out is the
// command's result, to which it adds what became of its changes.
func (s *Set) finishBash(tx *bashTxn, res sandbox.Result, out *Result, call *policy.ToolCall, predicted []policy.Effect) *Result {
	keep := false // an incomplete commit keeps its layer, for Sweep
	defer func() {
		if !keep {
			tx.remove()
		}
	}()
	layerErr := s.takeLayer(tx, res)
	notApplied := func(m say.Message, d *policy.Deny) *Result {
		out.NotApplied = m.Text(s.Lang)
		out.Text = out.NotApplied + out.Text
		out.Refused, out.Failed = d, true
		if so, ok := out.Structured.(BashOutput); ok {
			so.NotApplied = out.NotApplied
			out.Structured = so
		}
		return out
	}
	if res.TimedOut || res.Signal != 0 {
		return notApplied(say.BashUnfinished{}, nil)
	}
	if layerErr != nil {
		return notApplied(say.BashChangesUnread{Problem: layerErr.Error()}, nil)
	}
	if tx.memory != nil {
		// The tmpfs is sized so that a call within its caps never fills
		// it: a full one stopped a write past them (ENOSPC).
		full, err := sandbox.MemoryFull(res.Upper, *tx.memory)
		if err != nil {
			return notApplied(say.BashChangesUnread{Problem: err.Error()}, nil)
		}
		switch full {
		case "files":
			return notApplied(say.BashOverLimit{Key: "max_changed_files", Limit: tx.memory.MaxFiles}, nil)
		case "bytes":
			return notApplied(say.BashOverLimit{Key: "max_changed_bytes", Limit: tx.memory.MaxBytes}, nil)
		}
	}
	changes, err := txn.Diff(tx.layer, s.Vault.Root, tx.diff)
	var limit *txn.LimitError
	switch {
	case errors.As(err, &limit):
		key := map[string]string{"files": "max_changed_files", "bytes": "max_changed_bytes"}[limit.What]
		return notApplied(say.BashOverLimit{Key: key, Limit: limit.Limit}, nil)
	case err != nil:
		return notApplied(say.BashChangesUnread{Problem: err.Error()}, nil)
	}
	real := s.realEffects(changes, predicted)
	effects := make([]policy.Effect, len(real))
	for i := range real {
		effects[i] = real[i].Effect
	}
	out.Real = real
	if d := s.judgeReal(call, effects); d != nil {
		var reasons []string
		for i := range real {
			if rd := s.judgeReal(call, effects[i:i+1]); rd != nil {
				real[i].Refused = true
				reasons = appendNew(reasons, rd.Reason)
			}
		}
		if len(reasons) == 0 {
			reasons = []string{d.Reason} // a rule that judges the call as a whole
		}
		return notApplied(say.BashNotApplied{Refusals: reasons}, d)
	}
	k, refusal := s.keepCommit(tx.layer, changes)
	if refusal != nil {
		return notApplied(refusal, nil)
	}
	err = txn.Commit(s.Vault.Fs, tx.layer, changes, txn.CommitOptions{Started: tx.started})
	k.settleCommit(err)
	if len(changes) > 0 {
		s.Vault.Changed()
	}
	var conflict *txn.ConflictError
	var incomplete *txn.IncompleteError
	switch {
	case errors.As(err, &conflict):
		return notApplied(say.BashConflict{Path: conflict.Path}, nil)
	case errors.As(err, &incomplete):
		keep = true
		return notApplied(say.BashCommitFailed{Problem: err.Error()}, nil)
	case err != nil:
		return notApplied(say.BashNotCommitted{Problem: err.Error()}, nil)
	}
	return out
}

// judgeReal runs the agent's chain on real effects; without a judge
// nothing is let through.
func (s *Set) judgeReal(call *policy.ToolCall, effects []policy.Effect) *policy.Deny {
	c := *call
	c.Effects, c.TellAll, c.Facts = effects, true, BashCall{Real: true}
	if s.Judge == nil {
		return &policy.Deny{Rule: "bash", Reason: say.BashChangesUnread{Problem: "no judge for the changes"}.Text(s.Lang)}
	}
	return s.Judge(&c)
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// realEffects turns the changes into effects, zoned, in the terms the
// rules judge: a move is a move-out and a move-in from its source, a
// folder deleted or moved takes everything in it, a name replaced (a file
// renamed over another, one kind of file put where another stood) is a
// change of what was there. Each is marked when no predicted effect
// accounts for it.
func (s *Set) realEffects(changes []txn.Change, predicted []policy.Effect) []RealEffect {
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
	var out []RealEffect
	add := func(c txn.Change, op zones.Op, at, from string, subtree bool) {
		e := policy.Effect{Op: op, Subtree: subtree, Cause: "bash", Fact: RealPart{Change: c}}
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
	for _, c := range changes {
		switch c.Op {
		case txn.Create:
			op := zones.OpCreate
			if replaced[c.Path] {
				op = zones.OpModify
			}
			add(c, op, c.Path, "", false)
			out[len(out)-1].Exists = replaced[c.Path]
		case txn.Modify:
			add(c, zones.OpModify, c.Path, "", false)
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
	return out
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
// special file never enters the vault. The zones judge the rest.
func realEffectDeny(c *policy.ToolCall, e *policy.Effect) *policy.Deny {
	part, _ := e.Fact.(RealPart)
	switch part.Change.Op {
	case txn.Create, txn.Modify, txn.Delete, txn.Move, txn.Link:
		if part.Change.After == nil || part.Change.After.Mode&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) == 0 {
			return nil
		}
	}
	return &policy.Deny{Effect: e, Reason: say.SpecialFile{Path: e.Path.String()}.Text(c.Lang)}
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
			add(history.Target{Op: "move", Path: c.From, To: c.Path})
			add(history.Target{Op: "move", Path: c.Path, From: c.From})
		default:
			add(history.Target{Op: c.Op.String(), Path: c.Path})
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
