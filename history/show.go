package history

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// maxDiffBody is the largest body diff reads; a bigger one is told by a line.
const maxDiffBody = 8 << 20

// Diff writes a unified diff of each text file one call changed, and a
// line for each binary one, a link or anything else.
func (s *Store) Diff(w io.Writer, id string) error {
	es, err := s.Call(id)
	if err != nil {
		return err
	}
	for _, e := range es {
		for _, f := range files(e.Path, e.Before, e.After) {
			if err := s.diffFile(w, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileChange is one file of a change, a folder's opened into its files.
type fileChange struct {
	path          string
	before, after TreeEntry // Kind "" when absent
}

func files(p string, before, after State) []fileChange {
	flat := func(st State) map[string]TreeEntry {
		m := map[string]TreeEntry{}
		if !st.Exists {
			return m
		}
		if st.Kind != KindDir {
			m[p] = TreeEntry{Path: p, Kind: st.Kind, Mode: st.Mode, Size: st.Size, SHA256: st.SHA256, Target: st.Target}
			return m
		}
		for _, e := range st.Tree {
			if e.Kind != KindDir {
				e.Path = path.Join(p, e.Path)
				m[e.Path] = e
			}
		}
		return m
	}
	b, a := flat(before), flat(after)
	var names []string
	for n := range b {
		names = append(names, n)
	}
	for n := range a {
		if _, ok := b[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []fileChange
	for _, n := range names {
		if b[n] != a[n] {
			out = append(out, fileChange{path: n, before: b[n], after: a[n]})
		}
	}
	return out
}

func (s *Store) diffFile(w io.Writer, f fileChange) error {
	if (f.before.Kind != "" && f.before.Kind != KindFile) || (f.after.Kind != "" && f.after.Kind != KindFile) {
		_, err := fmt.Fprintf(w, "%s: %s -> %s\n", f.path, describe(f.before), describe(f.after))
		return err
	}
	old, oldText, err := s.body(f.before)
	if err != nil {
		return err
	}
	cur, curText, err := s.body(f.after)
	if err != nil {
		return err
	}
	if !oldText || !curText {
		_, err := fmt.Fprintf(w, "Binary file %s changed (%s -> %s)\n", f.path, describe(f.before), describe(f.after))
		return err
	}
	nameA, nameB := "a/"+f.path, "b/"+f.path
	if f.before.Kind == "" {
		nameA = "/dev/null"
	}
	if f.after.Kind == "" {
		nameB = "/dev/null"
	}
	d := Unified(old, cur, nameA, nameB, 3)
	if d == "" && f.before.Mode != f.after.Mode {
		d = fmt.Sprintf("%s: mode %o -> %o\n", f.path, f.before.Mode, f.after.Mode)
	}
	_, err = io.WriteString(w, d)
	return err
}

// body reads a kept file; text is false for a body that is not UTF-8
// text, or too big to diff.
func (s *Store) body(e TreeEntry) (string, bool, error) {
	if e.Kind == "" {
		return "", true, nil
	}
	if e.Size > maxDiffBody {
		return "", false, nil
	}
	f, err := s.Blob(e.SHA256)
	if err != nil {
		return "", false, fmt.Errorf("the kept body of %s: %w", e.Path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "", false, err
	}
	return string(data), bytes.IndexByte(data, 0) < 0 && utf8.Valid(data), nil
}

func describe(e TreeEntry) string {
	switch e.Kind {
	case "":
		return "absent"
	case KindFile:
		return fmt.Sprintf("%d bytes", e.Size)
	case KindSymlink:
		return "link to " + e.Target
	}
	return e.Kind
}

// Size is how a state reads in a listing: bytes, or "-" when absent.
func (st State) SizeText() string {
	switch {
	case !st.Exists:
		return "-"
	case st.Kind == KindDir:
		return fmt.Sprintf("%d/", st.Size)
	case st.Kind == KindSymlink:
		return "->" + strings.ReplaceAll(st.Target, " ", "\\ ")
	}
	return fmt.Sprint(st.Size)
}
