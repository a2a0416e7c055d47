package history

import (
	"fmt"
	"path/filepath"
	"time"
)

// Recorder is what changes the vault calls around each change: the file
// tools, a bash transaction's commit and the hook for Claude Code's own
// writes. Begin keeps the targets' pre-images durably and returns once
// they are on disk; an error means nothing may be changed.
type Recorder interface {
	Begin(id string, m Meta, targets []Target) (*Change, error)
}

var _ Recorder = (*Store)(nil)

// Change is a call's record between its pre-images and its outcome.
type Change struct {
	s       *Store
	id      string
	entries []Entry
}

// Begin keeps what targets hold now, and makes the call's entries, as
// pending, and the bodies durable before it returns: one record of the
// log, flushed once (log.go); a body too big for a record is a blob file,
// synced, then its folder, before the record is written. A target's New
// content is kept in the same record, which makes the change write-ahead.
func (s *Store) Begin(id string, m Meta, targets []Target) (*Change, error) {
	if !validID(id) {
		return nil, fmt.Errorf("history: bad call id %q", id)
	}
	if m.Time.IsZero() {
		m.Time = time.Now()
	}
	c := &Change{s: s, id: id}
	err := s.shared(func() error {
		sn := &snapshot{s: s, durable: true}
		sn.log = &logRecord{ID: id}
		for _, t := range targets {
			before, err := sn.state(t.Path)
			if err != nil {
				return err
			}
			e := Entry{
				Time: m.Time.UTC(), ID: id, Vault: m.Vault, Agent: m.Agent, Session: m.Session, Tool: m.Tool, Via: m.Via,
				Op: t.Op, Path: t.Path, From: t.From, To: t.To, Before: before, State: Pending, Undoes: m.Undoes, Settled: m.Settled,
			}
			if t.New != nil {
				sum := sha(t.New.Data)
				if err := sn.keep(t.Path, sum, t.New.Data); err != nil {
					return err
				}
				e.Intended = &State{Exists: true, Kind: KindFile, Mode: t.New.Mode.Perm(), Size: int64(len(t.New.Data)), SHA256: sum}
			}
			if t.Coming != nil {
				if err := sn.keepComing(t.Path, t.Coming); err != nil {
					return err
				}
				e.Coming = t.Coming.SHA256
			}
			c.entries = append(c.entries, e)
		}
		if sn.added {
			if err := syncDir(filepath.Join(s.dir, "blobs")); err != nil {
				return err
			}
		}
		for _, sum := range sn.kept {
			s.synced.Store(sum, true)
		}
		sn.log.Entries = c.entries
		return s.appendLog(sn.log, true)
	})
	if err != nil {
		return nil, err
	}
	s.maybeSeal()
	return c, nil
}

// ID is the call's.
func (c *Change) ID() string { return c.id }

// Done records what each target holds after the change.
func (c *Change) Done() error { return c.finish(Applied) }

// Failed records that the change was not made; what each target holds is
// recorded too, for a change cut short may have made part of itself.
func (c *Change) Failed() error { return c.finish(Failed) }

// writeAhead: some entry's new content was kept before it was written.
func (c *Change) writeAhead() bool {
	for _, e := range c.entries {
		if e.Intended != nil {
			return true
		}
	}
	return false
}

// finish is not synced: a crash that loses it leaves the entries pending,
// which undo treats as a change of unknown outcome. A write-ahead
// change's failure is, for RollForward would otherwise make the change
// that the caller was told had failed.
func (c *Change) finish(state string) error {
	return c.s.shared(func() error {
		sn := &snapshot{s: c.s, log: &logRecord{ID: c.id}, known: map[string]bool{}}
		for _, e := range c.entries {
			if e.Intended != nil {
				sn.known[e.Intended.SHA256] = true
			}
			if e.Coming != "" {
				sn.known[e.Coming] = true
			}
		}
		for i := range c.entries {
			after, err := sn.state(c.entries[i].Path)
			if err != nil {
				return err
			}
			c.entries[i].After, c.entries[i].State = after, state
		}
		sn.log.Entries = c.entries
		return c.s.appendLog(sn.log, state == Failed && c.writeAhead())
	})
}

// maybeSeal seals the log once it has grown past logLimit, if no one else
// is using the store now; a seal that fails refuses nothing (the records
// stay in the log, which readers read).
func (s *Store) maybeSeal() {
	if s.logSize() > logLimit {
		s.tryExclusive(s.seal)
	}
}

// Settle records, for a call whose change was finished by someone else
// (a bash commit that a stop cut short, rolled forward by txn.Sweep at
// start-up), what its pending entries' paths hold now, as applied: undo
// then puts them back like any other. Entries already settled are left.
func (s *Store) Settle(id string) error { return s.settlePending(id, false) }

// Confirm settles a change made by someone else that may not have
// happened (Claude Code's own write, which the hook lets through): a path
// that still holds its pre-image is recorded failed, one that changed,
// applied.
func (s *Store) Confirm(id string) error { return s.settlePending(id, true) }

func (s *Store) settlePending(id string, unchangedFailed bool) error {
	es, err := s.Call(id)
	if err != nil {
		return err
	}
	c := &Change{s: s, id: id, entries: es}
	pending := false
	for _, e := range es {
		pending = pending || e.State == Pending
	}
	if !pending {
		return nil
	}
	return c.s.shared(func() error {
		sn := &snapshot{s: s, log: &logRecord{ID: id}}
		for i := range c.entries {
			if c.entries[i].State != Pending {
				continue
			}
			after, err := sn.state(c.entries[i].Path)
			if err != nil {
				return err
			}
			c.entries[i].After, c.entries[i].State = after, Applied
			if unchangedFailed && after.Same(c.entries[i].Before) {
				c.entries[i].State = Failed
			}
		}
		sn.log.Entries = c.entries
		return s.appendLog(sn.log, false)
	})
}
