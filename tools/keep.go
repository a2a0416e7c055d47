package tools

import (
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// kept is a change's record in the history, between its pre-images and
// its outcome; c is nil when the set keeps no history.
type kept struct {
	s    *Set
	c    *history.Change
	path string
}

// keep takes the pre-images of what a change is about to touch, on disk
// when it returns. An error refuses the change: what can't be kept can't
// be undone (fail closed).
func (s *Set) keep(targets ...history.Target) (*kept, error) {
	return s.keepWith(false, targets)
}

// keepAsync is keep with the pre-images still being flushed: the caller
// must call durable before the change reaches the vault (atomicWrite
// does, between syncing the new content and naming it).
func (s *Set) keepAsync(targets ...history.Target) (*kept, error) {
	return s.keepWith(true, targets)
}

func (s *Set) keepWith(async bool, targets []history.Target) (*kept, error) {
	if s.History == nil || s.Hook != nil {
		return &kept{}, nil
	}
	begin := s.History.Begin
	if async {
		begin = s.History.BeginAsync
	}
	c, err := begin(s.CallID, s.Call, targets)
	if err != nil {
		return nil, s.fail(say.HistoryFailed{Path: targets[0].Path, Problem: err.Error()})
	}
	return &kept{s: s, c: c, path: targets[len(targets)-1].Path}, nil
}

// durable waits until the pre-images are on disk, which keep began to
// flush: called after the new content is written and synced, right before
// the change reaches the vault, so that the two flushes overlap. An error
// refuses the change.
func (k *kept) durable() error {
	if k == nil || k.c == nil {
		return nil
	}
	if err := k.c.Durable(); err != nil {
		return k.s.fail(say.HistoryFailed{Path: k.path, Problem: err.Error()})
	}
	return nil
}

// settle records the outcome: the states after a change done, or after
// one that failed (which may have made part of itself). A record that
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
	k.c.Done()
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
	return []history.Target{{Op: "create", Path: outer}}
}
