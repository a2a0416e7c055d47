package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/vaultid"
	"github.com/vaultgate/vaultgate/zones"
)

// ViaPanel is the person's undo confirmed in the web panel (vaultgate
// admin): audit's word, named here beside the gate's other Vias.
const ViaPanel = audit.ViaPanel

// UndoRequest says which calls to take back: IDs, or every call of a
// session, or every call since a time (the selections add up).
type UndoRequest struct {
	IDs     []string
	Session string
	Since   time.Time
	// SinceText is Since as the person gave it ("1h"), for what undo
	// says of a time that matched no change.
	SinceText string
	Force     bool // put back paths that changed since the call too
	// WithUndos has Since take the person's own undos too. Without it
	// they are left out: "undo --since 1h" would otherwise take back the
	// undo the person made a minute ago along with the agent's calls.
	WithUndos bool
	// DryRun plans the undo and stops there: the plan is the one the
	// undo would carry out now, and nothing is changed or recorded.
	DryRun bool
	// Via is where the person asked: ViaCLI ("" is ViaCLI) or ViaPanel.
	// The audit line and the undo's history name it; any other is
	// refused, since only the person undoes.
	Via audit.Via
}

// Undone is what an undo came to (or, on a dry run, would come to); ID is
// its own audit line's and its own history's, so the undo can be undone
// in turn ("" on a dry run).
type Undone struct {
	ID string
	history.Undone
	Calls int // how many calls were looked at
	// Unnamed are the calls a session or a time matched that name no
	// vault (kept before vaults were named) in a state folder that serves
	// several: whose they are can't be told, so they were left alone.
	Unnamed []string
	DryRun  bool
	// Paths is each path and what the undo does to it (did, unless
	// DryRun), in path order: what the person is shown, by the command
	// line and by the panel alike (Lines).
	Paths []UndoPath
	// LeftOutUndos is how many of the person's own undos a Since left
	// out (UndoRequest.WithUndos).
	LeftOutUndos int

	what     string // the selection, for "nothing to undo": "of session S", "since 1h"
	stateDir string
}

// UndoPath is what an undo does to one path.
type UndoPath struct {
	Path   string `json:"path"`
	Action string `json:"action"` // UndoPutBack, UndoRemove or UndoLeaveAlone
	// Call is, for a path left alone, the call it changed since.
	Call string `json:"call,omitempty"`
}

// What an undo does to a path.
const (
	UndoPutBack    = "put back"    // made to hold again what it held before the calls
	UndoRemove     = "remove"      // it did not exist before the calls: it goes
	UndoLeaveAlone = "leave alone" // it changed since the call: a conflict, left as it is
)

// UndoLine is one line of what an undo says; Problem marks what the
// command line writes to stderr (a path left alone, a call whose vault
// can't be told).
type UndoLine struct {
	Text    string `json:"text"`
	Problem bool   `json:"problem,omitempty"`
}

