package tools

import (
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/zones"
)

// A symlink the agent leaves in the vault may lead only where the agent
// may read: Obsidian, a sync plugin or a backup follows it, though
// vaultgate never reads through one that leads out (Vault.Resolve). The
// planners find where each leads (policy.Lead: they read the disk) and the
// zones rule decides (policy's judgeLeads), for every route that leaves
// one: what a bash command on the overlay really made (a symlink made,
// one put where a file stood, a link moved: realLeads) and the move tool
// (movedLeads), and for both the links a folder they move takes along
// (carriedLeads, as cover lists the paths it takes). No file tool makes a symlink;
// the move tool only carries one to a new place.

// lead is where the symlink at at, whose target is target, leads: the
// target read from at's folder as the kernel reads it, through the
// vault's links as they stand now, its last name followed too; and, for a
// folder, what it holds.
func (s *Set) lead(at zones.Path, target string) policy.Lead {
	l := policy.Lead{At: at, Target: target}
	to, ok := s.leadTo(at, target)
	if !ok {
		l.Unknown = true
		return l
	}
	l.To = to
	if to.Outside() {
		return l
	}
	st, err := s.stat(to)
	if err != nil {
		l.Unknown = true
		return l
	}
	if st.dir {
		l.Dir = true
		l.Inside, ok = s.reachInside(to)
		l.Unknown = !ok
	}
	return l
}

// leadTo is the path the symlink at at, with target, leads to; ok is
// false when that can't be told.
func (s *Set) leadTo(at zones.Path, target string) (zones.Path, bool) {
	if at.IsZero() || at.IsRoot() || at.Outside() {
		return zones.Path{}, false
	}
	hops := 0
	return s.follow(at.Parent(), target, &hops)
}

// follow walks target from the vault folder dir, name by name as the
// kernel does: a ".." climbs from where the walk really is, each symlink
// that exists is followed (its own target from its own folder), and a
// name that does not exist yet ends the walk at the path the rest names.
// A ".." after a name is not followed at all (ok false): what it means
// depends on whether that name is a link, which a later call could
// change, so the link could be turned elsewhere without being touched.
// Climbing above the vault's root, or an absolute target outside it,
// leads outside (even one that comes back in: it leaves the vault on the
// way).
func (s *Set) follow(dir zones.Path, target string, hops *int) (zones.Path, bool) {
	if target == "" || strings.IndexByte(target, 0) >= 0 || !norm.NFC.IsNormalString(target) {
		// a name the disk may spell otherwise than the zones (NFC) can't
		// be looked up as the kernel will
		return zones.Path{}, false
	}
	cur, names := dir, strings.Split(target, "/")
	if path.IsAbs(target) {
		p, err := zones.Normalize(s.Vault.Root, target)
		if err != nil {
			return zones.Path{}, false
		}
		if p.Outside() {
			return p, true
		}
		if slices.Contains(names, "..") {
			return zones.Path{}, false // climbs, yet lands inside: by a way only the disk knows
		}
		cur, names = zones.VaultRoot(), strings.Split(p.String(), "/")
	}
	named := false
	for _, n := range names {
		switch n {
		case "", ".":
		case "..":
			if named {
				return zones.Path{}, false
			}
		default:
			named = true
		}
	}
	for i, name := range names {
		switch name {
		case "", ".":
			continue
		case "..":
			if cur.IsRoot() {
				out, err := zones.Normalize(s.Vault.Root, path.Dir(s.Vault.Root))
				return out, err == nil && out.Outside()
			}
			cur = cur.Parent()
			continue
		}
		next, err := cur.Child(name)
		if err != nil {
			return zones.Path{}, false
		}
		fi, err := s.Vault.lstat(next.String())
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// the rest does not exist yet: it is the path it names
				for _, rest := range names[i+1:] {
					if rest == "" || rest == "." {
						continue
					}
					if next, err = next.Child(rest); err != nil {
						return zones.Path{}, false
					}
				}
				return next, true
			}
			return zones.Path{}, false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if *hops++; *hops > maxLinkHops {
			return zones.Path{}, false
		}
		t, err := s.Vault.readlink(next.String())
		if err != nil {
			return zones.Path{}, false
		}
		to, ok := s.follow(cur, t, hops)
		if !ok || to.Outside() {
			return to, ok
		}
		cur = to
	}
	return cur, true
}

