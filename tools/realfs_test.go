package tools

import (
	"context"
	"errors"
	"github.com/spf13/afero"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/shell"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// realVault builds a vault on disk with links of every kind:
//
//	notes/a.md                         edit
//	notes/link-meta  -> ../мета        a folder link into a protected zone
//	notes/out        -> /etc           a link out of the vault
//	notes/dangling   -> nowhere.md
//	notes/last.md    -> a.md           a link as the last component
//	notes/to-secret.md -> ../секрет/s.md  a link into a hidden zone
//	мета/p.md                          protected
//	мета/бобер/hard.md  (hard link to мета/p.md)
//	секрет/s.md                        hidden
func realVault(t *testing.T) (*Set, string) {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"notes", "мета/бобер", "секрет"} {
		must(os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	must(os.WriteFile(filepath.Join(root, "notes/a.md"), []byte("a\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "мета/p.md"), []byte("protected\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "секрет/s.md"), []byte("secret\n"), 0o644))
	must(os.Symlink("../мета", filepath.Join(root, "notes/link-meta")))
	must(os.Symlink("/etc", filepath.Join(root, "notes/out")))
	must(os.Symlink("nowhere.md", filepath.Join(root, "notes/dangling")))
	must(os.Symlink("a.md", filepath.Join(root, "notes/last.md")))
	must(os.Symlink("../секрет/s.md", filepath.Join(root, "notes/to-secret.md")))
	must(os.Link(filepath.Join(root, "мета/p.md"), filepath.Join(root, "мета/бобер/hard.md")))
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "мета", Mode: zones.Protected},
		{Path: "мета/бобер", Mode: zones.Write}, {Path: "секрет", Mode: zones.Hidden},
	}, zones.Options{})
	must(err)
	rfs, err := vaultfs.Open(root) // the production Fs
	must(err)
	t.Cleanup(func() { rfs.Close() })
	return &Set{Vault: &Vault{Root: root, Fs: rfs}, Zones: tab, Lang: "en", State: policy.NewState()}, root
}

// do plans, judges with the built-in chain, and runs one call.
func do(t *testing.T, s *Set, tool string, args map[string]any) (string, *policy.Deny, error) {
	t.Helper()
	p, err := s.Plan(tool, args)
	if err != nil {
		return "", nil, err
	}
	c := &policy.ToolCall{Tool: tool, Effects: p.Effects, Zones: s.Zones, Lang: "en", Session: &policy.Session{State: s.State}}
	if d := policy.Builtin(true).Judge(c); d != nil {
		return "", d, nil
	}
	res, err := p.Run(context.Background())
	if err != nil {
		return "", nil, err
	}
	return res.Text, nil, nil
}

