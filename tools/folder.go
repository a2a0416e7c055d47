package tools

import (
	"io"
	"path"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/zones"
)

// A folder effect — a folder moved, deleted or its mode changed, with
// everything in it — is judged on every path inside it, whichever entry
// point makes it: the move and delete tools' plans, bash's predicted
// effects (the bash tool, Claude Code's Bash through the hook), and what a
// walled bash call really changed (realEffects). cover is the one place
// that reads what such a folder holds: the folder's own effect stays,
// marked with how many paths it covers (Effect.Covers, for the audit), and
// after it comes one effect of the same op for each path inside (marked
// with Effect.Folder), which the zones — control paths and reserved names
// included, as the zone table caps them — and every rule judge like any
// other. So a rule on "drafts/" sees every note a move of "drafts" takes
// away, and session.count sees every file a recursive delete removes.

// defaultCoverMax is the most paths one call's folder effects may cover
// when the set has no [bash] max_changed_files: config's default.
const defaultCoverMax = 1000

// coverMax is the most paths the folder effects of one call may cover
// together: what one call may change ([bash] max_changed_files). A call
// past it is refused whole, never judged on a part (fail closed).
func (s *Set) coverMax() int {
	if s.Bash != nil && s.Bash.MaxChangedFiles > 0 {
		return s.Bash.MaxChangedFiles
	}
	return defaultCoverMax
}

// isFolderEffect tells an effect that changes a folder with all it holds:
// its delete, either half of its move, a change of its mode.
func isFolderEffect(e *policy.Effect) bool {
	if !e.Subtree || e.Unknown || e.Path.IsZero() || e.Path.Outside() || !e.Folder.IsZero() {
		return false
	}
	switch e.Op {
	case zones.OpDelete, zones.OpMoveOut, zones.OpMoveIn, zones.OpModify:
		return true
	}
	return false
}

// coverFolders is a plan's effects with each folder effect covered (cover)
// where the vault holds the folder now — a move-in's at its source. One on
// a name that is no folder now stays as it is: a file or a link is no
// folder to cover, and a name a command makes before it removes it holds
// nothing of the vault's.
func (s *Set) coverFolders(effects []policy.Effect) ([]policy.Effect, error) {
	budget := s.coverMax()
	var out []policy.Effect
	for _, e := range effects {
		if !isFolderEffect(&e) {
			out = append(out, e)
			continue
		}
		from := e.Path
		if e.Op == zones.OpMoveIn {
			from = e.Source
			if e.SourceUnknown || from.IsZero() || from.Outside() {
				out = append(out, e) // refused as it is: no zone to launder from
				continue
			}
		}
		st, err := s.stat(from)
		if err != nil {
			return nil, err
		}
		if !st.exists || !st.dir {
			out = append(out, e)
			continue
		}
		covered, err := s.cover(e, from, &budget)
		if err != nil {
			return nil, err
		}
		out = append(out, covered...)
	}
	return out, nil
}

// cover is the one judgement of what a folder effect reaches: e, marked
// with how many paths it covers, then an effect for each path inside the
// folder that the vault holds at from (e.Path, a move's source, or for
// bash's real changes the name the vault holds the folder at before the
// call), at every depth, walked through the vault's file system without
// following a link: the same op on that path, a move-in's with its source
// inside e.Source, zoned. budget is what the call may still cover (a
// move-in covers the paths its move-out did, and takes none of it); past
// it the call fails whole with a reason, never judged on a part.
func (s *Set) cover(e policy.Effect, from zones.Path, budget *int) ([]policy.Effect, error) {
	st, err := s.stat(from)
	if err != nil {
		return nil, err
	}
	if !st.exists || !st.dir {
		return nil, s.fail(say.NotFolder{Path: from.String()})
	}
	if e.Op == zones.OpMoveIn {
		// the same paths as its move-out's, counted there: bounded alone
		own := s.coverMax()
		budget = &own
	}
	folder := e.Path
	var inside []policy.Effect
	// disk is the folder as the file system spells it; at (and src, for a
	// move-in) the paths the effects name, as the zones judge them (NFC).
	var walk func(disk string, at, src zones.Path) error
	walk = func(disk string, at, src zones.Path) error {
		names, err := s.folderNames(disk, budget, folder)
		if err != nil {
			return err
		}
		for _, name := range names {
			p := path.Join(disk, name)
			child, err := at.Child(name)
			if err != nil {
				return err
			}
			st, err := statOf(s.Vault.lstat(p))
			if err != nil {
				return err
			}
			if !st.exists {
				return s.fail(say.ChangedMeantime{Path: p})
			}
			in := fileEffect(e.Op, child, st)
			var srcChild zones.Path
			switch e.Op {
			case zones.OpMoveIn:
				// a new name for what the source holds: nothing is there
				in = policy.Effect{Op: e.Op, Path: child, SourceUnknown: src.IsZero()}
				if !src.IsZero() {
					if srcChild, err = src.Child(name); err != nil {
						return err
					}
					in.Source = srcChild
				}
			case zones.OpModify, zones.OpMoveOut:
				in.Links = 0 // the folder's mode or name changes, not the file
			}
			if e.Op == zones.OpMoveIn && st.symlink {
				// a link the folder takes along, read where the disk
				// holds it (links.go)
				in.Leads = s.carriedLeads(p, child)
			}
			in.Folder, in.Cause, in.Fact = folder, e.Cause, e.Fact
			inside = append(inside, in)
			if st.dir {
				if err := walk(p, child, srcChild); err != nil {
					return err
				}
			}
		}
		return nil
	}
	src := e.Source
	if e.SourceUnknown {
		src = zones.Path{}
	}
	if err := walk(from.String(), e.Path, src); err != nil {
		return nil, err
	}
	e.Covers = len(inside)
	out := append([]policy.Effect{e}, inside...)
	policy.Zoned(s.Zones, out)
	return out, nil
}

