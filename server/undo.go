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
	// Unnamed are the calls a session or a time matched that name no
	// vault (kept before vaults were named) in a state folder that serves
	// several: whose they are can't be told, so they were left alone.
	Unnamed []string
}

// ErrNoHistory is a gate that keeps no history: there is nothing to undo from.
var ErrNoHistory = errors.New("this gate keeps no history")

// Undo takes calls back: the person's act, a call through the gate like
// any other — planned, judged, run under the vault lock, recorded (via
// "cli") whatever it came to — by the person's empty chain, so the zones
// don't bind it. It keeps its own history, so it can be undone in turn.
// It acts on this vault's calls alone: a session or a time selects only
// calls recorded for it (package vaultid), and an id recorded for another
// vault is an error wrapping vaultid.ErrOtherVault, as an id the history
// does not know is one wrapping history.ErrUnknownID, before anything is
// done.
func (g *Gate) Undo(req UndoRequest) (*Undone, error) {
	store := g.store
	if store == nil {
		return nil, ErrNoHistory
	}
	acts := &personActs{g: g, store: store, req: req}
	args := map[string]any{"ids": req.IDs, "force": req.Force}
	if req.Session != "" {
		args["session"] = req.Session
	}
	if !req.Since.IsZero() {
		args["since"] = req.Since.UTC().Format(time.RFC3339Nano)
	}
	c := Caller{Via: ViaCLI, Session: &policy.Session{ID: "cli", Agent: "person", State: policy.NewState()}, acts: acts}
	o := g.Call(context.Background(), c, "undo", args, Serve)
	switch {
	case acts.selectErr != nil:
		return nil, acts.selectErr // nothing was done
	case acts.done == nil:
		return nil, o.Err // refused before it ran
	}
	acts.done.ID = o.ID
	if o.Result == nil && o.Err != nil && acts.applyErr == nil {
		return acts.done, fmt.Errorf("the undo was done but its audit line could not be written: %w", o.Err)
	}
	return acts.done, acts.applyErr
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
	done      *Undone // what the run came to
	applyErr  error
}

func (a *personActs) Lookup(name string) (tools.Tool, bool) {
	return tools.Tool{Name: "undo", Destructive: true}, name == "undo"
}

// Plan selects the calls to undo and works out what each path is to hold;
// its effects put each back (create, modify or delete).
func (a *personActs) Plan(name string, _ map[string]any) (*tools.Plan, error) {
	g, store, req := a.g, a.store, a.req
	scope, err := g.scope()
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(req.IDs)
	var unnamed []string
	if req.Session != "" || !req.Since.IsZero() {
		all, err := store.All()
		if err != nil {
			return nil, err
		}
		for _, e := range all {
			bySession := req.Session != "" && e.Session == req.Session
			bySince := !req.Since.IsZero() && !e.Time.Before(req.Since) && e.Via != string(ViaCLI)
			switch {
			case !bySession && !bySince, slices.Contains(ids, e.ID), slices.Contains(unnamed, e.ID):
			case !scope.Owns(e.Vault):
				if e.Vault == "" {
					unnamed = append(unnamed, e.ID)
				} // else another vault's: not this undo's to see
			default:
				ids = append(ids, e.ID)
			}
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
		p.Effects = append(p.Effects, e)
	}
	p.Run = func(context.Context) (*tools.Result, error) {
		a.done = &Undone{Undone: plan.Undone, Calls: len(ids) + len(unchanged), Unnamed: unnamed}
		m := history.Meta{Time: a.start, Agent: "person", Tool: "undo", Via: string(ViaCLI), Undoes: strings.Join(ids, ","), Vault: scope.ID}
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
