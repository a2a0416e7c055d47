package config

import (
	"cmp"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultgate/vaultgate/zones"
)

// LaterMark ends a zone entry that names a folder expected to appear
// later ("protected = [\".trash?\"]"): it need not be there when a server
// starts. Name patterns take no mark (a ? there matches one character).
const LaterMark = "?"

// zoneSpec is one zone entry as the config wrote it.
type zoneSpec struct {
	key     string // "zones.protected", "agents.bot.zones.hidden"
	written string // as written, without the mark
	path    zones.Path
	mode    zones.Mode
	later   bool
}

// exists says whether p (vault-relative, or absolute outside the vault)
// is there now: for the words of a refusal (zones.Options.Exists).
func (c *Config) exists(p zones.Path) bool {
	_, err := os.Lstat(p.Abs(c.Vault))
	return err == nil
}

// MissingZone is a zone entry of the config that names nothing on the
// disk: no file or folder of exactly that spelling (in NFC; case counts),
// or one reached through a symbolic link, which the zones never see
// (they judge where links lead).
type MissingZone struct {
	Key   string // "zones.protected", "agents.bot.zones.hidden"
	Entry string // as written, without the mark
	Mode  zones.Mode
	// Opens: the entry's zone is stricter than the folder above it, so
	// what it meant to close is open while it names nothing. A server
	// does not start with one (ZonesReady), and doctor calls it a problem.
	// An entry marked expected later (LaterMark) never opens.
	Opens bool
	Later bool   // marked expected later
	Link  string // the symbolic link on the way, if that is why
	// Near are paths that are there, spelled near the entry: another
	// case or Unicode form, or a letter or two off.
	Near []string
}

func (m MissingZone) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %q", m.Key, m.Entry)
	switch {
	case m.Link != "":
		fmt.Fprintf(&b, " passes through the symbolic link %s, and zones are judged where links lead: it covers nothing", m.Link)
	default:
		b.WriteString(" does not exist")
	}
	if m.Opens {
		fmt.Fprintf(&b, ", so it keeps nothing %s", m.Mode)
	}
	if len(m.Near) > 0 {
		q := make([]string, len(m.Near))
		for i, n := range m.Near {
			q[i] = fmt.Sprintf("%q", n)
		}
		fmt.Fprintf(&b, "; did you mean %s?", strings.Join(q, " or "))
	}
	return b.String()
}

// Fix says what to do about a missing entry.
func (m MissingZone) Fix() string {
	switch {
	case m.Link != "":
		return "name the folder the link leads to in [zones] instead"
	case len(m.Near) > 0:
		return fmt.Sprintf("correct the spelling in [zones] (%q?), or end the entry with %s if the folder is to appear later (%q)", m.Near[0], LaterMark, m.Entry+LaterMark)
	}
	return fmt.Sprintf("create the folder, correct its spelling in [zones], or end the entry with %s if it is to appear later (%q)", LaterMark, m.Entry+LaterMark)
}

// MissingZones lists the zone entries of every agent that name nothing on
// the disk now, the top level's first, each once. Name patterns are not
// entries of one path and are never missing; nor is the vault itself, nor
// the config, audit log or state folder (made at the first call).
func (c *Config) MissingZones() []MissingZone {
	var out []MissingZone
	seen := map[string]bool{}
	names := slices.Sorted(mapKeys(c.Agents))
	if i := slices.Index(names, DefaultAgent); i > 0 {
		names = append([]string{DefaultAgent}, slices.Delete(names, i, i+1)...)
	}
	for _, name := range names {
		p := c.Agents[name]
		for _, z := range p.zoneSpecs {
			// Per agent: an agent's zones replace the top level's, so the
			// same entry may be marked expected-later in one table and not
			// in another, or narrow one table and not another.
			key := name + "\x00" + z.path.String() + "\x00" + z.mode.String()
			if z.path.IsRoot() || seen[key] {
				continue
			}
			seen[key] = true
			full := z.path.Abs(c.Vault)
			if full == c.AuditPath || full == c.StateDir || full == c.File {
				continue
			}
			link, missing, near := c.lookFor(z.path)
			if !missing && link == "" {
				continue
			}
			out = append(out, MissingZone{
				Key: z.key, Entry: z.written, Mode: z.mode, Later: z.later, Link: link, Near: near,
				Opens: !z.later && narrows(p.Zones, z),
			})
		}
	}
	return out
}

