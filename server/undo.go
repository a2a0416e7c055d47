package server

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/history"
)

// ViaCLI is the person at the command line (undo), as the audit log spells it.
const ViaCLI = "cli"

// UndoRequest says which calls to take back: IDs, or every call of a
// session, or every call since a time (the selections add up).
type UndoRequest struct {
	IDs     []string
	Session string
	Since   time.Time
	Force   bool // put back paths that changed since the call too
}

// Undone is what an undo came to; ID is its own audit line's and its own
// history's, so the undo can be undone in turn.
type Undone struct {
	ID string
	history.Undone
	Calls int // how many calls were looked at
}

// ErrNoHistory is a gate that keeps no history: there is nothing to undo from.
var ErrNoHistory = errors.New("this gate keeps no history")

// Undo takes calls back: the person's act, so the zones don't bind it. It
// runs under the vault lock like any change, keeps its own history, and
// writes its audit line (via "cli") whatever it came to. An id the
// history does not know is an error wrapping history.ErrUnknownID, before
// anything is done.
func (g *Gate) Undo(req UndoRequest) (*Undone, error) {
	store, ok := g.keep.(*history.Store)
	if !ok || store == nil {
		return nil, ErrNoHistory
	}
	unlock, err := g.lockVault()
	if err != nil {
		return nil, err
	}
	defer unlock()
	ids := slices.Clone(req.IDs)
	if req.Session != "" || !req.Since.IsZero() {
		all, err := store.All()
		if err != nil {
			return nil, err
		}
		for _, e := range all {
			bySession := req.Session != "" && e.Session == req.Session
			bySince := !req.Since.IsZero() && !e.Time.Before(req.Since) && e.Via != ViaCLI
			if (bySession || bySince) && !slices.Contains(ids, e.ID) {
				ids = append(ids, e.ID)
			}
		}
	}
	ids, unchanged, err := g.splitUnchanged(store, ids)
	if err != nil {
		return nil, err
	}
	plan, err := store.PlanUndo(ids, req.Force)
	if err != nil {
		return nil, err
	}
	plan.Nothing = append(unchanged, plan.Nothing...)
	out := &Undone{ID: audit.NewID(), Undone: plan.Undone, Calls: len(ids) + len(unchanged)}
	start := time.Now()
	m := history.Meta{Time: start, Agent: "person", Tool: "undo", Via: ViaCLI, Undoes: strings.Join(ids, ",")}
	applyErr := store.Apply(plan, out.ID, m, g.vault.Fs)
	r := audit.Record{
		ID: out.ID, Via: ViaCLI, Agent: "person", Tool: "undo", Decision: Allow, Outcome: "ok",
		Args:       map[string]any{"ids": ids, "force": req.Force},
		Effects:    make([]audit.Effect, 0, len(plan.Restored)),
		DurationMS: float64(time.Since(start).Microseconds()) / 1000,
	}
	for _, p := range plan.Restored {
		r.Effects = append(r.Effects, audit.Effect{Op: "restore", Path: p})
	}
	switch {
	case applyErr != nil:
		r.Outcome, r.Error = "failed", applyErr.Error()
	case len(plan.Conflicts) > 0:
		var names []string
		for _, c := range plan.Conflicts {
			names = append(names, c.Path)
		}
		r.Outcome, r.Error = "failed", "changed since, left alone: "+strings.Join(names, ", ")
	}
	if err := g.write(&r); err != nil {
		return out, fmt.Errorf("the undo was done but its audit line could not be written: %w", err)
	}
	return out, applyErr
}

// splitUnchanged sets apart the ids the history has no entries for: a call
// the audit log knows (a read, a refusal) changed nothing; one it does not
// know is unknown, an error wrapping history.ErrUnknownID.
func (g *Gate) splitUnchanged(store *history.Store, ids []string) (kept, unchanged []string, err error) {
	var missing []string
	for _, id := range ids {
		if _, err := store.Call(id); errors.Is(err, history.ErrUnknownID) {
			missing = append(missing, id)
		} else if err != nil {
			return nil, nil, err
		} else {
			kept = append(kept, id)
		}
	}
	if len(missing) == 0 {
		return kept, nil, nil
	}
	logged := map[string]bool{}
	err = audit.Read(g.cfg.AuditPath, func(r audit.Record) error {
		if slices.Contains(missing, r.ID) {
			logged[r.ID] = true
		}
		return nil
	})
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
