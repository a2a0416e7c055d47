package tools

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// Claude Code runs ripgrep for Glob and Grep: `rg --files --glob PATTERN`
// in the folder Glob searches, `rg --glob GLOB … PATH` for Grep. What the
// hook judges is the folder ripgrep walks, narrowed to the folders the
// globs can reach — read exactly as ripgrep reads them, or the hook would
// judge one folder while ripgrep lists another (`секрет\ы/*` is `секреты/*`
// to ripgrep). This file is that reading and nothing else; hookFind (hook.go)
// turns its folders into effects.
//
// ripgrep's globs are lines of a .gitignore (its ignore crate), compiled by
// globset with a literal separator and backslash escapes:
//   - a glob starting with # is a comment: no glob at all;
//   - trailing white space is dropped unless it ends in an escaped space;
//   - a leading ! makes it exclude (for --glob: ! inverts gitignore's
//     sense), \! and \# are a literal ! and #;
//   - a leading / anchors it and is dropped, a trailing / (or \/) makes it
//     match folders only and is dropped;
//   - a glob with no / left matches a name at any depth (it gets a **/);
//     one with a / matches whole paths, from the folder it is matched from;
//   - \c is the character c, whatever c is; *, ?, [...], {a,b} and ** are
//     wildcards, and * and ? never match a /.
//
// With at least one glob that includes, a file is listed only if it matches
// one; a folder is walked whatever it matches, so an include's literal
// leading components are folders every listed file lies in.

// rgGlobKind is what one ripgrep --glob does to the files a walk lists.
type rgGlobKind int

const (
	rgGlobNone    rgGlobKind = iota // a comment or blank: no glob at all
	rgGlobExclude                   // it only takes files away
	rgGlobInclude                   // a file must match it, or another include, to be listed
)

// rgGlob is one ripgrep --glob, as far as the hook needs it.
type rgGlob struct {
	kind rgGlobKind
	// lead is an include's literal leading components, unescaped, which
	// every path it matches begins with (relative to the folder it is
	// matched from); the last one is the whole name when the glob has no
	// wildcard at all. Empty when it matches at any depth or starts with a
	// wildcard. raw is each of them as written (Claude Code compares
	// those, below).
	lead, raw []string
}

