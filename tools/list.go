package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/search"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

const (
	maxListDepth   = 10
	maxListEntries = 5000
	defaultResults = 100
	maxResults     = 1000
	maxLineShown   = 300 // characters of a matching line shown
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
	m := search.Literal(query)
	if a.boolean("regex") {
		re, err := regexp.Compile(query)
		if err != nil {
			return nil, a.bad("query", say.ArgBadRegex{Problem: err.Error()})
		}
		m = search.Regexp(re)
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
	return &Plan{
		Effects: []policy.Effect{e},
		Run: func(ctx context.Context) (*Result, error) {
			return s.runSearch(ctx, real, glob, m, limit)
		},
	}, nil
}

// A batch of notes to search, numbered in the walk's order, and what was
// found in them.
type (
	searchJob struct {
		i     int
		paths []string
	}
	searchFound struct {
		i       int
		matches []Match
	}
)

// searchBatch is the most notes that go to a goroutine at once: a note
// costs a few microseconds to open and read, a hand-over between
// goroutines about one. Batches start at one note and double, and are one
// note again once a note has matched: a query that stops at its limit
// needs its first notes searched side by side, and one that finds nothing
// reads every note anyway.
const searchBatch = 16

// runSearch walks the folder in name order, one folder at a time, and
// searches its notes on GOMAXPROCS goroutines, searchBatch at a time; the
// matches are taken in the walk's order, so the result is the one a
// single walk gives, and everything stops once limit are in.
func (s *Set) runSearch(ctx context.Context, root zones.Path, glob string, m *search.Matcher, limit int) (*Result, error) {
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
	walkCtx, stop := context.WithCancel(ctx)
	defer stop()
	jobs := make(chan searchJob, 256)
	found := make(chan searchFound, 256)
	var walkErr error
	var matched atomic.Bool // some note matched: the limit may come soon
	// A bug that panics on a goroutine of the search panics again on the
	// caller's, where the gate turns it into an error, not a crash.
	var fault struct {
		sync.Mutex
		v any
	}
	catch := func() {
		if p := recover(); p != nil {
			fault.Lock()
			if fault.v == nil {
				fault.v = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
			fault.Unlock()
			stop()
		}
	}
	go func() {
		defer close(jobs)
		defer catch()
		n, size := 0, 1
		var batch []string
		flush := func() bool {
			if len(batch) == 0 {
				return true
			}
			select {
			case jobs <- searchJob{n, batch}:
				n, size = n+1, min(2*size, searchBatch)
				if matched.Load() {
					size = 1
				}
				batch = make([]string, 0, size)
				return true
			case <-walkCtx.Done():
				return false
			}
		}
		send := func(p string) bool {
			batch = append(batch, p)
			return len(batch) < size || flush()
		}
		if st.dir {
			walkErr = s.searchWalk(walkCtx, root.String(), root, glob, send)
		} else if st.regular && s.Zones.Zone(root).Listed() && (glob == "" || globMatch(glob, root.String())) {
			send(root.String())
		}
		if walkErr == nil {
			flush()
		}
	}()
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			defer catch()
			sc := scanners.Get().(*search.Scanner)
			defer scanners.Put(sc)
			for j := range jobs {
				f := searchFound{i: j.i}
				for _, p := range j.paths {
					if walkCtx.Err() != nil || len(f.matches) >= limit {
						break
					}
					f.matches = s.searchFile(sc, f.matches, p, m, limit)
				}
				if len(f.matches) > 0 {
					matched.Store(true)
				}
				found <- f
			}
		})
	}
	go func() {
		wg.Wait()
		close(found)
	}()
	matches := []Match{}
	full := false
	early := map[int][]Match{} // found ahead of a note before them
	next := 0
	for f := range found {
		if full {
			continue // drained, so the goroutines end
		}
		early[f.i] = f.matches
		for ms, ok := early[next]; ok && !full; ms, ok = early[next] {
			delete(early, next)
			next++
			if room := limit - len(matches); len(ms) >= room {
				ms, full = ms[:room], true
				stop()
			}
			matches = append(matches, ms...)
		}
	}
	if fault.v != nil {
		panic(fault.v)
	}
	if walkErr != nil && !full {
		return nil, walkErr
	}
	var b strings.Builder
	for _, mt := range matches {
		fmt.Fprintf(&b, "%s:%d: %s\n", mt.Path, mt.Line, mt.Text)
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

// scanners keep their blocks from call to call (a quarter of a megabyte
// or two each), rather than a new set for every goroutine of every call.
var scanners = sync.Pool{New: func() any { return search.NewScanner() }}

// searchWalk sends the notes under dir to search, in name order: the
// listed ones only (hidden and no-zone paths are not there), and never
// through a symlink.
func (s *Set) searchWalk(ctx context.Context, dir string, at zones.Path, glob string, send func(string) bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := s.Vault.Fs.Open(dir)
	if err != nil {
		return nil
	}
	entries, err := readDirEntries(d)
	d.Close()
	if err != nil {
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		name := e.Name()
		p := name // dir is clean and name one component: no path.Join
		if dir != "." {
			p = dir + "/" + name
		}
		child, err := at.Child(name)
		if err != nil || !s.Zones.Zone(child).Listed() || strings.HasPrefix(name, tempPrefix) {
			continue
		}
		switch {
		case e.IsDir():
			if err := s.searchWalk(ctx, p, child, glob, send); err != nil {
				return err
			}
		case e.Type() == 0:
			if (glob == "" || globMatch(glob, p)) && !send(p) {
				return ctx.Err()
			}
		default:
			continue // symlinks and devices are not followed
		}
	}
	return nil
}

// readDirEntries lists a folder as lstat sees it (links as links), from
// the folder's own records where the Fs has them: no stat per entry.
func readDirEntries(d afero.File) ([]fs.DirEntry, error) {
	if rd, ok := d.(fs.ReadDirFile); ok {
		return rd.ReadDir(-1)
	}
	infos, err := d.Readdir(-1)
	entries := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		entries[i] = fs.FileInfoToDirEntry(fi)
	}
	return entries, err
}

// searchFile appends the matches in the note p to matches, until they
// are limit.
func (s *Set) searchFile(sc *search.Scanner, matches []Match, p string, m *search.Matcher, limit int) []Match {
	f, err := vaultfs.OpenReader(s.Vault.Fs, p)
	if err != nil {
		return matches // vanished or unreadable: not a match
	}
	defer f.Close()
	sc.Scan(f, m, func(n int, line []byte) bool {
		matches = append(matches, Match{Path: p, Line: n, Text: shownLine(line)})
		return len(matches) < limit
	})
	return matches
}

// shownLine is a matching line as the result shows it: no line ending,
// at most maxLineShown characters.
func shownLine(line []byte) string {
	text := strings.TrimRight(string(line), "\r\n")
	if utf8.RuneCountInString(text) > maxLineShown {
		text = string([]rune(text)[:maxLineShown]) + "…"
	}
	return text
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