func TestSymlinks(t *testing.T) {
	s, root := realVault(t)
	cases := []struct {
		tool string
		args map[string]any
		deny string // substring of the deny reason; "" = allowed
		err  string // substring of the failure; "" = ok
	}{
		// a folder link into a protected zone: judged where it leads
		{"read", map[string]any{"path": "notes/link-meta/p.md"}, "", ""},
		{"write", map[string]any{"path": "notes/link-meta/new.md", "content": "x"}, `create "мета/new.md": zone protected`, ""},
		{"delete", map[string]any{"path": "notes/link-meta/p.md"}, `"мета/p.md": zone protected`, ""},
		// out of the vault
		{"read", map[string]any{"path": "notes/out/passwd"}, "outside the vault", ""},
		{"write", map[string]any{"path": "notes/out/x", "content": "x"}, "outside the vault", ""},
		// into a hidden zone
		// (the reason names the link, not where it leads: hidden stays hidden)
		{"read", map[string]any{"path": "notes/to-secret.md"}, `read "notes/to-secret.md": zone hidden`, ""},
		// the last component is a link: read follows, write and edit refuse naming the target
		{"read", map[string]any{"path": "notes/last.md"}, "", ""},
		{"write", map[string]any{"path": "notes/last.md", "content": "x"}, `Write to "notes/a.md" itself`, ""},
		{"edit", map[string]any{"path": "notes/last.md", "old_string": "a", "new_string": "b"}, `Write to "notes/a.md" itself`, ""},
		// dangling: never written through
		{"write", map[string]any{"path": "notes/dangling", "content": "x"}, `symbolic link to "notes/nowhere.md"`, ""},
		{"read", map[string]any{"path": "notes/dangling"}, "", "does not exist"},
		// delete and move act on the link itself, judged by its own zone
		{"move", map[string]any{"source": "notes/last.md", "destination": "notes/last2.md"}, "", ""},
		// a hard link to a protected file is never changed or deleted
		{"read", map[string]any{"path": "мета/бобер/hard.md"}, "", ""},
		{"write", map[string]any{"path": "мета/бобер/hard.md", "content": "x"}, "2 hard links", ""},
		{"delete", map[string]any{"path": "мета/бобер/hard.md"}, "2 hard links", ""},
		{"delete", map[string]any{"path": "мета/бобер", "recursive": true}, "root of a zone", ""},
	}
	for _, c := range cases {
		text, d, err := do(t, s, c.tool, c.args)
		switch {
		case c.deny != "" && (d == nil || !strings.Contains(d.Reason, c.deny)):
			t.Errorf("%s %v: deny %v, want %q (text %q, err %v)", c.tool, c.args, d, c.deny, text, err)
		case c.deny == "" && d != nil:
			t.Errorf("%s %v: denied: %s", c.tool, c.args, d.Reason)
		case c.deny == "" && c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %v: err %v, want %q", c.tool, c.args, err, c.err)
		case c.deny == "" && c.err == "" && err != nil:
			t.Errorf("%s %v: %v", c.tool, c.args, err)
		}
	}
	if _, d, _ := do(t, s, "read", map[string]any{"path": "notes/to-secret.md"}); d == nil || strings.Contains(d.Reason, "секрет") {
		t.Errorf("a refusal named the hidden target of a link: %v", d)
	}
	// the link moved, not its target
	if fi, err := os.Lstat(filepath.Join(root, "notes/last2.md")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("move of a symlink: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "notes/a.md")); string(b) != "a\n" {
		t.Errorf("the link's target changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "мета/p.md")); string(b) != "protected\n" {
		t.Errorf("the protected file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, "notes/nowhere.md")); err == nil {
		t.Error("a write went through a dangling link")
	}
}

func TestRecursiveDeleteSeesNestedControlAndHardLinks(t *testing.T) {
	s, root := realVault(t)
	os.MkdirAll(filepath.Join(root, "мета/бобер/repo/.git"), 0o755)
	os.WriteFile(filepath.Join(root, "мета/бобер/repo/.git/config"), []byte("[core]\n"), 0o644)
	_, d, _ := do(t, s, "delete", map[string]any{"path": "мета/бобер/repo", "recursive": true})
	if d == nil || !strings.Contains(d.Reason, `"мета/бобер/repo`) { // .git named, or hidden (the vault has a hidden zone)
		t.Errorf("recursive delete over a nested .git: %v", d)
	}
	os.RemoveAll(filepath.Join(root, "мета/бобер/repo/.git"))
	os.Link(filepath.Join(root, "мета/p.md"), filepath.Join(root, "мета/бобер/repo/h.md"))
	_, d, _ = do(t, s, "delete", map[string]any{"path": "мета/бобер/repo", "recursive": true})
	if d == nil || !strings.Contains(d.Reason, "hard links") {
		t.Errorf("recursive delete over a hard-linked file: %v", d)
	}
	os.Remove(filepath.Join(root, "мета/бобер/repo/h.md"))
	if _, d, err := do(t, s, "delete", map[string]any{"path": "мета/бобер/repo", "recursive": true}); d != nil || err != nil {
		t.Errorf("plain recursive delete: %v %v", d, err)
	}
}

func TestAtomicWriteLeavesNoTemp(t *testing.T) {
	s, root := realVault(t)
	if _, d, err := do(t, s, "read", map[string]any{"path": "notes/a.md"}); d != nil || err != nil {
		t.Fatal(d, err)
	}
	if _, d, err := do(t, s, "write", map[string]any{"path": "notes/a.md", "content": "new\n"}); d != nil || err != nil {
		t.Fatal(d, err)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "notes"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	if fi, _ := os.Stat(filepath.Join(root, "notes/a.md")); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode changed to %v", fi.Mode())
	}
}

// TestPlaceNewWaitsForReady: the new content is named only once ready
// (the history's flush of the pre-images) says yes; a no leaves the old
// file as it was, or no new one, and no temporary name.
func TestPlaceNewWaitsForReady(t *testing.T) {
	s, root := realVault(t)
	old, _ := os.ReadFile(filepath.Join(root, "notes/a.md"))
	notYet := errors.New("the pre-images did not reach the disk")
	no := func() error { return notYet }
	pinned, err := s.Vault.Fs.(vaultfs.Pinner).Pin("notes") // as atomicWrite places
	if err != nil {
		t.Fatal(err)
	}
	defer pinned.Close()
	for _, c := range []struct {
		name          string
		replace, sync bool
	}{{"a.md", true, true}, {"fresh.md", false, true}, {"a.md", true, false}, {"fresh.md", false, false}} {
		if err := s.placeNew(pinned, c.name, ".", "notes", []byte("new\n"), 0o644, c.replace, c.sync, no); !errors.Is(err, notYet) {
			t.Fatalf("%s (sync %v): %v, want ready's no", c.name, c.sync, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(root, "notes/a.md")); string(got) != string(old) {
		t.Errorf("notes/a.md changed to %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "notes/fresh.md")); err == nil {
		t.Error("notes/fresh.md was made")
	}
	ents, _ := os.ReadDir(filepath.Join(root, "notes"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestResolveLoop(t *testing.T) {
	s, root := realVault(t)
	os.Symlink("loop2", filepath.Join(root, "notes/loop1"))
	os.Symlink("loop1", filepath.Join(root, "notes/loop2"))
	if _, err := s.Vault.Resolve(mustNormalize(t, s.Vault.Root, "notes/loop1/x"), true); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("loop: %v", err)
	}
}

func TestReadRefusesFIFO(t *testing.T) {
	s, root := realVault(t)
	if err := syscall.Mkfifo(filepath.Join(root, "notes/pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := do(t, s, "read", map[string]any{"path": "notes/pipe"})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("read of a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read blocked on a FIFO")
	}
	if text, _, err := do(t, s, "search", map[string]any{"query": "x"}); err != nil {
		t.Errorf("search beside a FIFO: %v %q", err, text)
	}
}

// TestBashEffectThatCantBePlaced: a path the zones can't judge (empty,
// relative, with a NUL) is an unknown path, never the vault root.
func TestBashEffectThatCantBePlaced(t *testing.T) {
	s, _ := realVault(t)
	for _, p := range []string{"", "notes/a.md", "/x\x00y"} {
		e := s.bashEffect(shell.Effect{Op: zones.OpDelete, Path: p, Command: "rm"})
		if !e.Unknown || !e.Path.IsZero() {
			t.Errorf("%q: %+v", p, e)
		}
		l := s.bashEffect(shell.Effect{Op: zones.OpLink, Path: "/v/x", Source: p})
		if !l.SourceUnknown {
			t.Errorf("link source %q: %+v", p, l)
		}
	}
}

func mustNormalize(t *testing.T, vault, p string) zones.Path {
	t.Helper()
	np, err := zones.Normalize(vault, p)
	if err != nil {
		t.Fatal(err)
	}
	return np
}

// TestReadWholeLikeReadPart: the one-read path gives exactly what the
// line-by-line one gives, or steps aside and leaves the file at its start.
func TestReadWholeLikeReadPart(t *testing.T) {
	bodies := []string{"", "a", "a\n", "a\nb", "a\nb\n", "\n\n\n", "x\r\ny\r\n", strings.Repeat("line\n", 50), strings.Repeat("z", 300), "ё\nж"}
	for _, body := range bodies {
		for _, lim := range []struct{ lines, bytes int }{{2000, 100 << 10}, {3, 100 << 10}, {2000, 64}, {1, 1}} {
			want, err := readPart(strings.NewReader(body), 1, lim.lines, lim.bytes)
			if err != nil {
				t.Fatal(err)
			}
			r := strings.NewReader(body)
			got, ok, err := readWhole(r, int64(len(body)), 1, lim.lines, lim.bytes)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				if rest, _ := io.ReadAll(r); string(rest) != body {
					t.Errorf("%q %v: stepped aside but left the file at %q", body, lim, rest)
				}
				continue
			}
			if string(got.data) != string(want.data) || got.last != want.last || got.more != want.more || got.lineCut != want.lineCut {
				t.Errorf("%q %v: whole %+v, part %+v", body, lim, got, want)
			}
		}
	}
}

// walkOnlyFs hides the production Fs's LinkFree, so Resolve walks.
type walkOnlyFs struct {
	afero.Fs
	afero.Lstater
	afero.LinkReader
}

// The one-step check must give what the walk gives, for every kind of
// name: plain, through a folder link, a trailing link, dangling, leading
// out, missing, under a file, and a loop.
func TestResolveLinkFreeLikeWalk(t *testing.T) {
	s, root := realVault(t)
	os.Symlink("loop2", filepath.Join(root, "notes/loop1"))
	os.Symlink("loop1", filepath.Join(root, "notes/loop2"))
	nf := s.Vault.Fs.(*vaultfs.NoFollowFs)
	walk := &Vault{Root: root, Fs: walkOnlyFs{nf, nf, nf}}
	fast := 0
	for _, name := range []string{
		"notes", "notes/a.md", "notes/a.md/x", "notes/missing/x.md", "missing.md",
		"мета/бобер/hard.md", "notes/link-meta", "notes/link-meta/p.md", "notes/link-meta/бобер/new.md",
		"notes/out", "notes/out/passwd", "notes/dangling", "notes/last.md", "notes/to-secret.md",
		"notes/loop1", "notes/loop1/x", "секрет/s.md",
	} {
		p := mustNormalize(t, root, name)
		for _, last := range []bool{true, false} {
			want, werr := walk.Resolve(p, last)
			got, gerr := s.Vault.Resolve(p, last)
			if got != want || (werr == nil) != (gerr == nil) {
				t.Errorf("Resolve(%q, %v) = %v, %v; the walk gives %v, %v", name, last, got, gerr, want, werr)
			}
			if nf.LinkFree(name, last) {
				fast++
			}
		}
	}
	if fast < 10 {
		t.Errorf("the one-step check answered for %d names only", fast)
	}
}
