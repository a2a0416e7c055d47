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
)

// Normalize turns a path as a caller wrote it into the form Table.Zone takes:
// "." and ".." resolved lexically, then against the vault root; absolute
// paths inside the vault made relative; NFC. inside reports whether the
// result lies in the vault. A relative path that climbs out ("notes/../../x")
// comes back absolute and outside. vault must be absolute and cleaned.
func Normalize(vault, p string) (rel string, inside bool, err error) {
	if p == "" {
		return "", false, ErrEmptyPath
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", false, ErrNULInPath
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
		return ".", true, nil
	case vault == "/":
		return p[1:], true, nil
	case strings.HasPrefix(p, vault) && p[len(vault)] == '/':
		return p[len(vault)+1:], true, nil
	}
	return p, false, nil
}

// Abs returns the absolute form of a path that Normalize returned.
func Abs(vault, p string) string {
	if path.IsAbs(p) {
		return p
	}
	return path.Join(vault, p)
}