// parseRgGlob reads one glob as ripgrep does.
func parseRgGlob(g string) rgGlob {
	if strings.HasPrefix(g, "#") {
		return rgGlob{}
	}
	if !strings.HasSuffix(g, `\ `) {
		g = strings.TrimRightFunc(g, unicode.IsSpace) // Rust's trim_end: White_Space, as unicode.IsSpace
	}
	if g == "" {
		return rgGlob{}
	}
	anchored := false
	if strings.HasPrefix(g, `\!`) || strings.HasPrefix(g, `\#`) {
		g = g[1:]
	} else {
		if strings.HasPrefix(g, "!") {
			return rgGlob{kind: rgGlobExclude}
		}
		g, anchored = strings.CutPrefix(g, "/")
	}
	if rest, ok := strings.CutSuffix(g, "/"); ok {
		g = strings.TrimSuffix(rest, `\`)
	}
	include := rgGlob{kind: rgGlobInclude}
	if !anchored && !strings.Contains(g, "/") {
		return include // a name at any depth
	}
	var name, spelled strings.Builder
	for i := 0; i < len(g); {
		r, size := utf8.DecodeRuneInString(g[i:])
		switch {
		case r == '\\':
			if i+size == len(g) {
				return include // a dangling escape: ripgrep refuses the glob
			}
			e, esize := utf8.DecodeRuneInString(g[i+size:])
			if e == '/' {
				// an escaped separator still separates; rare enough to
				// stop narrowing at
				return include
			}
			name.WriteString(g[i+size : i+size+esize])
			spelled.WriteString(g[i : i+size+esize])
			i += size + esize
		case r == '/':
			include.lead = append(include.lead, name.String())
			include.raw = append(include.raw, spelled.String())
			name.Reset()
			spelled.Reset()
			i += size
		case strings.ContainsRune("*?[]{}", r):
			// a wildcard, a class or braces: this component is not one
			// name, so the folders above it are all that is known
			return include
		default:
			name.WriteString(g[i : i+size])
			spelled.WriteString(g[i : i+size])
			i += size
		}
	}
	// no wildcard at all: the glob names one path
	include.lead = append(include.lead, name.String())
	include.raw = append(include.raw, spelled.String())
	return include
}

// rgReach returns the folders (and files) that hold every path ripgrep
// lists when it walks the folder dir (absolute, as Claude Code spells it)
// with globs: dir itself unless every glob that includes names literal
// leading folders, and then those below dir.
//
// ripgrep matches a glob from its own working folder, which is not always
// dir: Claude Code starts it in dir (the ripgrep of its own, on Linux) or
// in the session's folder with dir as an argument (a ripgrep found on
// PATH), and before that it drops leading components of a relative Glob
// pattern that repeat the end of dir (`notes/x/*` searched in .../notes is
// `x/*` there, unless a folder notes/notes exists). So for each include
// the hook takes every folder it could mean, from dir or from any folder
// above it: dir/lead; dir/lead minus the first n components, where those
// equal the last n of dir (as written, as Claude Code compares them, or
// unescaped, as ripgrep matches them); and dir whole, where lead runs
// along dir's own components, so a folder above dir is matched whole.
func rgReach(dir string, globs []string) []string {
	var includes []rgGlob
	for _, g := range globs {
		pg := parseRgGlob(g)
		if pg.kind != rgGlobInclude {
			continue
		}
		if len(pg.lead) == 0 {
			return []string{dir}
		}
		includes = append(includes, pg)
	}
	if len(includes) == 0 {
		return []string{dir} // no include: every file not excluded
	}
	var comps []string
	if d := strings.Trim(path.Clean(dir), "/"); d != "" {
		comps = strings.Split(d, "/")
	}
	var out []string
	add := func(lead []string) {
		p := path.Join(append([]string{dir}, lead...)...)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, g := range includes {
		add(g.lead)
		for n := 1; n <= len(g.lead) && n <= len(comps); n++ {
			if g.names(comps[len(comps)-n:]) {
				add(g.lead[n:])
			}
		}
		for j := len(g.lead); j <= len(comps); j++ {
			if slices.Equal(g.lead, comps[j-len(g.lead):j]) {
				add(nil)
			}
		}
	}
	return out
}

// names says the glob's first len(comps) components name comps, as
// written or unescaped.
func (g rgGlob) names(comps []string) bool {
	for i, c := range comps {
		if g.lead[i] != c && g.raw[i] != c {
			return false
		}
	}
	return true
}

// claudeGlobBase splits an absolute Glob pattern as Claude Code does: the
// folder it searches instead of path (the pattern up to the last / before
// its first *, ?, [ or {, escapes not read) and the glob ripgrep matches
// there. A pattern with none of them is split into its dirname and
// basename. ok is false for a relative pattern, matched from path.
func claudeGlobBase(pattern string) (dir, glob string, ok bool) {
	if !strings.HasPrefix(pattern, "/") {
		return "", "", false
	}
	i := strings.IndexAny(pattern, "*?[{")
	if i < 0 {
		t := strings.TrimRight(pattern, "/") // as node's dirname and basename
		if t == "" {
			return "/", "", true
		}
		return path.Dir(t), path.Base(t), true
	}
	j := strings.LastIndex(pattern[:i], "/")
	if j == 0 {
		return "/", pattern[1:], true
	}
	return pattern[:j], pattern[j+1:], true
}

// claudeGrepGlobs splits Grep's glob field as Claude Code does before it
// hands each part to ripgrep as a --glob: at white space, then each word
// at commas unless it holds braces ("*.{ts,tsx}" stays one).
func claudeGrepGlobs(field string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(field, jsSpace) {
		if strings.Contains(w, "{") && strings.Contains(w, "}") {
			out = append(out, w)
			continue
		}
		for _, g := range strings.Split(w, ",") {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// jsSpace is JavaScript's white space (\s, and what trim removes), which
// differs from Go's unicode.IsSpace in U+0085 and U+FEFF.
func jsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// A read of a whole folder that no wall confines — Claude Code's Glob and
// Grep above all, whose ripgrep lists and reads every file there, hidden
// ones too — reaches whatever the name patterns of the zones cover inside
// it. A pattern ("**/.env") could match anywhere, so judged by the table
// alone it would refuse every such read of every folder; instead the
// planner looks at what is there now and the zones rule judges each path
// it found (policy.Effect.Found). This is that look, for every plan (Set.Plan).

// maxFoundWalk bounds the walk of a folder for what name patterns cover,
// where the wall's index of names can't answer: past it the read is
// judged as if a pattern matched inside (fail closed).
const maxFoundWalk = 200_000

// errFoundWalk is a folder too large to look through.
var errFoundWalk = errors.New("tools: too many entries to look for what name patterns cover")

// findCovered fills in Found on each read of a whole folder in the vault
// that no wall confines, when a name pattern of the zones hides something.
// A folder it can't look through keeps Found nil, and the pattern refuses
// the read.
func (s *Set) findCovered(effects []policy.Effect) {
	if s.Zones == nil || !hidesByName(s.Zones) {
		return
	}
	for i := range effects {
		e := &effects[i]
		if e.Op != zones.OpRead || !e.Subtree || e.Confined || e.Unknown || e.Path.IsZero() || e.Path.Outside() {
			continue
		}
		if paths, err := s.coveredUnder(e.Path); err == nil {
			e.Found = &policy.Found{Paths: paths}
		}
	}
}

// hidesByName reports whether a name pattern of t covers paths that may
// not be read: only then can a read of a folder meet one.
func hidesByName(t *zones.Table) bool {
	for _, r := range t.Patterns() {
		if !r.Mode.Allows(zones.OpRead) {
			return true
		}
	}
	return false
}

// coveredUnder is what the name patterns cover inside the folder dir now:
// from the wall's index of names, which a server keeps exact
// (sandbox.NameIndex; it looks inside a control folder that may be read,
// such as .claude, and not inside one that may not), else by walking dir
// through the vault's file system without following a link.
func (s *Set) coveredUnder(dir zones.Path) ([]zones.Path, error) {
	seen := 0
	if x := s.Vault.Names; x != nil {
		if named, err := x.CoveredUnder(s.Zones, dir); err == nil {
			var out []zones.Path
			for _, p := range named {
				if s.Zones.PatternCovers(p) {
					out = append(out, p)
				}
			}
			return out, nil
		}
	}
	st, err := statOf(s.Vault.lstat(dir.String()))
	if err != nil {
		return nil, err
	}
	if !st.exists || !st.dir || st.symlink {
		return nil, nil // ripgrep walks no folder there
	}
	return s.walkCovered(dir.String(), dir, &seen)
}

// walkCovered walks the folder disk (as the file system spells it; at as
// the zones do) for what the name patterns cover, none inside another.
func (s *Set) walkCovered(disk string, at zones.Path, seen *int) ([]zones.Path, error) {
	d, err := s.Vault.Fs.Open(disk)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for {
		batch, err := d.Readdirnames(256)
		names = append(names, batch...)
		if *seen += len(batch); *seen > maxFoundWalk {
			d.Close()
			return nil, errFoundWalk
		}
		if err == io.EOF || err == nil && len(batch) == 0 {
			break
		}
		if err != nil {
			d.Close()
			return nil, err
		}
	}
	d.Close()
	slices.Sort(names)
	var out []zones.Path
	for _, name := range names {
		child, err := at.Child(name)
		if err != nil {
			return nil, err
		}
		if s.Zones.PatternCovers(child) {
			out = append(out, child)
			continue
		}
		p := path.Join(disk, name)
		st, err := statOf(s.Vault.lstat(p))
		if err != nil {
			return nil, err
		}
		if !st.dir || st.symlink || !s.Zones.Zone(child).Allows(zones.OpRead) {
			continue // a file, a link ripgrep does not follow, or a folder the read can't be of
		}
		more, err := s.walkCovered(p, child, seen)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}
