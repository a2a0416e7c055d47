//go:build linux

package txn

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Diff reads the upper layer of l, after the command has ended, against lower (the
// vault) and says what the command really changed. Nothing is followed: a symlink is a
// change of its own, never a way into another folder.
//
// The changes are in the order to apply them in, one after another, and each name is
// the name at that point: Paths are final names (the tree as the command left it), a
// Move's From is the vault's name with the folder moves before it applied, a Link's
// From is the final name of the other link. The order is by path, each change after
// what it needs: a folder before what it holds, a folder's move before a move out of
// it, a move out of a folder before the folder's delete, a replaced file's delete
// before what takes its place.
//
// A Move's Before and After both describe the entry moved, as the vault holds it; a
// change of its content or mode is a Modify of the new name after it. A copy-up that
// changed neither content nor mode (touch, an open for writing) is no change at all.
//
// How a rename is found: as root (opt.Privileged) a copied-up file's origin xattr holds
// the file handle of its lower inode, compared exactly with the handles of the lower
// files the layer deleted, and a renamed folder carries a redirect xattr. In a user
// namespace the origin is empty, so a copy-up at a name the vault does not hold is
// matched by content and mode against the deleted lower files (the lexically first of
// equal candidates); a copy-up at a name the vault holds is that file's own copy-up.
// There, a file moved and then changed, a renamed symlink (no user xattr on a symlink)
// and a folder mv copied (EXDEV) are creates and deletes.
//
// The overlay must be mounted with metacopy=off (a metacopy is refused: its data is
// not in the upper layer) and, as root, redirect_dir=on for folder moves.
func Diff(l *Layer, lower string, opt DiffOptions) ([]Change, error) {
	up, err := openTree(l.Upper)
	if err != nil {
		return nil, fmt.Errorf("txn: diff: %w", err)
	}
	defer up.close()
	low, err := openTree(lower)
	if err != nil {
		return nil, fmt.Errorf("txn: diff: %w", err)
	}
	defer low.close()
	d := &differ{
		opt: opt, upper: up, lower: low,
		xattrPrefix: "user.overlay.",
		replacedAt:  map[string]int{},
		claimed:     map[string]bool{},
		consumed:    map[string]bool{},
	}
	if opt.Privileged {
		d.xattrPrefix = "trusted.overlay."
	}
	if err := d.walk("", "", lowerMerged); err != nil {
		return nil, err
	}
	if err := d.claimMoves(); err != nil {
		return nil, err
	}
	d.linkGroups()
	changes, err := d.changes()
	if err != nil {
		return nil, err
	}
	renameThroughFolderMoves(changes)
	return order(changes), nil
}

// lowerMode says how an upper folder relates to the lower folder at its comparison path.
type lowerMode uint8

const (
	lowerNone     lowerMode = iota // a new folder: nothing below it
	lowerMerged                    // the merged view showed the lower entries the upper does not cover
	lowerReplaced                  // opaque: the lower entries are gone, names in the upper replace them
)

type entryKind uint8

const (
	kindFile entryKind = iota
	kindDir
	kindSymlink
	kindSpecial
)

func kindOf(st *unix.Stat_t) entryKind {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return kindFile
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFLNK:
		return kindSymlink
	}
	return kindSpecial
}

// upperEntry is one name in the upper layer (whiteouts aside).
type upperEntry struct {
	path  string // final, vault-relative
	lower string // the lower path it is compared with
	kind  entryKind
	st    unix.Stat_t
	after *State

	inPlace bool   // the copy-up of the lower entry at its own path (or a merged folder)
	before  *State // inPlace: the lower entry
	over    string // the lower path this entry replaced, "" if none

	copyUp   bool   // carries an origin: it was copied up from some lower inode
	origin   string // Privileged: the decoded handle of that inode
	from     string // a claimed move: the lower source
	fromSt   *State
	linkFrom string // a further name of a hard-linked inode: the first name
}

// replacedEntry is a lower entry the merged view no longer shows at its path.
type replacedEntry struct {
	lower, path string // the lower path, and the final path it was seen at
	st          unix.Stat_t
}

