package zones

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Entry is one configured zone: a vault-relative path ("." for the whole
// vault) or, for bash only, an absolute path outside the vault.
type Entry struct {
	Path string
	Mode Mode
}

// Options are the parts of a table that do not come from the zone lists.
type Options struct {
	// FoldOnly matches paths by their case-folded spelling only: right for a
	// vault on a file system that folds case, where "Notes/x" is "notes/x".
	// When false, a path's zone is the stricter of exact and folded matching.
	FoldOnly bool
	// Protect and Hide are control paths (absolute, or vault-relative) capped
	// at protected or hidden whatever the entries say: the config file, the
	// audit log, the state folder.
	Protect []string
	Hide    []string
	// Exists says whether an entry's path is there now, for the words
	// of a refusal only (Where): it never names, as a place to go, a
	// folder that is not there. nil: every entry is. The table itself
	// never reads the disk; whoever builds it (config) may.
	Exists func(Path) bool
}

// Table answers which zone a path is in. It is immutable once built and safe
// for concurrent use.
type Table struct {
	vault    string // absolute, cleaned, NFC
	entries  []Entry
	exact    map[string]Mode // entry path → mode
	folded   map[string]Mode // folded entry path → mode
	caps     map[string]Mode // control path → the most it may be
	capsFold map[string]Mode
	patterns []pattern // name patterns (pattern.go), which only narrow
	foldOnly bool
	// copiesHidden: the vault has a zone that may not be read, so a
	// control path that holds copies of its files (.git) is hidden.
	copiesHidden bool
	exists       func(Path) bool // Options.Exists
}

// New builds a table for the vault at the absolute path vault. Entry paths
// must already be normalised (see Normalize); New rejects duplicates, paths
// listed in two zones, and relative paths that leave the vault.
func New(vault string, entries []Entry, opt Options) (*Table, error) {
	if !path.IsAbs(vault) {
		return nil, fmt.Errorf("zones: vault %q is not an absolute path", vault)
	}
	r := kinds.Load()
	t := &Table{
		vault:    norm.NFC.String(path.Clean(vault)),
		exact:    make(map[string]Mode, len(entries)),
		folded:   make(map[string]Mode, len(entries)),
		caps:     make(map[string]Mode),
		capsFold: make(map[string]Mode),
		foldOnly: opt.FoldOnly,
		exists:   opt.Exists,
	}
	for _, e := range entries {
		if IsPattern(e.Path) {
			if e.Mode == NoZone || int(e.Mode) >= r.n {
				return nil, fmt.Errorf("zones: %q: invalid zone mode %d", e.Path, e.Mode)
			}
			pat, err := compilePattern(e.Path, e.Mode)
			if err != nil {
				return nil, err
			}
			t.patterns = append(t.patterns, pat)
			continue
		}
		np, err := Normalize(t.vault, e.Path)
		if err != nil {
			return nil, err
		}
		p := np.p
		if e.Mode == NoZone || int(e.Mode) >= r.n {
			return nil, fmt.Errorf("zones: %q: invalid zone mode %d", e.Path, e.Mode)
		}
		if prev, dup := t.exact[p]; dup {
			return nil, &DuplicateError{Path: p, First: prev, Second: e.Mode}
		}
		f := fold(p)
		if prev, dup := t.folded[f]; dup && prev != e.Mode {
			// "Notes" write and "notes" protected can't both hold on a
			// folding file system, and on any other the stricter one would
			// win silently: make the user decide.
			return nil, &DuplicateError{Path: p, First: prev, Second: e.Mode}
		}
		t.exact[p] = e.Mode
		if prev, ok := t.folded[f]; ok {
			t.folded[f] = r.stricter(prev, e.Mode)
		} else {
			t.folded[f] = e.Mode
		}
		t.entries = append(t.entries, Entry{Path: p, Mode: e.Mode})
	}
	addCaps := func(paths []string, m Mode) error {
		for _, raw := range paths {
			np, err := Normalize(t.vault, raw)
			if err != nil {
				return err
			}
			p, f := np.p, fold(np.p)
			if old, ok := t.caps[p]; ok {
				t.caps[p] = r.stricter(old, m)
			} else {
				t.caps[p] = m
			}
			if old, ok := t.capsFold[f]; ok {
				t.capsFold[f] = r.stricter(old, m)
			} else {
				t.capsFold[f] = m
			}
		}
		return nil
	}
	if err := addCaps(opt.Protect, Protected); err != nil {
		return nil, err
	}
	if err := addCaps(opt.Hide, Hidden); err != nil {
		return nil, err
	}
	slices.SortFunc(t.entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	for _, e := range t.entries {
		if !path.IsAbs(e.Path) && !e.Mode.Allows(OpRead) {
			t.copiesHidden = true
		}
	}
	for _, pat := range t.patterns {
		if !pat.mode.Allows(OpRead) {
			t.copiesHidden = true
		}
	}
	return t, nil
}

// DuplicateError is a path listed in two zones.
type DuplicateError struct {
	Path          string
	First, Second Mode
}

func (e *DuplicateError) Error() string {
	if e.First == e.Second {
		return fmt.Sprintf("%q is listed twice in zone %s", e.Path, e.First)
	}
	return fmt.Sprintf("%q is listed in two zones: %s and %s", e.Path, e.First, e.Second)
}

// HidesCopies reports whether a control path that holds copies of the
// vault's files (.git) is hidden, as it is when the vault has a zone that
// may not be read: git then finds no repository where the agent looks.
func (t *Table) HidesCopies() bool { return t.copiesHidden }

// Vault returns the vault root the table was built for.
func (t *Table) Vault() string { return t.vault }

// Root is a zone root (a configured entry or a control path) and its zone.
type Root struct {
	Path Path
	Mode Mode
	// Pattern marks a name pattern's entry (Path is its text, not a
	// path): from Within, a zone that may lie anywhere inside.
	Pattern bool
	// Control marks a control path (Controls), and Own a path vaultgate
	// keeps for itself (a reserved name, the config file, the audit log
	// and its state folder): from RootOf, what capped the zone.
	Control, Own bool
}

// Patterns returns the configured name patterns, as Roots whose Path is
// the pattern's text.
func (t *Table) Patterns() []Root {
	out := make([]Root, len(t.patterns))
	for i, p := range t.patterns {
		out[i] = Root{Path: Path{p.text}, Mode: p.mode, Pattern: true}
	}
	return out
}

// PatternCovers reports whether a name pattern of the table covers p.
func (t *Table) PatternCovers(at Path) bool {
	if len(t.patterns) == 0 {
		return false
	}
	f := fold(at.p)
	for i := range t.patterns {
		if t.patterns[i].covers(f) {
			return true
		}
	}
	return false
}

// PatternNames reports whether a name pattern of t names rel itself (a
// path of the vault as the disk spells it) — by its last name, for a
// pattern of a name at any depth; all of it, for an anchored one — and not
// only a folder above it. A walk that meets every folder before what it
// holds asks this of each name: what is inside a folder a pattern names
// is that folder's already. A name of a pattern at any depth is matched
// by the name alone, without the cost of the whole path.
func (t *Table) PatternNames(vault, rel string) bool {
	if len(t.patterns) == 0 {
		return false
	}
	anchored := false
	var buf [64]byte
	name := foldedName(buf[:], path.Base(rel))
	for i := range t.patterns {
		p := &t.patterns[i]
		if !p.anyDepth {
			anchored = true
			continue
		}
		if ok, _ := path.Match(p.parts[0], name); ok {
			return true
		}
	}
	if !anchored {
		return false
	}
	at, err := Normalize(vault, rel)
	if err != nil || at.Outside() {
		return false
	}
	f := fold(at.p)
	for i := range t.patterns {
		if p := &t.patterns[i]; !p.anyDepth && matchWhole(p.parts, f) {
			return true
		}
	}
	return false
}

// Entries returns the configured entries, sorted by path.
func (t *Table) Entries() []Root {
	out := make([]Root, len(t.entries))
	for i, e := range t.entries {
		out[i] = Root{Path: Path{e.Path}, Mode: e.Mode}
	}
	return out
}

// Zone returns the zone of p: the stricter of its entry as spelled, its
// entry under case folding, the caps on control paths, and the name
// patterns that cover it. It does not allocate for ASCII paths, nor for
// names already folded, in a table without name patterns.
func (t *Table) Zone(at Path) Mode {
	p := at.p
	if p == "" {
		return NoZone
	}
	r := kinds.Load()
	var buf [256]byte
	f := foldInto(buf[:0], p)
	m := r.stricter(lookup(t.folded, f), capOf(r, t.capsFold, f))
	m = r.stricter(m, controlCap(f, t.copiesHidden))
	m = r.stricter(m, reservedCap(f)) // zones/reserved.go
	if len(t.patterns) > 0 {
		fs := string(f) // once, not once a pattern
		for i := range t.patterns {
			if t.patterns[i].covers(fs) {
				m = r.stricter(m, t.patterns[i].mode)
			}
		}
	}
	if t.foldOnly {
		return m
	}
	return r.stricter(m, r.stricter(lookup(t.exact, p), capOf(r, t.caps, p)))
}

// lookup finds the longest entry that is p or a folder above it.
func lookup[K ~string | ~[]byte](m map[string]Mode, p K) Mode {
	for {
		if mode, ok := m[string(p)]; ok {
			return mode
		}
		i := lastSlash(p)
		switch {
		case i > 0:
			p = p[:i]
		case i == 0 && len(p) > 1: // "/x" → "/"
			p = p[:1]
		case len(p) == 1 && p[0] == '.':
			return NoZone
		case i < 0:
			// a relative path's last hope is the vault root entry
			if mode, ok := m["."]; ok {
				return mode
			}
			return NoZone
		default:
			return NoZone
		}
	}
}

// capOf returns the strictest cap on p or any folder above it (Write, which
// allows every op a zone can, if none).
func capOf[K ~string | ~[]byte](r *registry, m map[string]Mode, p K) Mode {
	c := Write
	if len(m) == 0 {
		return c
	}
	for {
		if mode, ok := m[string(p)]; ok {
			c = r.stricter(c, mode)
		}
		i := lastSlash(p)
		switch {
		case i > 0:
			p = p[:i]
		case i == 0 && len(p) > 1:
			p = p[:1]
		default:
			return c
		}
	}
}

func lastSlash[K ~string | ~[]byte](p K) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return -1
}

// foldInto appends the case-folded NFC spelling of p to dst. ASCII is folded
// in place; anything else goes through Unicode full case folding (so "ſ"
// becomes "s" and the Kelvin sign "k") and NFC again, since folding may
// leave a string unnormalised.
func foldInto(dst []byte, p string) []byte {
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			// Most names are already folded (lower case): Span proves it
			// without building a new string. p is NFC, so it stays valid.
			b := unsafe.Slice(unsafe.StringData(p), len(p)) // read only
			if n, err := folder.Span(b, true); n == len(p) && err == nil {
				return append(dst, p...)
			}
			return append(dst, fold(p)...)
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

var folder = cases.Fold() // stateless, safe for concurrent use

func fold(p string) string {
	return norm.NFC.String(folder.String(norm.NFC.String(p)))
}

// foldedName is fold(name) for a name as a disk spells it (NFC or not),
// spelled in buf when it can be — a name in ASCII, or one in NFC already
// folded, as most are — so that asking of every name of a vault makes no
// new string. What it returns must not outlive buf.
func foldedName(buf []byte, name string) string {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			if !norm.NFC.IsNormalString(name) {
				return fold(name)
			}
			break // foldInto proves an NFC name folded without a copy
		}
	}
	b := foldInto(buf[:0], name)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Fold returns the spelling of p that case-insensitive matching compares.
func Fold(p string) string { return fold(p) }

// IsAnchor reports whether p is the root of a configured zone (or the vault
// itself): such folders can't be deleted or moved, since the config names them.
func (t *Table) IsAnchor(at Path) bool {
	p := at.p
	if p == "." {
		return true
	}
	f := fold(p)
	for _, e := range t.entries {
		if e.Path == p || (fold(e.Path) == f) {
			return true
		}
	}
	return false
}

// Within returns the entries and control paths strictly inside p, with the
// mode each would give. An effect on p's whole subtree needs its permission in
// every one of them, besides p's own zone.
func (t *Table) Within(under Path) []Root {
	var out []Root
	p := under.p
	fp := fold(p)
	inside := func(q string) bool {
		if p == "." {
			return !path.IsAbs(q) && q != "."
		}
		return strings.HasPrefix(q, p+"/") || strings.HasPrefix(fold(q), fp+"/")
	}
	for _, e := range t.entries {
		if inside(e.Path) {
			out = append(out, Root{Path: Path{e.Path}, Mode: t.Zone(Path{e.Path})})
		}
	}
	for c := range t.caps {
		if inside(c) {
			out = append(out, Root{Path: Path{c}, Mode: t.Zone(Path{c})})
		}
	}
	for _, pat := range t.patterns {
		if !path.IsAbs(p) && pat.couldMatchBelow(fp) {
			out = append(out, Root{Path: Path{pat.text}, Mode: pat.mode, Pattern: true})
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return strings.Compare(a.Path.p, b.Path.p) })
	return out
}

// Area is a zone root where an op is allowed, with the folders inside it
// where it is not: "the whole vault" must not read as taking in a
// protected folder that lies in it.
type Area struct {
	Path string // a configured entry ("." is the whole vault)
	// Except are the entries inside Path, at the top, whose zone does not
	// allow the op and may be listed (a hidden one is never named).
	Except []string
}

// Where returns the zone roots in which op is allowed, each with the
// folders inside it where it is not, for a reason that tells the model
// where it may go instead. A root that is not there now (Options.Exists)
// is left out: the model is never sent to a folder that does not exist.
func (t *Table) Where(op Op) []Area {
	var out []Area
	for _, e := range t.entries {
		if e.Mode.Allows(op) && t.Zone(Path{e.Path}).Allows(op) && t.there(e.Path) {
			out = append(out, Area{Path: e.Path})
		}
	}
	// Each exception goes to the deepest area that holds it. Entries are
	// sorted by path, so a folder comes before what is inside it.
	for _, x := range t.entries {
		z := t.Zone(Path{x.Path})
		if z.Allows(op) || !z.Listed() || path.IsAbs(x.Path) {
			continue
		}
		best := -1
		for i, a := range out {
			if a.Path != x.Path && (Path{x.Path}).Within(Path{a.Path}) && (best < 0 || len(a.Path) > len(out[best].Path) || out[best].Path == ".") {
				best = i
			}
		}
		if best < 0 || !t.there(x.Path) {
			continue
		}
		a := &out[best]
		if slices.ContainsFunc(a.Except, func(o string) bool { return (Path{x.Path}).Within(Path{o}) }) {
			continue
		}
		a.Except = append(a.Except, x.Path)
	}
	return out
}

func (t *Table) there(p string) bool {
	return p == "." || t.exists == nil || t.exists(Path{p})
}

// RootOf says what gives p its zone: the configured entry it lies in (the
// longest, as spelled or case-folded), the name pattern that covers it, the
// control path it is in, or the name or path vaultgate keeps for itself —
// the first of these whose own zone is p's zone — for a refusal that names
// where the refused path lies. Its Mode is p's zone; a zero Path when no
// entry covers p.
func (t *Table) RootOf(at Path) Root {
	m := t.Zone(at)
	p := at.p
	if p == "" || path.IsAbs(p) {
		return Root{Mode: m}
	}
	f := fold(p)
	e, inEntry := t.entryOf(p, f)
	if inEntry && e.Mode == m {
		return Root{Path: Path{e.Path}, Mode: m}
	}
	for i := range t.patterns {
		if t.patterns[i].mode == m && t.patterns[i].covers(f) {
			return Root{Path: Path{t.patterns[i].text}, Mode: m, Pattern: true}
		}
	}
	comps := strings.Split(p, "/")
	prefix := func(n int) Path { return Path{strings.Join(comps[:n], "/")} }
	if c := controlCap(f, t.copiesHidden); c != Write && c == m {
		for _, r := range ControlRoots {
			if f == r || strings.HasPrefix(f, r+"/") {
				return Root{Path: prefix(strings.Count(r, "/") + 1), Mode: m, Control: true}
			}
		}
		for i, c := range comps {
			if IsControlName(c) {
				return Root{Path: prefix(i + 1), Mode: m, Control: true}
			}
		}
	}
	for i, c := range comps {
		if IsReserved(c) {
			return Root{Path: prefix(i + 1), Mode: m, Own: true}
		}
	}
	for n := len(comps); n > 0; n-- {
		q := prefix(n)
		if _, ok := t.caps[q.p]; ok {
			return Root{Path: q, Mode: m, Own: true}
		}
		if _, ok := t.capsFold[fold(q.p)]; ok {
			return Root{Path: q, Mode: m, Own: true}
		}
	}
	if inEntry {
		return Root{Path: Path{e.Path}, Mode: m}
	}
	return Root{Mode: m}
}

// entryOf finds the longest configured entry that is p or a folder above
// it, as spelled, else case-folded (f is p folded).
func (t *Table) entryOf(p, f string) (Entry, bool) {
	var best Entry
	found := false
	for _, e := range t.entries {
		if path.IsAbs(e.Path) {
			continue
		}
		if (Path{p}).Within(Path{e.Path}) || (Path{f}).Within(Path{fold(e.Path)}) {
			if !found || len(e.Path) > len(best.Path) || best.Path == "." {
				best, found = e, true
			}
		}
	}
	return best, found
}
