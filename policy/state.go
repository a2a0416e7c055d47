package policy

import (
	"maps"
	"sync"
	"time"
)

// State is a session's memory, shared by its concurrent calls: what it has
// read (for read_before_write), what it has been allowed (its Tally, for
// the config's session.* rules), and the Claude Code writes whose
// pre-image the hook kept and whose PostToolUse has not come yet. Each is
// a field of its own, reached through the functions of this package; a
// state that lives longer than a process (a Claude Code session's) is
// carried between processes as its Saved form.
type State struct {
	mu    sync.Mutex
	read  map[string]Stamp  // path → as the session saw it
	kept  map[string]string // path → the call id its pre-image is kept under
	tally *Tally            // never changed in place: see Tally
}

// NewState returns an empty state.
func NewState() *State { return &State{read: map[string]Stamp{}, kept: map[string]string{}} }

// Saved is a state as it is kept between processes (JSON).
type Saved struct {
	Read  map[string]Stamp  `json:"read,omitempty"`
	Kept  map[string]string `json:"kept,omitempty"`
	Tally *Tally            `json:"tally,omitempty"`
}

// Save copies the state into its saved form.
func (s *State) Save() Saved {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Saved{Read: maps.Clone(s.read), Kept: maps.Clone(s.kept)}
	if t := s.tally; t != nil && (t.Calls > 0 || !t.Started.IsZero()) {
		c := *t
		out.Tally = &c
	}
	return out
}

// Load replaces the state with a saved one.
func (s *State) Load(v Saved) {
	read, kept := maps.Clone(v.Read), maps.Clone(v.Kept)
	if read == nil {
		read = map[string]Stamp{}
	}
	if kept == nil {
		kept = map[string]string{}
	}
	s.mu.Lock()
	s.read, s.kept = read, kept
	s.mu.Unlock()
	if v.Tally != nil {
		SetTally(s, *v.Tally)
	} else {
		s.mu.Lock()
		s.tally = nil
		s.mu.Unlock()
	}
}

// MarkRead records that the session has seen path as it is now (after a
// read, or after its own write: a model may edit what it just wrote).
func MarkRead(s *State, path string, size int64, mod time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read[path] = Stamp{Size: size, ModTime: mod}
}

// Forget drops what the session knew of path (after a delete or a move).
func Forget(s *State, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.read, path)
}

// HasRead reports whether the session saw path with this size and mtime.
func HasRead(s *State, path string, size int64, mod time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.read[path]
	return ok && st.Size == size && st.ModTime.Equal(mod)
}

// Keep notes that the pre-image of path is kept under call id until its
// write is confirmed (the hook, before Claude Code writes).
func Keep(s *State, path, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept[path] = id
}

// TakeKept returns and forgets the call id path's pre-image is kept under.
func TakeKept(s *State, path string) (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok = s.kept[path]
	delete(s.kept, path)
	return id, ok
}

// TakeAllKept returns and forgets every kept call id.
func TakeAllKept(s *State) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.kept))
	for _, id := range s.kept {
		ids = append(ids, id)
	}
	clear(s.kept)
	return ids
}

// updateTally and tallyNow reach the tally under the lock.
func (s *State) updateTally(fn func(old *Tally) *Tally) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tally = fn(s.tally)
}

func (s *State) tallyNow() *Tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tally
}
