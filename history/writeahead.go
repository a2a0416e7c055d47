package history

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/afero"
)

// A write-ahead change (a Target with New) keeps the file's new content
// in the record that Begin flushes, beside its pre-image. The caller then
// writes the vault's copy without a flush of its own, and FlushLater
// flushes it off the call's path. One flush on the call's path instead of
// three (the pre-image's record, the new file, its folder) is what makes
// keeping history cost less than not keeping it.
//
// Until its flush is recorded (Entry.OnDisk), a crash may have lost the
// vault's copy: RollForward, at a server's start, settles every such
// change.

// flushQueue is the Store's: the changes whose files FlushLater flushes.
type flushQueue struct {
	work chan *Change
	done chan struct{}
}

// FlushLater flushes the files of a write-ahead change, and their folders,
// off the caller's path, then records them as on disk. Call it after Done.
// Close waits for what is queued; a flush that fails, or a process that
// ends first, leaves the entries for RollForward.
func (c *Change) FlushLater() {
	if c == nil || !c.writeAhead() {
		return
	}
	s := c.s
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	if s.flushClosed {
		c.flush()
		return
	}
	if s.flushQ == nil {
		s.flushQ = &flushQueue{work: make(chan *Change, 256), done: make(chan struct{})}
		go s.flushQ.run()
	}
	select {
	case s.flushQ.work <- c:
	default:
		c.flush() // a queue this long: the caller waits, rather than grow it
	}
}

// flushDelay is how long a queued flush waits for others to share it: a
// burst of writes, often to the same notes, then costs the disk one
// flush of each file and folder rather than one per write.
const flushDelay = 100 * time.Millisecond

// flushBatch bounds the changes one batch flushes.
const flushBatch = 256

func (q *flushQueue) run() {
	defer close(q.done)
	for c := range q.work {
		batch := []*Change{c}
		timer := time.NewTimer(flushDelay)
		open := true
	collect:
		for open && len(batch) < flushBatch {
			select {
			case c, ok := <-q.work:
				if !ok {
					open = false // closing: flush what came, now
					break collect
				}
				batch = append(batch, c)
			case <-timer.C:
				break collect
			}
		}
		timer.Stop()
		flushAll(batch)
		if !open {
			return
		}
	}
}

// stopFlushing flushes what is queued and waits; later changes are
// flushed at once.
func (s *Store) stopFlushing() {
	s.flushMu.Lock()
	q := s.flushQ
	s.flushClosed = true
	s.flushQ = nil
	s.flushMu.Unlock()
	if q != nil {
		close(q.work)
		<-q.done
	}
}

func (c *Change) flush() { flushAll([]*Change{c}) }

// flushAll flushes each file the changes wrote, once, then each folder,
// once, and records every change whose paths all reached the disk. A path
// a later change replaced is flushed as it is now, which is what a crash
// would leave of both. What fails is left for RollForward.
func flushAll(cs []*Change) {
	s := cs[0].s
	files, dirs := map[string]error{}, map[string]error{}
	var order []string
	for _, c := range cs {
		for _, e := range c.entries {
			if _, seen := files[e.Path]; e.unflushed() && !seen {
				files[e.Path] = nil
				order = append(order, e.Path)
			}
		}
	}
	for _, p := range order {
		files[p] = s.syncVault(p)
	}
	for _, p := range order {
		if d := path.Dir(p); files[p] == nil {
			if _, seen := dirs[d]; !seen {
				dirs[d] = s.syncVault(d)
			}
		}
	}
	for _, c := range cs {
		var flushed []string
		for _, e := range c.entries {
			if e.unflushed() && files[e.Path] == nil && dirs[path.Dir(e.Path)] == nil {
				flushed = append(flushed, e.Path)
			}
		}
		s.markOnDisk(c.id, c.entries, flushed)
	}
}