// Lines is what the undo says, in order: the one wording of it, which
// vaultgate undo prints (the Problem lines on stderr) and the panel
// shows, for the plan (a dry run) and for what was done. The text is
// the agent's paths and the person's ids as they are: the command line
// escapes it (package visible), the page inserts it as text.
func (u *Undone) Lines() []UndoLine {
	var out []UndoLine
	say := func(problem bool, format string, a ...any) {
		out = append(out, UndoLine{Text: fmt.Sprintf(format, a...), Problem: problem})
	}
	if u.Calls == 0 {
		// A session or a time that matched no change: said, so that a
		// mistyped session is seen.
		say(false, "nothing to undo: the history holds no change %s in this vault", u.what)
	}
	for _, id := range u.Nothing {
		say(false, "%s changed nothing", id)
	}
	for _, id := range u.Already {
		say(false, "%s is undone already: its paths hold what they held before it", id)
	}
	for _, p := range u.Paths {
		switch {
		case p.Action == UndoPutBack && u.DryRun:
			say(false, "would put back %s", p.Path)
		case p.Action == UndoPutBack:
			say(false, "put back %s", p.Path)
		case p.Action == UndoRemove && u.DryRun:
			say(false, "would remove %s", p.Path)
		case p.Action == UndoRemove:
			say(false, "removed %s", p.Path)
		}
	}
	for _, p := range u.Paths {
		switch {
		case p.Action == UndoLeaveAlone && u.DryRun:
			say(true, "%s changed since call %s; it would be left alone (--force puts it back)", p.Path, p.Call)
		case p.Action == UndoLeaveAlone:
			say(true, "%s changed since call %s; left alone (--force puts it back)", p.Path, p.Call)
		}
	}
	for _, id := range u.Unnamed {
		say(true, "call %s was kept before vaults were named, and the state folder %s serves several vaults: left alone, whose it is can't be told", id, u.stateDir)
	}
	if u.LeftOutUndos > 0 {
		say(false, "left out %d undo(s) of your own made in that time (--include-undos takes them back too)", u.LeftOutUndos)
	}
	if !u.DryRun && u.ID != "" && len(u.Restored) > 0 {
		say(false, "undo %s (vaultgate undo %s takes it back)", u.ID, u.ID)
	}
	return out
}

// ErrNoHistory is a gate that keeps no history: there is nothing to undo from.
var ErrNoHistory = errors.New("this gate keeps no history")

// Undo takes calls back: the person's act, a call through the gate like
// any other — planned, judged, run under the vault lock, recorded (via
// "cli" or "panel") whatever it came to — by the person's empty chain, so
// the zones don't bind it. It keeps its own history, so it can be undone
// in turn. It acts on this vault's calls alone: a session or a time
// selects only calls recorded for it (package vaultid), and an id
// recorded for another vault is an error wrapping vaultid.ErrOtherVault,
// as an id the history does not know is one wrapping
// history.ErrUnknownID, before anything is done. A dry run takes the same
// path as far as the plan and no further: what it returns is what the
// undo would do now.
func (g *Gate) Undo(req UndoRequest) (*Undone, error) {
	store := g.store
	if store == nil {
		return nil, ErrNoHistory
	}
	switch req.Via {
	case "":
		req.Via = ViaCLI
	case ViaCLI, ViaPanel:
	default:
		return nil, fmt.Errorf("undo via %q: only the person undoes, from the command line or the panel", req.Via)
	}
	acts := &personActs{g: g, store: store, req: req}
	args := map[string]any{"ids": req.IDs, "force": req.Force}
	if req.Session != "" {
		args["session"] = req.Session
	}
	if !req.Since.IsZero() {
		args["since"] = req.Since.UTC().Format(time.RFC3339Nano)
		if req.WithUndos {
			args["with_undos"] = true
		}
	}
	// The person's session is named by where they asked: "cli", "panel".
	c := Caller{Via: req.Via, Session: &policy.Session{ID: string(req.Via), Agent: "person", State: policy.NewState()}, acts: acts}
	steps := Serve
	if req.DryRun {
		steps = DryRun // planned and judged; nothing runs, nothing is recorded
	}
	o := g.Call(context.Background(), c, "undo", args, steps)
	switch {
	case acts.selectErr != nil:
		return nil, acts.selectErr // nothing was done
	case req.DryRun && acts.planned != nil && o.Err == nil:
		return acts.planned, nil
	case req.DryRun, acts.done == nil:
		return nil, o.Err // refused before it ran
	}
	acts.done.ID = o.ID
	if o.Result == nil && o.Err != nil && acts.applyErr == nil {
		return acts.done, fmt.Errorf("the undo was done but its audit line could not be written: %w", o.Err)
	}
	return acts.done, acts.applyErr
}

// Selected is the calls a session or a time stands for (SelectCalls).
type Selected struct {
	IDs []string // this vault's calls, in the history's order
	// Unnamed are calls that name no vault (kept before vaults were
	// named) in a state folder that serves several: whose they are
	// can't be told.
	Unnamed []string
	// LeftOutUndos is how many of the person's own undos since matched
	// and were left out (withUndos false).
	LeftOutUndos int
}