type differ struct {
	opt          DiffOptions
	upper, lower *tree
	xattrPrefix  string

	files, bytes int64
	entries      []*upperEntry
	replaced     []replacedEntry
	replacedAt   map[string]int  // lower path → index in replaced
	claimed      map[string]bool // lower paths accounted for by a move
	consumed     map[string]bool // replaced lower files rewritten in place (a Modify, not a Delete)
}

func (d *differ) count(size int64) error {
	d.files++
	if d.opt.MaxFiles > 0 && d.files > int64(d.opt.MaxFiles) {
		return &LimitError{What: "files", Limit: int64(d.opt.MaxFiles), Got: d.files}
	}
	d.bytes += size
	if d.opt.MaxBytes > 0 && d.bytes > d.opt.MaxBytes {
		return &LimitError{What: "bytes", Limit: d.opt.MaxBytes, Got: d.bytes}
	}
	return nil
}

func (d *differ) attr(rel, name string) ([]byte, bool, error) {
	return d.upper.xattr(rel, d.xattrPrefix+name)
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// walk reads the upper folder dir (final path) whose comparison path in the lower is
// lowerDir.
func (d *differ) walk(dir, lowerDir string, mode lowerMode) error {
	var budget int64
	if d.opt.MaxFiles > 0 {
		budget = int64(d.opt.MaxFiles) - d.files
		if budget <= 0 {
			budget = -1 // any name at all is over
		}
	}
	names, err := d.upper.names(dir, max(budget, 0))
	if errors.Is(err, errTooMany) || (budget < 0 && len(names) > 0) {
		return &LimitError{What: "files", Limit: int64(d.opt.MaxFiles), Got: d.files + int64(len(names))}
	}
	if err != nil {
		return err
	}
	inUpper := make(map[string]bool, len(names))
	for _, name := range names {
		inUpper[name] = true
		p, lp := join(dir, name), join(lowerDir, name)
		st, ok, err := d.upper.lstat(p)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("txn: diff: %s vanished from the upper layer", p)
		}
		var size int64
		if k := kindOf(&st); k == kindFile || k == kindSymlink {
			size = st.Size
		}
		if err := d.count(size); err != nil {
			return err
		}
		var lowSt unix.Stat_t
		lowOK := false
		if mode != lowerNone {
			if lowSt, lowOK, err = d.lower.lstat(lp); err != nil {
				return err
			}
		}
		visible := lowOK && mode == lowerMerged
		white, err := d.isWhiteout(p, &st)
		if err != nil {
			return err
		}
		if white {
			if lowOK { // in an opaque folder too: a lower entry under a whiteout is gone
				d.replace(lp, p, lowSt)
			}
			continue
		}
		e := &upperEntry{path: p, lower: lp, kind: kindOf(&st), st: st}
		if e.kind == kindDir {
			if err := d.walkFolder(e, lowSt, lowOK, visible, mode); err != nil {
				return err
			}
			continue
		}
		if e.after, err = d.upper.state(p, &st); err != nil {
			return err
		}
		d.entries = append(d.entries, e)
		if e.kind == kindSpecial {
			if lowOK {
				d.replace(lp, p, lowSt)
			}
			continue
		}
		if err := d.readOrigin(e); err != nil {
			return err
		}
		if lowOK {
			inPlace := false
			if visible && kindOf(&lowSt) == e.kind && e.copyUp {
				if inPlace, err = d.copyUpOf(e, lp); err != nil {
					return err
				}
			}
			if inPlace {
				e.inPlace = true
				if e.before, err = d.lower.state(lp, &lowSt); err != nil {
					return err
				}
			} else {
				e.over = lp
				d.replace(lp, p, lowSt)
			}
		}
	}
	if mode == lowerReplaced {
		lowerNames, err := d.lower.names(lowerDir, 0)
		if err != nil {
			return err
		}
		for _, name := range lowerNames {
			if inUpper[name] {
				continue
			}
			lp := join(lowerDir, name)
			st, ok, err := d.lower.lstat(lp)
			if err != nil {
				return err
			}
			if ok {
				d.replace(lp, join(dir, name), st)
			}
		}
	}
	return nil
}

