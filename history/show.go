package history

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vaultgate/vaultgate/visible"
)

// maxDiffBody is the largest body diff reads; a bigger one is told by a line.
const maxDiffBody = 8 << 20

// Diff writes a unified diff of each text file one call changed, and a
// line for each binary one, a link, a moved file or anything else: each
// file once, in path order, however many of the call's entries hold it.
// It is written for a person to read on a terminal: every name and link
// target through visible.Line, every line of a file through
// visible.Block, so a note can't steer the terminal that shows its diff
// (DiffRaw writes the bytes as they are).
func (s *Store) Diff(w io.Writer, id string) error {
	return s.diff(w, id, false)
}

// DiffRaw is Diff with names and lines as they are, escaped not at all:
// for a person who asked for the bytes (vaultgate diff --raw).
func (s *Store) DiffRaw(w io.Writer, id string) error {
	return s.diff(w, id, true)
}

func (s *Store) diff(w io.Writer, id string, raw bool) error {
	es, err := s.Call(id)
	if err != nil {
		return err
	}
	for _, f := range callFiles(es) {
		if err := s.diffFile(w, f, raw); err != nil {
			return err
		}
	}
	return nil
}

// fileChange is one file of a call's change, a folder's opened into its
// files: its state before and after the call as a whole.
type fileChange struct {
	path          string
	before, after TreeEntry // Kind "" when absent
	// from is where a moved file was: the call removed a file of the
	// same kind and content there (before is that file's state).
	from string
	// entry is the index of the deepest of the call's entries that holds
	// the file, which the panel shows it under.
	entry int
}

// flatten is a state's files (everything but folders) by their path
// under p.
func flatten(p string, st State) map[string]TreeEntry {
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

// callFiles is what one call did to each file, in path order. A call's
// entries may overlap (a new folder and the file in it, a move's
// folders): a file's state before the call is the first entry's that
// holds it, after the call the last one's, so each file is told once. A
// file that went from one path and came, the same, to another is one
// moved file.
func callFiles(es []Entry) []fileChange {
	befores, afters := make([]map[string]TreeEntry, len(es)), make([]map[string]TreeEntry, len(es))
	byPath := map[string][]int{} // the entries of each path, in order
	var names []string
	seen := map[string]bool{}
	for i, e := range es {
		befores[i], afters[i] = flatten(e.Path, e.Before), flatten(e.Path, e.After)
		byPath[e.Path] = append(byPath[e.Path], i)
		for _, m := range []map[string]TreeEntry{befores[i], afters[i]} {
			for n := range m {
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	sort.Strings(names)
	var out []fileChange
	for _, n := range names {
		// the entries holding n: n's own and its folders', deepest first
		var holders []int
		for d := n; ; d = path.Dir(d) {
			holders = append(holders, byPath[d]...)
			if path.Dir(d) == d { // "." (the vault) is above every path
				break
			}
		}
		first, last := holders[0], holders[0]
		for _, i := range holders {
			first, last = min(first, i), max(last, i)
		}
		f := fileChange{path: n, before: befores[first][n], after: afters[last][n], entry: holders[0]}
		if f.before != f.after {
			out = append(out, f)
		}
	}
	return pairMoves(out)
}

// pairMoves joins each file the changes removed with one they created of
// the same kind and content (the same name first), as a moved file.
func pairMoves(changes []fileChange) []fileChange {
	type body struct{ kind, sha, target string }
	gone := map[body][]int{}
	for i, f := range changes {
		if f.before.Kind != "" && f.after.Kind == "" {
			b := body{f.before.Kind, f.before.SHA256, f.before.Target}
			gone[b] = append(gone[b], i)
		}
	}
	if len(gone) == 0 {
		return changes
	}
	taken := map[int]bool{}
	for i := range changes {
		f := &changes[i]
		if f.before.Kind != "" || f.after.Kind == "" {
			continue
		}
		pick := -1
		for _, j := range gone[body{f.after.Kind, f.after.SHA256, f.after.Target}] {
			if taken[j] {
				continue
			}
			if pick < 0 {
				pick = j
			}
			if path.Base(changes[j].path) == path.Base(f.path) {
				pick = j
				break
			}
		}
		if pick >= 0 {
			taken[pick] = true
			f.from, f.before = changes[pick].path, changes[pick].before
		}
	}
	out := changes[:0:0]
	for i, f := range changes {
		if !taken[i] {
			out = append(out, f)
		}
	}
	return out
}

// diffFile writes one file's change: each name and link target through
// visible.Line and each of its lines through visible.Block, or, when raw,
// as they are.
func (s *Store) diffFile(w io.Writer, f fileChange, raw bool) error {
	name := visible.Line.Unless(raw).Escape
	if f.from != "" {
		line := fmt.Sprintf("moved %s -> %s", name(f.from), name(f.path))
		if f.before.Mode != f.after.Mode {
			line += fmt.Sprintf(" (mode %o -> %o)", f.before.Mode, f.after.Mode)
		}
		_, err := fmt.Fprintln(w, line)
		return err
	}
	if (f.before.Kind != "" && f.before.Kind != KindFile) || (f.after.Kind != "" && f.after.Kind != KindFile) {
		_, err := fmt.Fprintf(w, "%s: %s -> %s\n", name(f.path), name(describe(f.before)), name(describe(f.after)))
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
		_, err := fmt.Fprintf(w, "Binary file %s changed (%s -> %s)\n", name(f.path), name(describe(f.before)), name(describe(f.after)))
		return err
	}
	nameA, nameB := "a/"+name(f.path), "b/"+name(f.path)
	if f.before.Kind == "" {
		nameA = "/dev/null"
	}
	if f.after.Kind == "" {
		nameB = "/dev/null"
	}
	d := unified(old, cur, nameA, nameB, 3, visible.Block.Unless(raw))
	if d == "" && f.before.Mode != f.after.Mode {
		d = fmt.Sprintf("%s: mode %o -> %o\n", name(f.path), f.before.Mode, f.after.Mode)
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
