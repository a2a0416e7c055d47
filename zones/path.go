package zones

import (
	"errors"
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Path errors. They are values so callers can tell bad input from a denial.
var (
	ErrEmptyPath = errors.New("empty path")
	ErrNULInPath = errors.New("path contains a NUL byte")
	ErrBadName   = errors.New("not a single file name")
)

// Path is a path in the form Table.Zone judges: vault-relative ("." is the
// root) or absolute outside the vault, cleaned, in NFC. Only Normalize and
// the methods below make one, so no path reaches the zone table unjudged
// by its spelling ("notes/../мета/x" is мета/x). The zero Path is no path:
// it is in no zone.
type Path struct{ p string }

// VaultRoot is the vault root.
func VaultRoot() Path { return Path{"."} }

// Normalize turns a path as a caller wrote it into a Path: "." and ".."
// resolved lexically, then against the vault root; absolute paths inside
// the vault made relative; NFC. A relative path that climbs out
// ("notes/../../x") comes back absolute and outside. vault must be
// absolute and cleaned.
func Normalize(vault, p string) (Path, error) {
	if p == "" {
		return Path{}, ErrEmptyPath
	}
	if strings.IndexByte(p, 0) >= 0 {
		return Path{}, ErrNULInPath
	}
	if !norm.NFC.IsNormalString(p) {
		p = norm.NFC.String(p)
	}
	if !norm.NFC.IsNormalString(vault) {
		vault = norm.NFC.String(vault)
	}
	if !path.IsAbs(p) {
		p = path.Join(vault, p)
	} else {
		p = path.Clean(p)
	}
	switch {
	case p == vault:
		return VaultRoot(), nil
	case vault == "/":
		return Path{p[1:]}, nil
	case strings.HasPrefix(p, vault) && p[len(vault)] == '/':
		return Path{p[len(vault)+1:]}, nil
	}
	return Path{p}, nil
}

// String returns the path as Normalize made it.
func (p Path) String() string { return p.p }

// MarshalText makes a Path print as its string in JSON.
func (p Path) MarshalText() ([]byte, error) { return []byte(p.p), nil }

// IsZero reports whether p is no path at all.
func (p Path) IsZero() bool { return p.p == "" }

// IsRoot reports whether p is the vault root.
func (p Path) IsRoot() bool { return p.p == "." }

// Outside reports whether p lies outside the vault.
func (p Path) Outside() bool { return strings.HasPrefix(p.p, "/") }

// Abs returns p as an absolute path on the host, for the vault at vault.
func (p Path) Abs(vault string) string {
	if p.Outside() {
		return p.p
	}
	return path.Join(vault, p.p)
}

// Base returns p's last component ("." for the root, "/" for the host's).
func (p Path) Base() string { return path.Base(p.p) }

// Parent returns the folder p is in. The vault root and "/" are their own
// parents.
func (p Path) Parent() Path {
	if p.IsZero() {
		return p
	}
	return Path{path.Dir(p.p)}
}

// Child returns the path of name inside p. name is one component as a
// folder lists it: not empty, ".", "..", nor anything with a '/' or a NUL,
// so a Child never climbs or lands elsewhere.
func (p Path) Child(name string) (Path, error) {
	switch {
	case p.IsZero():
		return Path{}, ErrEmptyPath
	case name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0:
		return Path{}, ErrBadName
	case strings.IndexByte(name, 0) >= 0:
		return Path{}, ErrNULInPath
	}
	if !norm.NFC.IsNormalString(name) {
		name = norm.NFC.String(name)
	}
	switch p.p {
	case ".":
		return Path{name}, nil
	case "/":
		return Path{"/" + name}, nil
	}
	return Path{p.p + "/" + name}, nil
}

// Within reports whether p is q or lies below it, component by component.
func (p Path) Within(q Path) bool {
	switch {
	case p.IsZero() || q.IsZero():
		return false
	case q.IsRoot():
		return !p.Outside()
	case q.p == "/":
		return p.Outside()
	}
	return p.p == q.p || strings.HasPrefix(p.p, q.p+"/")
}
