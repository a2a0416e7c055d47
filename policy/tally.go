package policy

import (
	"slices"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

// Tally is what a session has been allowed so far, for rules that count
// (the config's CEL rules read it as session.*). A Tally held in a State
// is never changed in place: Count stores a new one, so a rule may read
// the one it got without a lock while another call of the session goes on.
type Tally struct {
	Read    []string       `json:"read,omitempty"`    // paths read, each once, in order
	Changed []string       `json:"changed,omitempty"` // paths created, modified, deleted, moved or linked
	Count   map[string]int `json:"count,omitempty"`   // allowed effects by op name
	Calls   int            `json:"calls"`             // allowed calls
	Started time.Time      `json:"started"`           // the session's first call
}

// SessionTally returns the session's tally (the zero Tally for a session
// that has had no call). Its slices and map must not be changed.
func SessionTally(s *State) Tally {
	if s == nil {
		return Tally{}
	}
	t := s.tallyNow()
	if t == nil {
		return Tally{}
	}
	return *t
}

// SetTally replaces the session's tally (a hook process loads it from the
// session's state file).
func SetTally(s *State, t Tally) {
	c := t
	c.Count = cloneCount(t.Count)
	c.Read, c.Changed = slices.Clip(t.Read), slices.Clip(t.Changed)
	s.updateTally(func(*Tally) *Tally { return &c })
}

// Begin notes the session's start at its first call.
func Begin(s *State, now time.Time) {
	s.updateTally(func(t *Tally) *Tally {
		if t != nil && !t.Started.IsZero() {
			return t
		}
		n := Tally{Started: now}
		if t != nil {
			n = *t
			n.Started = now
		}
		return &n
	})
}

// Count adds an allowed call and its effects to the session's tally.
func Count(s *State, effects []Effect, now time.Time) {
	s.updateTally(func(t *Tally) *Tally {
		var n Tally
		if t != nil {
			n = *t
		}
		if n.Started.IsZero() {
			n.Started = now
		}
		n.Calls++
		n.Count = cloneCount(n.Count)
		for i := range effects {
			e := &effects[i]
			n.Count[e.Op.String()]++
			if e.Unknown || e.Path.IsZero() || e.Op == zones.OpExec {
				continue
			}
			p := e.Path.String()
			// Appending past the old slice's length leaves what earlier
			// readers hold as it was; Clip in SetTally makes sure of it.
			if e.Op == zones.OpRead {
				if !slices.Contains(n.Read, p) {
					n.Read = append(n.Read, p)
				}
			} else if !slices.Contains(n.Changed, p) {
				n.Changed = append(n.Changed, p)
			}
		}
		return &n
	})
}

func cloneCount(m map[string]int) map[string]int {
	out := make(map[string]int, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