// SelectCalls is the one answer to which calls a person means by a
// session or a time, for undo and diff alike: the calls of scope's vault
// whose changes the history keeps, of session, or made at since or after
// (either may be empty). The person's own undos are left out of since
// unless withUndos; a session names them only when it is theirs ("cli",
// "panel").
func SelectCalls(store *history.Store, scope vaultid.Scope, session string, since time.Time, withUndos bool) (Selected, error) {
	var sel Selected
	if session == "" && since.IsZero() {
		return sel, nil
	}
	all, err := store.All()
	if err != nil {
		return sel, err
	}
	seen := map[string]bool{}
	leftOut := map[string]bool{}
	for _, e := range all {
		bySession := session != "" && e.Session == session
		bySince := !since.IsZero() && !e.Time.Before(since)
		if bySince && !bySession && !withUndos && personsUndo(e) {
			leftOut[e.ID] = true
			continue
		}
		switch {
		case !bySession && !bySince, seen[e.ID]:
		case !scope.Owns(e.Vault):
			if e.Vault == "" {
				seen[e.ID] = true
				sel.Unnamed = append(sel.Unnamed, e.ID)
			} // else another vault's: not this selection's to see
		default:
			seen[e.ID] = true
			sel.IDs = append(sel.IDs, e.ID)
		}
	}
	for id := range leftOut {
		if !seen[id] {
			sel.LeftOutUndos++
		}
	}
	return sel, nil
}

// personsUndo reports whether an entry is of an undo the person made: it
// names the calls it undoes, or came from where only the person acts.
func personsUndo(e history.Entry) bool {
	return e.Undoes != "" || audit.Via(e.Via).Person()
}

// personActs are the person's acts on the vault (undo), as the gate plans
// and runs a call: what an agent's tool set is to an agent's call.
type personActs struct {
	g     *Gate
	store *history.Store
	req   UndoRequest
	id    string    // the call's audit id, which the undo's history is kept under
	start time.Time // when it holds the vault lock

	selectErr error   // the selection's fault: nothing done
	planned   *Undone // what the plan would do
	done      *Undone // what the run came to
	applyErr  error
}

func (a *personActs) Lookup(name string) (tools.Tool, bool) {
	return tools.Tool{Name: "undo", Destructive: true}, name == "undo"
}