// folderNames reads the names in a folder, sorted, taking each from
// budget: a folder that would overdraw it is refused, named by the folder
// effect's path (folder), having read no more than one batch past it.
func (s *Set) folderNames(disk string, budget *int, folder zones.Path) ([]string, error) {
	d, err := s.Vault.Fs.Open(disk)
	if err != nil {
		return nil, s.osFail(disk, err)
	}
	defer d.Close()
	var names []string
	for {
		batch, err := d.Readdirnames(256)
		names = append(names, batch...)
		if *budget -= len(batch); *budget < 0 {
			return nil, s.fail(say.TooManyEntries{Path: folder.String(), Max: s.coverMax()})
		}
		if err == io.EOF || err == nil && len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, s.osFail(disk, err) // never judged on the part that was read
		}
	}
	slices.Sort(names)
	return names, nil
}

// coverReal covers each folder effect among a walled bash call's real
// effects (a folder the command deleted, moved, or changed the mode of):
// what the folder holds is the vault's, the overlay's lower layer, read at
// the name the vault holds it at (vaultNames); each path's effect is
// marked unforeseen as its folder's is. changeOf[i] is the index in
// changes of the change real[i] comes from.
func (s *Set) coverReal(real []RealEffect, changes []txn.Change, changeOf []int) ([]RealEffect, error) {
	var lower []string
	budget := s.coverMax()
	out := make([]RealEffect, 0, len(real))
	for i, r := range real {
		out = append(out, r)
		if !isFolderEffect(&r.Effect) {
			continue
		}
		if lower == nil {
			lower = vaultNames(changes)
		}
		c := changes[changeOf[i]]
		from, ok := s.realPath(lower[changeOf[i]])
		if !ok {
			return nil, s.fail(say.NotFolder{Path: lower[changeOf[i]]})
		}
		covered, err := s.cover(r.Effect, from, &budget)
		if err != nil {
			return nil, err
		}
		out[len(out)-1].Effect = covered[0]
		for _, in := range covered[1:] {
			// the change is the folder's: its mode bits are judged on it alone
			in.Fact = RealPart{Change: c}
			out = append(out, RealEffect{Effect: in, Unpredicted: r.Unpredicted})
		}
	}
	return out, nil
}

// vaultNames is, for each change of a list in the order txn.Commit applies
// it, the name the vault holds the entry it changes at before the call: a
// move's source, any other change's path, with the folder moves before it
// in the list undone (its names are the names at that point: a move out of
// a moved folder, a delete inside one, name it where the folder went).
func vaultNames(changes []txn.Change) []string {
	type move struct{ from, to string }
	var moves []move // the folder moves so far, in order
	out := make([]string, len(changes))
	for i, c := range changes {
		name := c.Path
		if c.Op == txn.Move {
			name = c.From
		}
		for j := len(moves) - 1; j >= 0; j-- {
			m := moves[j]
			if name == m.to {
				name = m.from
			} else if strings.HasPrefix(name, m.to+"/") {
				name = m.from + name[len(m.to):]
			}
		}
		out[i] = name
		if c.Op == txn.Move && c.Dir {
			moves = append(moves, move{from: c.From, to: c.Path})
		}
	}
	return out
}
