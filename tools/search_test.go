package tools

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// lineSearch is the search tool as it was before the block search and
// the parallel walk: one walk in name order, every line of every note
// matched on its own. The tool must give exactly what it gives.
func (s *Set) lineSearch(root zones.Path, glob string, match func([]byte) bool, limit int) (*Result, error) {
	st, err := s.stat(root)
	if err != nil {
		return nil, err
	}
	if !st.exists {
		return nil, s.fail(say.NotFound{Path: root.String()})
	}
	matches := []Match{}
	full := false
	br := bufio.NewReaderSize(nil, 64<<10)
	lr := newLineReader(br)
	var b strings.Builder
	searchFile := func(p string) error {
		if glob != "" && !globMatch(glob, p) {
			return nil
		}
		f, err := s.Vault.Fs.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		br.Reset(f)
		head, _ := br.Peek(8000) // sniffBytes
		if slices.Contains(head, 0) {
			return nil
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
		d, err := s.Vault.Fs.Open(dir)
		if err != nil {
			return nil
		}
		infos, err := d.Readdir(-1)
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
				continue
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
		b.WriteString(s.say(say.NoMatches{}) + "\n")
	}
	out := map[string]any{"matches": matches, "truncated": full}
	if full {
		note := s.say(say.MoreResults{Max: limit})
		b.WriteString(note + "\n")
		out["note"] = note
	}
	return &Result{Text: b.String(), Structured: out}, nil
}

// searchVault builds a vault on disk with what search must skip or see:
// hidden folders and notes, links to notes and folders, temporary files,
// binary notes, a FIFO, long lines, the Kelvin sign and the long s.
func searchVault(t *testing.T) *Set {
	t.Helper()
	root := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"needle", "NEEDLE", "Needle", "ne\u212Adle", "kiss", "\u212Aiſs", "KISS", "hay", "stack", "42", "7", "é", "щука", "\r", "\t", "needles", "x"}
	write := func(rel string, data []byte) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	note := func() []byte {
		var b bytes.Buffer
		for range rng.IntN(60) {
			for range rng.IntN(12) {
				b.WriteString(words[rng.IntN(len(words))])
				b.WriteByte(" -"[rng.IntN(2)])
			}
			if rng.IntN(20) == 0 {
				b.WriteString(strings.Repeat("long needle line ", 40))
			}
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	for _, dir := range []string{"notes", "notes/a", "notes/b/deep", "notes/private", "secret", "мета", "Zeta", "zeta"} {
		for i := range 12 {
			write(fmt.Sprintf("%s/n%02d.md", dir, i), note())
		}
		write(dir+"/"+tempPrefix+"x", []byte("needle in a temporary file\n"))
		write(dir+"/bin.md", append([]byte("needle\x00"), note()...))
		write(dir+"/late-nul.md", append(bytes.Repeat([]byte("needle\n"), 2000), 0))
		write(dir+"/plain.txt", []byte("needle in plain text\n"))
	}
	for link, to := range map[string]string{
		"notes/link.md": "n01.md", "notes/to-secret.md": "../secret/n01.md", "notes/dir-link": "../secret",
		"notes/out": "/etc",
	} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "secret", Mode: zones.Hidden},
		{Path: "notes/private", Mode: zones.Hidden}, {Path: "notes/a/n03.md", Mode: zones.Hidden},
		{Path: "мета", Mode: zones.Protected},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := vaultfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return &Set{Vault: &Vault{Root: root, Fs: fsys}, Zones: tab, Lang: "en", State: policy.NewState()}
}

// The tool finds what the line-by-line search found, in the same order,
// cut at the same place, on one goroutine and on several.
func TestSearchLikeLineSearch(t *testing.T) {
	s := searchVault(t)
	queries := []struct {
		q     string
		regex bool
	}{
		{"needle", false}, {"needle\n", false}, {"quorble", false},
		{"(?i)needle", true}, {"(?i)kiss", true}, {`\w+ needle \d+`, true}, {"needle$", true},
		{"needle|щука", true}, {"x*", true},
	}
	paths := []string{"", "notes", "notes/a", "notes/n01.md", "notes/private", "мета"}
	globs := []string{"", "*.md", "notes/*/n0*.md"}
	// Three goroutines on two cores: notes are found out of order.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	{
		for _, q := range queries {
			match := func(line []byte) bool { return bytes.Contains(line, []byte(q.q)) }
			if q.regex {
				match = regexp.MustCompile(q.q).Match
			}
			for _, p := range paths {
				for _, g := range globs {
					if p != "" && g != "" {
						continue
					}
					for _, limit := range []int{1, 7, 1000} {
						args := map[string]any{"query": q.q, "regex": q.regex, "max_results": limit}
						if p != "" {
							args["path"] = p
						}
						if g != "" {
							args["glob"] = g
						}
						plan, err := s.Plan("search", args)
						if err != nil {
							t.Fatal(err)
						}
						got, gotErr := plan.Run(context.Background())
						root := zones.VaultRoot()
						if p != "" {
							root = plan.Effects[0].Path
						}
						want, wantErr := s.lineSearch(root, g, match, limit)
						if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || (gotErr == nil && !reflect.DeepEqual(got, want)) {
							t.Fatalf("search %v:\n got %v %v\nwant %v %v", args, got, gotErr, want, wantErr)
						}
					}
				}
			}
		}
	}
	// The vault is not empty of what is looked for: some queries find
	// hundreds, and none finds what is hidden.
	res, _, _ := do(t, s, "search", map[string]any{"query": "(?i)needle", "regex": true, "max_results": 1000})
	if n := strings.Count(res, "\n"); n < 500 {
		t.Errorf("(?i)needle finds %d lines", n)
	}
	if strings.Contains(res, "secret/") || strings.Contains(res, "private/") || strings.Contains(res, "n03.md") || strings.Contains(res, tempPrefix) {
		t.Errorf("search shows what is hidden:\n%s", res)
	}
}

// A cancelled call ends with the context's error, as before.
func TestSearchCancelled(t *testing.T) {
	s := searchVault(t)
	plan, err := s.Plan("search", map[string]any{"query": "quorble"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plan.Run(ctx); err != context.Canceled {
		t.Errorf("cancelled search: %v", err)
	}
}

// panicFs panics when a note is opened: a stand-in for a bug in a search
// goroutine.
type panicFs struct{ afero.Fs }

func (p panicFs) Open(name string) (afero.File, error) {
	if strings.HasSuffix(name, ".md") {
		panic("bug opening " + name)
	}
	return p.Fs.Open(name)
}

// A panic on a search goroutine comes back on the caller's, where the
// gate recovers it as an error, instead of ending the server.
func TestSearchPanicReachesCaller(t *testing.T) {
	s := searchVault(t)
	s.Vault.Fs = panicFs{s.Vault.Fs}
	plan, err := s.Plan("search", map[string]any{"query": "needle"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "bug opening") {
			t.Errorf("recovered %v", p)
		}
	}()
	plan.Run(context.Background())
	t.Error("no panic")
}