// Plan selects the calls to undo and works out what each path is to hold;
// its effects put each back (create, modify or delete). The plan is what
// a dry run shows and what the run carries out: one planner for both.
func (a *personActs) Plan(name string, _ map[string]any) (*tools.Plan, error) {
	g, store, req := a.g, a.store, a.req
	scope, err := g.scope()
	if err != nil {
		return nil, err
	}
	sel, err := SelectCalls(store, scope, req.Session, req.Since, req.WithUndos)
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(req.IDs)
	for _, id := range sel.IDs {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	var unnamed []string
	for _, id := range sel.Unnamed {
		if !slices.Contains(ids, id) {
			unnamed = append(unnamed, id)
		}
	}
	ids, unchanged, err := g.splitUnchanged(store, ids, scope)
	if err != nil {
		a.selectErr = err
		return nil, err
	}
	plan, err := store.PlanUndo(ids, req.Force)
	if err != nil {
		a.selectErr = err
		return nil, err
	}
	plan.Nothing = append(unchanged, plan.Nothing...)
	u := &Undone{Undone: plan.Undone, Calls: len(ids) + len(unchanged), Unnamed: unnamed, DryRun: req.DryRun,
		LeftOutUndos: sel.LeftOutUndos, what: selectionWords(req), stateDir: g.cfg.StateDir}
	p := &tools.Plan{}
	for _, path := range plan.Restored {
		e := policy.Effect{Op: zones.OpModify, Cause: "undo"}
		zp, err := zones.Normalize(g.vault.Root, path)
		if err != nil {
			return nil, fmt.Errorf("undo: %s: %w", path, err)
		}
		e.Path = zp
		_, statErr := g.vault.Fs.Stat(path)
		switch now, then := statErr == nil, plan.Exists(path); {
		case now && !then:
			e.Op = zones.OpDelete
		case !now && then:
			e.Op = zones.OpCreate
		}
		action := UndoPutBack
		if !plan.Exists(path) {
			action = UndoRemove
		}
		u.Paths = append(u.Paths, UndoPath{Path: path, Action: action})
		p.Effects = append(p.Effects, e)
	}
	for _, c := range plan.Conflicts {
		u.Paths = append(u.Paths, UndoPath{Path: c.Path, Action: UndoLeaveAlone, Call: c.ID})
	}
	slices.SortStableFunc(u.Paths, func(x, y UndoPath) int { return strings.Compare(x.Path, y.Path) })
	a.planned = u
	p.Run = func(context.Context) (*tools.Result, error) {
		a.done = u
		m := history.Meta{Time: a.start, Agent: "person", Session: string(req.Via), Tool: "undo", Via: string(req.Via), Undoes: strings.Join(ids, ","), Vault: scope.ID}
		if a.applyErr = store.Apply(plan, a.id, m, g.vault.Fs); a.applyErr != nil {
			return nil, a.applyErr
		}
		res := &tools.Result{Text: fmt.Sprintf("undid %d call(s), put back %d path(s)", len(ids), len(plan.Restored))}
		if len(plan.Conflicts) > 0 {
			var names []string
			for _, c := range plan.Conflicts {
				names = append(names, c.Path)
			}
			res.Failed, res.NotApplied = true, "changed since, left alone: "+strings.Join(names, ", ")
		}
		return res, nil
	}
	return p, nil
}

// selectionWords is the calls asked for by a session or a time, as undo
// says they matched nothing.
func selectionWords(req UndoRequest) string {
	if req.Session != "" {
		return "of session " + req.Session
	}
	if req.SinceText != "" {
		return "since " + req.SinceText
	}
	return "since " + req.Since.Local().Format(time.DateTime)
}

// splitUnchanged sets apart the ids the history has no entries for: a call
// the audit log knows (a read, a refusal) changed nothing; one it does not
// know is unknown, an error wrapping history.ErrUnknownID. A call that is
// not scope's vault's, in the history or the log, is an error wrapping
// vaultid.ErrOtherVault.
func (g *Gate) splitUnchanged(store *history.Store, ids []string, scope vaultid.Scope) (kept, unchanged []string, err error) {
	var missing []string
	for _, id := range ids {
		es, err := store.Call(id)
		switch {
		case errors.Is(err, history.ErrUnknownID):
			missing = append(missing, id)
			continue
		case err != nil:
			return nil, nil, err
		}
		for _, e := range es {
			if err := scope.Check(id, e.Vault, "undo"); err != nil {
				return nil, nil, err
			}
		}
		kept = append(kept, id)
	}
	if len(missing) == 0 {
		return kept, nil, nil
	}
	logged := map[string]bool{}
	var foreign error
	err = audit.Read(g.cfg.AuditPath, func(r audit.Record) error {
		if slices.Contains(missing, r.ID) {
			logged[r.ID] = true
			if err := scope.Check(r.ID, r.Vault, "undo"); err != nil && foreign == nil {
				foreign = err
			}
		}
		return nil
	})
	if foreign != nil {
		return nil, nil, foreign
	}
	var torn *audit.LineError // a damaged line hides no other
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &torn) {
		return nil, nil, err
	}
	for _, id := range missing {
		if !logged[id] {
			return nil, nil, fmt.Errorf("%s: %w", id, history.ErrUnknownID)
		}
		unchanged = append(unchanged, id)
	}
	return kept, unchanged, nil
}
