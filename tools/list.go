package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

const (
	maxListDepth   = 10
	maxListEntries = 5000
	defaultResults = 100
	maxResults     = 1000
	maxLineShown   = 300 // characters of a matching line shown
	sniffBytes     = 8000
)

// Entry is one line of list's structured result.
type Entry struct {
	Path string `json:"path"`
	Type string `json:"type"` // file, folder, symlink, other
	Size int64  `json:"size,omitempty"`
	Zone string `json:"zone"`
}

func planList(s *Set, a args) (*Plan, error) {
	p, err := s.folderArg(a)
	if err != nil {
		return nil, err
	}
	depth := a.integer("depth", 1)
	if depth < 1 || depth > maxListDepth {
		return nil, a.bad("depth", say.ArgRange{Min: 1, Max: maxListDepth})
	}
	e, err := s.readEffect(p)
	if err != nil {
		return nil, err
	}
	real := e.Path
	return &Plan{
		Effects: []policy.Effect{e},
		Run:     func(context.Context) (*Result, error) { return s.runList(real, depth) },
	}, nil
}

func (s *Set) runList(root zones.Path, depth int) (*Result, error) {
	if root.Outside() {
		return nil, s.fail(say.OutsideVault{Path: root.String()})
	}
	st, err := s.stat(root)
	if err != nil {
		return nil, err
	}
	if !st.exists {
		return nil, s.fail(say.NotFound{Path: root.String()})
	}
	if !st.dir {
		return nil, s.fail(say.NotFolder{Path: root.String()})
	}
	entries := []Entry{}
	truncated := false
	// dir is the folder as the file system spells it, at as the zones
	// judge it.
	var walk func(dir string, at zones.Path, level int) error
	walk = func(dir string, at zones.Path, level int) error {
		names, err := readDirNames(s.Vault.Fs, dir, -1)
		if err != nil {
			return s.osFail(dir, err)
		}
		slices.Sort(names)
		for _, name := range names {
			if strings.HasPrefix(name, tempPrefix) {
				continue
			}
			p := path.Join(dir, name)
			child, err := at.Child(name)
			if err != nil {
				return err
			}
			z := s.Zones.Zone(child)
			if !z.Listed() {
				continue // hidden and no-zone paths are not there
			}
			if len(entries) >= maxListEntries {
				truncated = true
				return nil
			}
			est, err := statOf(s.Vault.lstat(p))
			if err != nil {
				return err
			}
			e := Entry{Path: p, Zone: z.String(), Type: "other"}
			switch {
			case est.dir:
				e.Type = "folder"
			case est.symlink:
				e.Type = "symlink"
			case est.regular:
				e.Type, e.Size = "file", est.fi.Size()
			}
			entries = append(entries, e)
			if est.dir && level < depth {
				if err := walk(p, child, level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root.String(), root, 1); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  [%s: %s]\n", displayDir(root.String()), s.Zones.Zone(root), s.say(say.ZoneAllows{Mode: s.Zones.Zone(root)}))
	if len(entries) == 0 {
		b.WriteString(s.say(say.EmptyFolder{Path: root.String()}))
		b.WriteByte('\n')
	}
	for _, e := range entries {
		switch e.Type {
		case "folder":
			fmt.Fprintf(&b, "%s/  [%s]\n", e.Path, e.Zone)
		case "file":
			fmt.Fprintf(&b, "%s  %d B  [%s]\n", e.Path, e.Size, e.Zone)
		case "symlink":
			fmt.Fprintf(&b, "%s@  [%s]\n", e.Path, e.Zone)
		default:
			fmt.Fprintf(&b, "%s  (%s)  [%s]\n", e.Path, e.Type, e.Zone)
		}
	}
	out := map[string]any{"folder": displayDir(root.String()), "zone": s.Zones.Zone(root).String(),
		"entries": entries, "truncated": truncated}
	if truncated {
		note := s.say(say.MoreEntries{Max: maxListEntries})
		b.WriteString(note + "\n")
		out["note"] = note
	}
	names := []string{s.Zones.Zone(root).String()}
	for _, e := range entries {
		names = append(names, e.Zone)
	}
	out["zones"] = s.zoneLegend(names...)
	return &Result{Text: b.String(), Structured: out}, nil
}

func displayDir(p string) string {
	if p == "." {
		return "./"
	}
	return p + "/"
}

// Match is one line of search's structured result.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

func planSearch(s *Set, a args) (*Plan, error) {
	p, err := s.folderArg(a)
	if err != nil {
		return nil, err
	}
	e, err := s.readEffect(p)
	if err != nil {
		return nil, err
	}
	real := e.Path
	query := a.str("query")
	if query == "" {
		return nil, a.bad("query", say.ArgEmpty{})
	}
	var re *regexp.Regexp
	if a.boolean("regex") {
		if re, err = regexp.Compile(query); err != nil {
			return nil, a.bad("query", say.ArgBadRegex{Problem: err.Error()})
		}
	}
	glob := a.str("glob")
	if glob != "" {
		if _, err := path.Match(glob, ""); err != nil {
			return nil, a.bad("glob", say.ArgBadPattern{})
		}
	}
	limit := a.integer("max_results", defaultResults)
	if limit < 1 || limit > maxResults {
		return nil, a.bad("max_results", say.ArgRange{Min: 1, Max: maxResults})
	}
	q := []byte(query)
	match := func(line []byte) bool { return bytes.Contains(line, q) }
	if re != nil {
		match = re.Match
	}
	return &Plan{
		Effects: []policy.Effect{e},
		Run: func(ctx context.Context) (*Result, error) {
			return s.runSearch(ctx, real, glob, match, limit)
		},
	}, nil
}

func (s *Set) runSearch(ctx context.Context, root zones.Path, glob string, match func([]byte) bool, limit int) (*Result, error) {
	if root.Outside() {
		return nil, s.fail(say.OutsideVault{Path: root.String()})
	}
	st, err := s.stat(root)
	if err != nil {
		return nil, err
	}
	if !st.exists {
		return nil, s.fail(say.NotFound{Path: root.String()})
	}
	matches := []Match{}
	full := false
	// One reader for every file: a vault has many small notes, and a
	// buffer each would cost more than the reading.
	br := bufio.NewReaderSize(nil, 64<<10)
	lr := newLineReader(br)
	var b strings.Builder
	searchFile := func(p string) error {
		if glob != "" && !globMatch(glob, p) {
			return nil
		}
		f, err := s.Vault.Fs.Open(p)
		if err != nil {
			return nil // vanished or unreadable: not a match
		}
		defer f.Close()
		br.Reset(f)
		head, _ := br.Peek(sniffBytes)
		if slices.Contains(head, 0) {
			return nil // binary
		}
		for n := 1; ; n++ {
			line, err := lr.next()
			if len(line) > 0 && match(line) {
				text := strings.TrimRight(string(line), "\r\n")
				if len([]rune(text)) > maxLineShown {
					text = string([]rune(text)[:maxLineShown]) + "…"
				}
				matches = append(matches, Match{Path: p, Line: n, Text: text})
				fmt.Fprintf(&b, "%s:%d: %s\n", p, n, text)
				if len(matches) >= limit {
					full = true
					return io.EOF
				}
			}
			if err != nil {
				return nil
			}
		}
	}
	var walk func(dir string, at zones.Path) error
	walk = func(dir string, at zones.Path) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := s.Vault.Fs.Open(dir)
		if err != nil {
			return nil
		}
		infos, err := d.Readdir(-1) // lstat'ed: links are seen as links
		d.Close()
		if err != nil {
			return nil
		}
		slices.SortFunc(infos, func(a, b fs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
		for _, fi := range infos {
			name := fi.Name()
			p := path.Join(dir, name)
			child, err := at.Child(name)
			if err != nil || !s.Zones.Zone(child).Listed() || strings.HasPrefix(name, tempPrefix) {
				continue
			}
			switch {
			case fi.IsDir():
				err = walk(p, child)
			case fi.Mode().Type() == 0:
				err = searchFile(p)
			default:
				continue // symlinks and devices are not followed
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if st.dir {
		err = walk(root.String(), root)
	} else if st.regular && s.Zones.Zone(root).Listed() {
		err = searchFile(root.String())
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(matches) == 0 {
		b.WriteString(s.say(say.NoMatches{}))
		b.WriteByte('\n')
	}
	out := map[string]any{"matches": matches, "truncated": full}
	if full {
		note := s.say(say.MoreResults{Max: limit})
		b.WriteString(note + "\n")
		out["note"] = note
	}
	return &Result{Text: b.String(), Structured: out}, nil
}

func globMatch(glob, p string) bool {
	target := path.Base(p)
	if strings.Contains(glob, "/") {
		target = p
	}
	ok, _ := path.Match(glob, target)
	return ok
}

// folderArg reads list's and search's optional path: the vault root when
// it is not given.
func (s *Set) folderArg(a args) (zones.Path, error) {
	if !a.has("path") {
		return zones.VaultRoot(), nil
	}
	return s.path(a, "path")
}
