package tools

import (
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// kept is a change's record in the history, between its pre-images and
// its outcome; c is nil when the set keeps no history. s is the set whose
// vault the change is made in (nil for a change that makes nothing).
type kept struct {
	s    *Set
	c    *history.Change
	path string
}

// keep takes the pre-images of what a change is about to touch, on disk
// when it returns. An error refuses the change: what can't be kept can't
// be undone (fail closed).
func (s *Set) keep(targets ...history.Target) (*kept, error) {
	if !s.keepsHistory() {
		return &kept{s: s}, nil
	}
	c, err := s.History.Begin(s.CallID, s.Call, targets)
	if err != nil {
		return nil, s.fail(say.HistoryFailed{Path: targets[0].Path, Problem: err.Error()})
	}
	return &kept{s: s, c: c, path: targets[len(targets)-1].Path}, nil
}

// keepsHistory: the set's own changes are kept (a hook's are kept by the
// hook, before Claude Code makes them).
func (s *Set) keepsHistory() bool { return s.History != nil && s.Hook == nil }

// settle records the outcome, once the change is made or has failed: the
// history gets the states after a change done, or after one that failed
// (which may have made part of itself). A record that
// can't be finished leaves the entry pending, which undo treats as a
// change of unknown outcome: the change itself stands.
func (k *kept) settle(err error) {
	if k == nil || k.c == nil {
		return
	}
	if err != nil {
		k.c.Failed()
		return
	}
	if k.c.Done() == nil {
		k.c.FlushLater()
	}
}

// newFolder is the outermost folder above rel that a change would make, as
// a target of its own: undo removes it again, and what the change put in it.
func (s *Set) newFolder(rel zones.Path) []history.Target {
	if s.History == nil {
		return nil
	}
	var outer string
	for dir := rel.Parent(); !dir.IsRoot() && !dir.Outside(); dir = dir.Parent() {
		st, err := s.stat(dir)
		if err != nil || st.exists {
			break
		}
		outer = dir.String()
	}
	if outer == "" {
		return nil
	}
	return []history.Target{{Op: history.OpCreate, Path: outer}}
}