// syncVault flushes one vault path, a file or a folder, links never
// followed.
func (s *Store) syncVault(rel string) error {
	f, err := s.vault.Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// markOnDisk appends a record of the call's entries with those at paths
// marked on disk; it is not flushed, for losing it only makes RollForward
// look again.
func (s *Store) markOnDisk(id string, entries []Entry, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	es := slices.Clone(entries)
	for i := range es {
		if es[i].Intended != nil && slices.Contains(paths, es[i].Path) {
			es[i].OnDisk = true
		}
	}
	return s.shared(func() error {
		return s.appendLog(&logRecord{ID: id, Entries: es}, false)
	})
}

// Rolled is what RollForward did.
type Rolled struct {
	Flushed  int      // files that held their new content, now flushed
	Restored int      // files a crash had left as they were, now given it
	Left     []string // files that hold something else, each with why
}

// RollForward settles every write-ahead change not recorded as on disk,
// whether a crash or an ended process left it so. For each, unless a
// later change touched its path (which then owns what is there):
//   - a file that holds the new content is flushed;
//   - one that still holds what it held before is given the new content,
//     for the change was judged and begun and its caller may have been
//     told it was made; one recorded as failed is not;
//   - one that holds anything else is left as it is and named in Left:
//     someone else changed it, and the change stays in the history,
//     where its diff and undo still work.
//
// The caller holds the vault's lock, so no change is under way; fsys is
// the vault as undo writes it.
func (s *Store) RollForward(fsys afero.Fs) (Rolled, error) {
	var out Rolled
	all, err := s.All()
	if err != nil {
		return out, err
	}
	entries := map[string][]Entry{} // by call id, in its order
	for _, e := range all {
		entries[e.ID] = append(entries[e.ID], e)
	}
	var calls []string
	settled := map[string][]string{} // by call id: the paths settled
	for i, e := range all {
		if !e.unflushed() {
			continue
		}
		if settled[e.ID] == nil {
			calls = append(calls, e.ID)
		}
		if !touchedLater(all[i+1:], e) {
			switch err := s.rollForward(fsys, e, &out); {
			case errors.Is(err, errLeave):
			case err != nil:
				return out, err
			}
		}
		settled[e.ID] = append(settled[e.ID], e.Path)
	}
	for _, id := range calls {
		if err := s.markOnDisk(id, entries[id], settled[id]); err != nil {
			return out, err
		}
	}
	return out, nil
}

var errLeave = errors.New("left as it is")

func (s *Store) rollForward(fsys afero.Fs, e Entry, out *Rolled) error {
	now, err := (&snapshot{s: s}).state(e.Path)
	if err != nil {
		return err
	}
	switch {
	case now.Exists && now.Kind == KindFile && now.SHA256 == e.Intended.SHA256:
		// (by content: the file's mode is the umask's to decide)
		if err := errors.Join(s.syncVault(e.Path), s.syncVault(path.Dir(e.Path))); err != nil {
			return fmt.Errorf("history: flush %s: %w", e.Path, err)
		}
		out.Flushed++
	case e.State == Failed:
		// The change was not made, and the caller was told so.
	case now.Same(e.Before):
		if err := s.restore(fsys, e.Path, *e.Intended); err != nil {
			return fmt.Errorf("history: roll forward %s (call %s): %w", e.Path, e.ID, err)
		}
		out.Restored++
	default:
		out.Left = append(out.Left, fmt.Sprintf("%s holds neither what call %s wrote nor what it held before; left as it is (vaultgate diff %s shows the call's change)", e.Path, e.ID, e.ID))
		return errLeave
	}
	return nil
}

// touchedLater: an entry after e changed e's path or a folder above it.
func touchedLater(later []Entry, e Entry) bool {
	for _, l := range later {
		if l.ID == e.ID {
			continue
		}
		if l.Path == e.Path || strings.HasPrefix(e.Path, l.Path+"/") {
			return true
		}
	}
	return false
}

// SettleCut settles the vault's own deletes and moves that a kill cut
// short between their pre-images and their outcome: pending, and no later
// change touched their paths. A call whose paths all hold what they held
// before is recorded failed (it never happened); one whose paths all hold
// what the delete or move leaves (a deleted path gone, a source gone and
// its destination holding what the source held, a new parent folder
// there) is recorded applied. Anything else stays pending, which undo
// treats as a change of unknown outcome. Without this, undo would call a
// completed delete's path changed since the call.
//
// Writes and edits are write-ahead (RollForward), bash commits are
// finished from their journals (Settle), and Claude Code's own writes are
// confirmed by the hook: none of them is settled here. The caller holds
// the vault's lock, so no delete or move is under way.
func (s *Store) SettleCut() (settled int, err error) {
	all, err := s.All()
	if err != nil {
		return 0, err
	}
	last := map[string]int{} // by call id: its last entry's index
	calls := map[string][]Entry{}
	for i, e := range all {
		last[e.ID] = i
		calls[e.ID] = append(calls[e.ID], e)
	}
	for id, es := range calls {
		if !cutDeleteOrMove(es) {
			continue
		}
		later := false
		for _, e := range es {
			later = later || touchedLater(all[last[id]+1:], e)
		}
		if later {
			continue
		}
		state, err := s.cutOutcome(es)
		if err != nil {
			return settled, err
		}
		if state == "" {
			continue
		}
		if err := (&Change{s: s, id: id, entries: es}).finish(state); err != nil {
			return settled, err
		}
		settled++
	}
	return settled, nil
}

// cutDeleteOrMove: a change told from the disk (a delete or a move of the
// vault's own tools), all of it pending.
func cutDeleteOrMove(es []Entry) bool {
	for _, e := range es {
		if e.State != Pending || e.Intended != nil || e.Settled != SettledFromDisk {
			return false
		}
	}
	return len(es) > 0
}

// cutOutcome is Failed, Applied, or "" for a cut call whose paths hold
// neither what they held before nor what the call leaves.
func (s *Store) cutOutcome(es []Entry) (string, error) {
	before := map[string]State{}
	for _, e := range es {
		before[e.Path] = e.Before
	}
	untouched, done := true, true
	for _, e := range es {
		now, err := (&snapshot{s: s}).state(e.Path)
		if err != nil {
			return "", err
		}
		untouched = untouched && now.Same(e.Before)
		switch {
		case e.From != "": // a move's destination
			done = done && now.Same(before[e.From])
		case e.Op == OpCreate: // the new folder a move goes into
			done = done && now.Exists && now.Kind == KindDir
		default: // a deleted path, or a move's source
			done = done && !now.Exists
		}
	}
	switch {
	case untouched:
		return Failed, nil
	case done:
		return Applied, nil
	}
	return "", nil
}