// reachInside walks the folder dir (links not followed) for the paths a
// link to it reaches that its own zone does not tell: those whose zone
// differs from their folder's, and control paths and reserved names
// (which their zone, capped at protected, may not show). ok is false for
// a folder too large to walk, or one that can't be read.
func (s *Set) reachInside(dir zones.Path) (inside []zones.Path, ok bool) {
	count := 0
	var walk func(disk string, at zones.Path, zone zones.Mode) bool
	walk = func(disk string, at zones.Path, zone zones.Mode) bool {
		names, err := readDirNames(s.Vault.Fs, disk, -1)
		if err != nil {
			return false
		}
		for _, name := range names {
			if count++; count > maxWalk {
				return false
			}
			child, err := at.Child(name)
			if err != nil {
				return false
			}
			z := s.Zones.Zone(child)
			control := zones.IsReserved(name) || zones.ControlWhy(child) != ""
			if z != zone || control {
				inside = append(inside, child)
				if control || !z.Allows(zones.OpRead) {
					// what it holds is a control path too, or reached
					// only through a place that may not be read: judged
					// with it, not walked (a .git may hold many files)
					continue
				}
			}
			p := path.Join(disk, name)
			if st, err := statOf(s.Vault.lstat(p)); err != nil {
				return false
			} else if st.dir && !walk(p, child, z) {
				return false
			}
		}
		return true
	}
	ok = walk(dir.String(), dir, s.Zones.Zone(dir))
	return inside, ok
}

// movedLead is the lead of a symlink with target moved from from to to,
// when from its new place it leads elsewhere than it did (a relative
// target read from another folder); ok is false when it leads where it
// led. A link the person made that leads where it led is not the
// caller's making.
func (s *Set) movedLead(from, to zones.Path, target string) (policy.Lead, bool) {
	now, nowOK := s.leadTo(to, target)
	was, wasOK := s.leadTo(from, target)
	if nowOK && wasOK && now == was {
		return policy.Lead{}, false
	}
	return s.lead(to, target), true
}

// movedLeads is the lead of the symlink src the move tool moves to dst,
// when it leads elsewhere from there. A folder's links are its covered
// paths' (carriedLeads).
func (s *Set) movedLeads(src, dst zones.Path, st stat) []policy.Lead {
	if !st.symlink {
		return nil
	}
	return s.carriedLeads(src.String(), dst)
}

// carriedLeads is the lead of the symlink the vault holds at disk (as the
// file system spells its name) once moved to to, when it leads elsewhere
// from there: the move tool's, and each path a folder move takes (cover,
// folder.go, as it walks the folder: never a second walk, nor a name the
// zones spell otherwise than the disk). One that can't be read is unknown.
func (s *Set) carriedLeads(disk string, to zones.Path) []policy.Lead {
	from, ok := s.realPath(disk)
	target, err := s.Vault.readlink(disk)
	if !ok || err != nil {
		return []policy.Lead{{At: to, Unknown: true}}
	}
	if l, ok := s.movedLead(from, to, target); ok {
		return []policy.Lead{l}
	}
	return nil
}

// realLeads finds, for each real effect of a bash call that leaves a
// symlink at a name, where it leads (policy.Effect.Leads), for the zones
// rule: a symlink made or put in a file's place, a further name of one
// (a hard link), and one moved, alone or in a folder moved (a covered
// path), so that it leads elsewhere than from where the vault holds it.
func (s *Set) realLeads(real []RealEffect, changes []txn.Change) {
	if !slices.ContainsFunc(changes, func(c txn.Change) bool {
		return c.After != nil && c.After.Mode.Type() == fs.ModeSymlink
	}) {
		return // no symlink made or moved (a folder's: coverReal)
	}
	type key struct {
		op         txn.Op
		path, from string
	}
	index := make(map[key]int, len(changes))
	for i, c := range changes {
		index[key{c.Op, c.Path, c.From}] = i
	}
	var lower []string // vaultNames, once needed
	// was is the name the vault holds a moved link at: the move's source
	// with the folder moves before it undone.
	was := func(e *policy.Effect) (zones.Path, bool) {
		part, _ := e.Fact.(RealPart)
		c := part.Change
		i, ok := index[key{c.Op, c.Path, c.From}]
		if !ok || c.Op != txn.Move {
			return zones.Path{}, false
		}
		if lower == nil {
			lower = vaultNames(changes)
		}
		return s.realPath(lower[i])
	}
	for i := range real {
		e := &real[i].Effect
		part, _ := e.Fact.(RealPart)
		c := part.Change
		if e.Unknown || !e.Folder.IsZero() || e.Op == zones.OpMoveOut || e.Op == zones.OpDelete ||
			c.After == nil || c.After.Mode.Type() != fs.ModeSymlink {
			continue
		}
		if c.Op != txn.Move {
			e.Leads = append(e.Leads, s.lead(e.Path, c.After.Target))
			continue
		}
		if from, ok := was(e); !ok {
			e.Leads = append(e.Leads, s.lead(e.Path, c.After.Target))
		} else if l, ok := s.movedLead(from, e.Path, c.After.Target); ok {
			e.Leads = append(e.Leads, l)
		}
	}
}