// walkFolder classifies the upper folder e and walks into it.
func (d *differ) walkFolder(e *upperEntry, lowSt unix.Stat_t, lowOK, visible bool, mode lowerMode) error {
	var err error
	if e.after, err = d.upper.state(e.path, &e.st); err != nil {
		return err
	}
	d.entries = append(d.entries, e)
	_, opaque, err := d.opaque(e.path)
	if err != nil {
		return err
	}
	redirect, redirected, err := d.attr(e.path, "redirect")
	if err != nil {
		return err
	}
	childMode := lowerMerged
	if opaque {
		childMode = lowerReplaced
	}
	switch {
	case redirected:
		src, err := redirectSource(string(redirect), path.Dir(e.lower))
		if err != nil {
			return fmt.Errorf("txn: diff: %s: %w", e.path, err)
		}
		srcSt, ok, err := d.lower.lstat(src)
		if err != nil {
			return err
		}
		if !ok || kindOf(&srcSt) != kindDir {
			return fmt.Errorf("txn: diff: %s: redirect to %q, which is not a folder of the vault", e.path, src)
		}
		if lowOK && (src != e.lower || !visible) {
			d.replace(e.lower, e.path, lowSt)
		}
		if src == e.lower {
			e.inPlace = true
		} else {
			e.from = src
			d.claimed[src] = true
		}
		if e.before, err = d.lower.state(src, &srcSt); err != nil {
			return err
		}
		e.fromSt = e.before
		e.lower = src
		return d.walk(e.path, src, childMode)
	case lowOK && kindOf(&lowSt) == kindDir:
		// A folder the vault holds: merged, or (opaque, or a new folder where the
		// vault's was deleted) a folder whose old entries are gone unless named again.
		e.inPlace = true
		if e.before, err = d.lower.state(e.lower, &lowSt); err != nil {
			return err
		}
		if !visible {
			childMode = lowerReplaced
		}
		return d.walk(e.path, e.lower, childMode)
	default:
		if lowOK {
			e.over = e.lower
			d.replace(e.lower, e.path, lowSt)
		}
		return d.walk(e.path, "", lowerNone)
	}
}

// redirectSource resolves an overlay redirect: absolute from the lower root, or relative
// to the lower folder that holds the renamed folder's parent.
func redirectSource(redirect, parentLower string) (string, error) {
	if parentLower == "." {
		parentLower = ""
	}
	var src string
	if strings.HasPrefix(redirect, "/") {
		src = strings.TrimLeft(redirect, "/")
	} else {
		if redirect == "" || strings.Contains(redirect, "/") {
			return "", fmt.Errorf("a relative redirect %q", redirect)
		}
		src = join(parentLower, redirect)
	}
	if src == "" || path.Clean(src) != src || src == ".." || strings.HasPrefix(src, "../") {
		return "", fmt.Errorf("a redirect %q outside the vault", redirect)
	}
	return src, nil
}

func (d *differ) opaque(rel string) (string, bool, error) {
	// Read under the wrong prefix, an opaque folder would look merged and its deleted
	// entries would vanish from the diff: a mark under the other prefix is an error.
	other := "trusted.overlay."
	if d.opt.Privileged {
		other = "user.overlay."
	}
	if _, wrong, err := d.upper.xattr(rel, other+"opaque"); err != nil || wrong {
		if err == nil {
			err = fmt.Errorf("txn: diff: %s carries %sopaque: the overlay was not mounted as DiffOptions.Privileged says", rel, other)
		}
		return "", false, err
	}
	v, ok, err := d.attr(rel, "opaque")
	if err != nil || !ok {
		return "", false, err
	}
	return string(v), string(v) == "y", nil
}

// isWhiteout: a character device 0/0, or overlay's xattr form (an empty file marked whiteout).
func (d *differ) isWhiteout(rel string, st *unix.Stat_t) (bool, error) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		return st.Rdev == 0, nil
	case unix.S_IFREG:
		if st.Size != 0 {
			return false, nil
		}
		_, ok, err := d.attr(rel, "whiteout")
		return ok, err
	}
	return false, nil
}

