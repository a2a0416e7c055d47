package zones

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// A zone entry may be a name pattern instead of a path: one with a '*' in
// it, or starting with "**/". Like a gitignore line, a pattern without a
// '/' (after a leading "**/") matches a name at any depth, "**/.env" and
// ".env" alike; one with a '/' inside is anchored at the vault's root,
// where "**" stands for any number of folders. Each part is matched as
// path.Match matches a name ('*', '?', '[...]', '\' escapes), on the
// case-folded spelling, so ".ENV" is ".env". A pattern that matches a
// folder covers everything in it.
//
// A pattern only ever narrows: where a pattern and a folder entry both
// cover a path the stricter zone applies, and a path no folder entry
// covers stays in no zone. So `hidden = ["**/.env"]` hides every .env
// wherever it is, and no pattern can open what the folders keep shut.

// IsPattern reports whether a zone entry is a name pattern.
func IsPattern(entry string) bool { return strings.Contains(entry, "*") }

// pattern is a compiled name pattern.
type pattern struct {
	text     string   // as configured
	parts    []string // folded, NFC
	anyDepth bool     // a name matched at any depth
	mode     Mode
}

// errPattern is a pattern that can't be a zone entry.
var errPattern = errors.New("zones: bad name pattern")

func compilePattern(text string, mode Mode) (pattern, error) {
	p := pattern{text: text, mode: mode}
	s := strings.TrimPrefix(text, "**/")
	if s == "" || path.IsAbs(text) || strings.HasSuffix(s, "/") {
		return p, fmt.Errorf("%w %q: give a name (\"**/.env\") or a vault-relative pattern (\"notes/**/*.tmp\")", errPattern, text)
	}
	p.anyDepth = !strings.Contains(s, "/")
	if !p.anyDepth {
		s = text // anchored: a leading "**/" stays a part
	}
	for _, part := range strings.Split(s, "/") {
		switch {
		case part == "" || part == "." || part == "..":
			return p, fmt.Errorf("%w %q: %q can't be a part of it", errPattern, text, part)
		case part != "**":
			if _, err := path.Match(part, ""); err != nil {
				return p, fmt.Errorf("%w %q: %v", errPattern, text, err)
			}
		}
		p.parts = append(p.parts, fold(norm.NFC.String(part)))
	}
	return p, nil
}

// covers reports whether the pattern matches f (folded, vault-relative)
// or a folder above it.
func (p *pattern) covers(f string) bool {
	if path.IsAbs(f) || f == "." {
		return false
	}
	if p.anyDepth {
		for f != "" {
			name, rest, _ := strings.Cut(f, "/")
			if ok, _ := path.Match(p.parts[0], name); ok {
				return true
			}
			f = rest
		}
		return false
	}
	return matchPrefix(p.parts, f)
}

// matchPrefix reports whether parts match the first components of f (so
// f is what they name, or inside it).
func matchPrefix(parts []string, f string) bool {
	if len(parts) == 0 {
		return true
	}
	if f == "" {
		return false
	}
	name, rest, _ := strings.Cut(f, "/")
	if parts[0] == "**" {
		// none of f's folders, or this one and maybe more
		return matchPrefix(parts[1:], f) || matchPrefix(parts, rest)
	}
	ok, _ := path.Match(parts[0], name)
	return ok && matchPrefix(parts[1:], rest)
}

// matchWhole reports whether parts match all of f's components.
// As in matchPrefix, a trailing "**" needs a name to stand for: "a/**"
// names what is inside a, not a.
func matchWhole(parts []string, f string) bool {
	if f == "" || len(parts) == 0 {
		return f == "" && len(parts) == 0
	}
	name, rest, _ := strings.Cut(f, "/")
	if parts[0] == "**" {
		// none of f's names, this one alone, or this one and more
		return matchWhole(parts[1:], f) || matchWhole(parts[1:], rest) || matchWhole(parts, rest)
	}
	ok, _ := path.Match(parts[0], name)
	return ok && matchWhole(parts[1:], rest)
}

// couldMatchBelow reports whether the pattern could match a path inside
// the folder f (folded, vault-relative; "." is the root), for a judgement
// of a whole folder: a name at any depth could be anywhere.
func (p *pattern) couldMatchBelow(f string) bool {
	if p.anyDepth || f == "." {
		return true
	}
	parts := p.parts
	for f != "" {
		if len(parts) == 0 || parts[0] == "**" {
			return true
		}
		name, rest, _ := strings.Cut(f, "/")
		if ok, _ := path.Match(parts[0], name); !ok {
			return false
		}
		parts, f = parts[1:], rest
	}
	return true
}