// ZonesError is a config whose zone entries name nothing, where that
// leaves open what they meant to close (MissingZone.Opens).
type ZonesError struct {
	File    string
	Missing []MissingZone
}

func (e *ZonesError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File + ": ")
	}
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString("\n")
		}
		line := m.String()
		if !strings.HasSuffix(line, "?") {
			line += "."
		}
		b.WriteString(line + " Fix: " + m.Fix() + ".")
	}
	return b.String()
}

// ZonesReady is the one answer to whether a server may start on this
// config's zones: an error naming every entry that names nothing on the
// disk and so leaves open what it meant to close (a typo: protected =
// ["Archve"] keeps Archive/ editable), or nil. Every process that judges
// an agent's calls asks it before it opens the vault (serve, run,
// hook-judge, the hook and exec).
func (c *Config) ZonesReady() error {
	var opens []MissingZone
	for _, m := range c.MissingZones() {
		if m.Opens {
			opens = append(opens, m)
		}
	}
	if len(opens) == 0 {
		return nil
	}
	return &ZonesError{File: c.File, Missing: opens}
}

// narrows reports whether z's zone forbids something the folder above it
// allows: a typo in it then leaves that open.
func narrows(t *zones.Table, z zoneSpec) bool {
	above := t.Zone(z.path.Parent())
	for op := zones.OpRead; op <= zones.OpLink; op++ {
		if above.Allows(op) && !z.mode.Allows(op) {
			return true
		}
	}
	return false
}

// lookFor walks p's components from the vault's root (or "/" for a path
// outside it) as the file system spells them: each must be there in
// exactly that spelling once in NFC. It returns the symbolic link met on
// the way (a zone never covers a path through one), or that a component
// is missing, with the paths spelled near it in the folder where it is
// missing.
func (c *Config) lookFor(p zones.Path) (link string, missing bool, near []string) {
	dir, rel := c.Vault, p.String()
	if p.Outside() {
		dir, rel = "/", strings.TrimPrefix(rel, "/")
	}
	comps := strings.Split(rel, "/")
	for i, want := range comps {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return "", true, nil
		}
		name, found := "", false
		for _, e := range ents {
			if norm.NFC.String(e.Name()) == want {
				name, found = e.Name(), true
				break
			}
		}
		shown := func(n string) string {
			q := append(slices.Clone(comps[:i]), n)
			q = append(q, comps[i+1:]...)
			if p.Outside() {
				return "/" + path.Join(q...)
			}
			return path.Join(q...)
		}
		if !found {
			return "", true, nearNames(want, ents, shown)
		}
		full := filepath.Join(dir, name)
		fi, err := os.Lstat(full)
		if err != nil {
			return "", true, nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			at := path.Join(append(slices.Clone(comps[:i]), name)...)
			if p.Outside() {
				at = "/" + at
			}
			return at, false, nil
		}
		dir = full
	}
	return "", false, nil
}

// nearNames are the names of ents spelled near want — the same once case
// is folded, or at most a letter or two off for a longer name — nearest
// first, at most three, each shown as the entry would be with it.
func nearNames(want string, ents []os.DirEntry, shown func(string) string) []string {
	type cand struct {
		name string
		d    int
	}
	fw := zones.Fold(want)
	limit := 1
	switch n := utf8.RuneCountInString(fw); {
	case n > 10:
		limit = 3
	case n > 4:
		limit = 2
	}
	var cs []cand
	for _, e := range ents {
		fn := zones.Fold(norm.NFC.String(e.Name()))
		d := distance(fw, fn)
		if fn == fw {
			d = 0
		}
		if d <= limit {
			cs = append(cs, cand{e.Name(), d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name)) })
	var out []string
	for i, c := range cs {
		if i == 3 {
			break
		}
		out = append(out, shown(norm.NFC.String(c.name)))
	}
	return out
}

// distance is the edit distance between a and b, in runes: insertions,
// deletions, substitutions and the swap of two neighbours ("Archvie").
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

// mapKeys iterates a map's keys.
func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