func (d *differ) readOrigin(e *upperEntry) error {
	v, ok, err := d.attr(e.path, "origin")
	if err != nil || !ok {
		return err
	}
	// A metacopy holds only metadata, its data stays in the lower layer: reading it
	// here would hash a hole. Only copy-ups carry it, so it is sought only beside an origin.
	if _, meta, err := d.attr(e.path, "metacopy"); err != nil || meta {
		if err == nil {
			err = fmt.Errorf("txn: diff: %s is a metacopy: mount the overlay with metacopy=off", e.path)
		}
		return err
	}
	if !d.opt.Privileged {
		e.copyUp = true
		return nil
	}
	// A handle that does not decode is no copy-up we can trace: the entry is judged new.
	e.origin, e.copyUp = originHandle(v)
	return nil
}

// copyUpOf says whether e is the copy-up of the lower entry at lp (rather than a rename
// onto that name).
func (d *differ) copyUpOf(e *upperEntry, lp string) (bool, error) {
	if !d.opt.Privileged {
		return true, nil
	}
	h, err := d.lower.handle(lp)
	if err != nil {
		return false, err
	}
	return h == e.origin, nil
}

// candidate is a lower file or symlink the layer deleted or replaced: a possible source of a rename.
type candidate struct {
	lower string
	st    unix.Stat_t
	state *State // computed when first compared
}

// claimMoves gives each copy-up that is not in place the deleted lower file it came
// from, if any: by handle as root, by content and mode in a user namespace.
func (d *differ) claimMoves() error {
	var seekers []*upperEntry
	for _, e := range d.entries {
		if e.copyUp && !e.inPlace && (e.kind == kindFile || e.kind == kindSymlink) {
			seekers = append(seekers, e)
		}
	}
	if len(seekers) == 0 {
		return nil
	}
	cands, err := d.candidates()
	if err != nil {
		return err
	}
	byHandle := map[string]*candidate{}
	if d.opt.Privileged {
		for _, c := range cands {
			h, err := d.lower.handle(c.lower)
			if err != nil {
				return err
			}
			byHandle[h] = c
		}
	}
	for _, e := range seekers { // entries are in path order: the first seeker wins
		var src *candidate
		if d.opt.Privileged {
			if c := byHandle[e.origin]; c != nil && !d.claimed[c.lower] {
				src = c
			}
		} else if src, err = d.matchContent(e, cands); err != nil {
			return err
		}
		if src == nil {
			continue
		}
		if src.state == nil {
			if src.state, err = d.lower.state(src.lower, &src.st); err != nil {
				return err
			}
		}
		d.claimed[src.lower] = true
		e.from, e.fromSt = src.lower, src.state
	}
	return nil
}

// matchContent finds the lexically first unclaimed candidate of e's kind, mode and content.
func (d *differ) matchContent(e *upperEntry, cands []*candidate) (*candidate, error) {
	for _, c := range cands {
		if d.claimed[c.lower] || kindOf(&c.st) != e.kind || fileMode(c.st.Mode) != e.after.Mode || c.st.Size != e.after.Size {
			continue
		}
		if c.state == nil {
			s, err := d.lower.state(c.lower, &c.st)
			if err != nil {
				return nil, err
			}
			c.state = s
		}
		if c.state.SHA256 == e.after.SHA256 && c.state.Target == e.after.Target {
			return c, nil
		}
	}
	return nil, nil
}

// candidates lists, sorted, every lower file and symlink under the replaced entries,
// except inside folders a redirect moved whole.
func (d *differ) candidates() ([]*candidate, error) {
	var out []*candidate
	var add func(lower string, st unix.Stat_t) error
	add = func(lower string, st unix.Stat_t) error {
		switch kindOf(&st) {
		case kindFile, kindSymlink:
			out = append(out, &candidate{lower: lower, st: st})
		case kindDir:
			if d.claimed[lower] {
				return nil
			}
			names, err := d.lower.names(lower, 0)
			if err != nil {
				return err
			}
			for _, name := range names {
				p := join(lower, name)
				cst, ok, err := d.lower.lstat(p)
				if err != nil {
					return err
				}
				if ok {
					if err := add(p, cst); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for _, r := range d.replaced {
		if err := add(r.lower, r.st); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].lower < out[j].lower })
	return out, nil
}

// linkGroups turns the further names of a hard-linked upper inode into Links to its
// first name: the in-place copy-up or the moved file if there is one, else the first by path.
func (d *differ) linkGroups() {
	type inode struct{ dev, ino uint64 }
	groups := map[inode][]*upperEntry{}
	var keys []inode
	for _, e := range d.entries {
		if e.kind != kindFile || e.st.Nlink < 2 {
			continue
		}
		k := inode{uint64(e.st.Dev), e.st.Ino}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], e)
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue // the other name is outside the layer (overlay's index): no name of the vault
		}
		first := g[0]
		for _, e := range g {
			if e.inPlace || e.from != "" {
				first = e
				break
			}
		}
		for _, e := range g {
			if e == first {
				continue
			}
			if e.from != "" {
				delete(d.claimed, e.from)
				e.from, e.fromSt = "", nil
			}
			e.linkFrom = first.path
		}
	}
}

func sameContent(a, b *State) bool {
	return a.Mode == b.Mode && a.SHA256 == b.SHA256 && a.Target == b.Target && a.Size == b.Size
}

// changes emits the changes, in the order of the walk.
func (d *differ) changes() ([]Change, error) {
	var out []Change
	emit := func(c Change) { out = append(out, c) }
	for _, e := range d.entries {
		dir := e.kind == kindDir
		switch {
		case e.kind == kindSpecial:
			emit(Change{Op: Special, Path: e.path, After: e.after})
		case e.linkFrom != "":
			emit(Change{Op: Link, Path: e.path, From: e.linkFrom, After: e.after})
		case e.from != "":
			emit(Change{Op: Move, Path: e.path, From: e.from, Dir: dir, Before: e.fromSt, After: e.fromSt})
			if !sameContent(e.fromSt, e.after) {
				emit(Change{Op: Modify, Path: e.path, Dir: dir, Before: e.fromSt, After: e.after})
			}
		case e.inPlace:
			if !sameContent(e.before, e.after) {
				emit(Change{Op: Modify, Path: e.path, Dir: dir, Before: e.before, After: e.after})
			}
		case e.over != "" && !dir && !d.claimed[e.over] && d.overSameKind(e):
			// A new file where the vault's file of the same kind stood (sed -i, an
			// editor's temp-and-rename save): that file, modified.
			d.consumed[e.over] = true
			before, err := d.lower.state(e.over, d.overStat(e))
			if err != nil {
				return nil, err
			}
			if !sameContent(before, e.after) {
				emit(Change{Op: Modify, Path: e.path, Before: before, After: e.after})
			}
		default:
			emit(Change{Op: Create, Path: e.path, Dir: dir, After: e.after})
		}
	}
	for _, r := range d.replaced {
		if d.claimed[r.lower] || d.consumed[r.lower] {
			continue
		}
		before, err := d.lower.state(r.lower, &r.st)
		if err != nil {
			return nil, err
		}
		emit(Change{Op: Delete, Path: r.path, Dir: kindOf(&r.st) == kindDir, Before: before})
	}
	return out, nil
}

func (d *differ) replace(lower, final string, st unix.Stat_t) {
	if _, dup := d.replacedAt[lower]; dup {
		return
	}
	d.replacedAt[lower] = len(d.replaced)
	d.replaced = append(d.replaced, replacedEntry{lower: lower, path: final, st: st})
}

func (d *differ) overStat(e *upperEntry) *unix.Stat_t {
	if i, ok := d.replacedAt[e.over]; ok {
		return &d.replaced[i].st
	}
	return nil
}

func (d *differ) overSameKind(e *upperEntry) bool {
	st := d.overStat(e)
	return st != nil && kindOf(st) == e.kind
}

// renameThroughFolderMoves rewrites each Move's From, found as a vault name, into the
// name it has once the folder moves above it are applied: the deepest moved folder
// holding it decides, since that folder's Path is already final.
func renameThroughFolderMoves(changes []Change) {
	folderMoves := map[string]string{} // vault name → final name
	for _, c := range changes {
		if c.Op == Move && c.Dir {
			folderMoves[c.From] = c.Path
		}
	}
	if len(folderMoves) == 0 {
		return
	}
	for i, c := range changes {
		if c.Op != Move {
			continue
		}
		for a := parent(c.From); a != ""; a = parent(a) {
			if to, ok := folderMoves[a]; ok {
				changes[i].From = to + c.From[len(a):]
				break
			}
		}
	}
}
