package watch

import (
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// names is a Listener that keeps every name it is told of.
type names struct{ seen map[string]bool }

func (n *names) Seen(rel string, dir bool) {
	rel = strings.Clone(rel) // the tree's, for the call
	if dir {
		rel += "/"
	}
	n.seen[rel] = true
}

func (n *names) Gone(rel string) {
	for p := range n.seen {
		if p == rel || p == rel+"/" || strings.HasPrefix(p, rel+"/") {
			delete(n.seen, p)
		}
	}
}

func (n *names) Reset() { clear(n.seen) }

func skipGit(name string) bool { return name == ".git" }

// walked is what a walk of root finds now, as names tells it.
func walked(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out = append(out, rel+"/")
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func openTree(t *testing.T, root string) (*Tree, *names) {
	t.Helper()
	n := &names{seen: map[string]bool{}}
	tr := Open(root, skipGit, n)
	t.Cleanup(func() { tr.Close() })
	return tr, n
}

// known is what n knows once tr has caught up; it fails the test if the
// tree says it can't be exact.
func known(t *testing.T, tr *Tree, n *names) []string {
	t.Helper()
	var out []string
	if err := tr.Sync(func() { out = slices.Sorted(maps.Keys(n.seen)) }); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameAsWalk(t *testing.T, tr *Tree, n *names, root, when string) {
	t.Helper()
	got, want := known(t, tr, n), walked(t, root)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: the index and a walk differ\nindex: %q\nwalk:  %q", when, got, want)
	}
}

func write(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every route a name can take into the vault is known at the next Sync,
// with no wait in between: the kernel queued its event before the call
// that made it returned.
func TestTreeKnowsEveryRoute(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(root, "notes/a.md"))
	write(t, filepath.Join(root, "проекты/план.md"))
	tr, n := openTree(t, root)
	sameAsWalk(t, tr, n, root, "at the start")

	steps := []struct {
		what string
		do   func() error
	}{
		{"a folder made deep at once", func() error { return os.MkdirAll(filepath.Join(root, "a/b/c/.claude"), 0o755) }},
		{"a file in a new folder", func() error { return os.WriteFile(filepath.Join(root, "a/b/c/.claude/settings.json"), nil, 0o644) }},
		{"a tree renamed into the vault", func() error {
			write(t, filepath.Join(outside, "in/deep/.git/HEAD"))
			write(t, filepath.Join(outside, "in/deep/note.md"))
			return os.Rename(filepath.Join(outside, "in"), filepath.Join(root, "notes/in"))
		}},
		{"a folder renamed inside the vault", func() error {
			return os.Rename(filepath.Join(root, "notes/in"), filepath.Join(root, "проекты/moved"))
		}},
		{"a folder renamed out of the vault", func() error {
			return os.Rename(filepath.Join(root, "a/b"), filepath.Join(outside, "b"))
		}},
		{"a folder removed", func() error { return os.RemoveAll(filepath.Join(root, "a")) }},
		{"a file replaced by a folder of its name", func() error {
			p := filepath.Join(root, "notes/a.md")
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(p, ".vscode"), 0o755)
		}},
		{"a folder moved over an empty one", func() error {
			if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
				return err
			}
			write(t, filepath.Join(root, "full/.envrc"))
			return unix.Rename(filepath.Join(root, "full"), filepath.Join(root, "empty"))
		}},
		{"a git clone", func() error {
			src := filepath.Join(outside, "src")
			for _, args := range [][]string{{"init", "-q", src}, {"-C", src, "commit", "-q", "--allow-empty", "-m", "x"}, {"clone", "-q", src, filepath.Join(root, "проекты/clone")}} {
				cmd := exec.Command("git", args...)
				cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
				if out, err := cmd.CombinedOutput(); err != nil {
					return fmt.Errorf("git %v: %v: %s", args, err, out)
				}
			}
			return nil
		}},
		{"a symlink to a folder", func() error { return os.Symlink(outside, filepath.Join(root, "link")) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		sameAsWalk(t, tr, n, root, s.what)
	}
	if st := tr.Status(); !st.Exact || st.Rebuilds != 0 {
		t.Fatalf("status %+v: want exact, with no rebuild", st)
	}
}

// A queue that overflows loses events; the tree reads the vault again and
// stays exact, and says it did.
func TestTreeOverflowReadsAgain(t *testing.T) {
	root := t.TempDir()
	tr, n := openTree(t, root)
	known(t, tr, n)
	b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		t.Skipf("no inotify queue limit to pass: %v", err)
	}
	var limit int
	fmt.Sscan(string(b), &limit)
	if limit > 200_000 {
		t.Skipf("fs.inotify.max_queued_events is %d: too many files to make to pass it", limit)
	}
	dir := filepath.Join(root, "many")
	os.Mkdir(dir, 0o755)
	known(t, tr, n) // watch it
	for i := range limit + 100 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	write(t, filepath.Join(root, "late/.git/HEAD"))
	sameAsWalk(t, tr, n, root, "after an overflow")
	if st := tr.Status(); !st.Exact || st.Rebuilds == 0 {
		t.Fatalf("status %+v: want exact, after a rebuild", st)
	}
}

// A folder that can't be read is told of, and read once it can be.
func TestTreeReadsAFolderOnceOpened(t *testing.T) {
	if os.Geteuid() == 0 {
		// root reads every folder whatever its mode: run this test again
		// as nobody, from a copy of the test binary nobody can run.
		asNobody(t, "TestTreeReadsAFolderOnceOpened")
		return
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "shut/.git/HEAD"))
	os.Chmod(filepath.Join(root, "shut"), 0)
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "shut"), 0o755) })
	tr, n := openTree(t, root)
	if got := known(t, tr, n); !slices.Equal(got, []string{"shut/"}) {
		t.Fatalf("got %q, want the folder alone", got)
	}
	os.Chmod(filepath.Join(root, "shut"), 0o755)
	sameAsWalk(t, tr, n, root, "once readable")
}

// asNobody runs the test named again in a process of uid and gid 65534.
func asNobody(t *testing.T, name string) {
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "watch-as-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	copyBin := filepath.Join(dir, "watch.test")
	if err := os.WriteFile(copyBin, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyBin, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody: %v\n%s", name, err, out)
	}
}

// A file system mounted inside the vault brings names with no event; the
// tree sees the mount table change and reads the vault again.
func TestTreeSeesAMountInside(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	root := t.TempDir()
	mnt := filepath.Join(root, "mnt")
	os.Mkdir(mnt, 0o755)
	tr, n := openTree(t, root)
	known(t, tr, n)
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("can't mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	if err := os.MkdirAll(filepath.Join(mnt, "x/.git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sameAsWalk(t, tr, n, root, "after a mount inside")
}

// Random changes, several at a time, then a Sync: the index is what a
// walk finds, every time.
func TestTreeMatchesAWalk(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", ".git", ".claude", "заметки", "x.md", ".env"}
	pick := func(base string) string {
		var parts []string
		for range 1 + rng.IntN(4) {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		return filepath.Join(base, filepath.Join(parts...))
	}
	tr, n := openTree(t, root)
	for round := range 300 {
		for range 1 + rng.IntN(6) {
			p := pick(root)
			switch rng.IntN(7) {
			case 0, 1:
				os.MkdirAll(p, 0o755)
			case 2:
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, nil, 0o644)
			case 3:
				os.RemoveAll(p)
			case 4:
				os.Rename(p, pick(root))
			case 5:
				os.Rename(p, filepath.Join(outside, fmt.Sprint(round, rng.Int())))
			case 6:
				src := filepath.Join(outside, fmt.Sprint("in", round, rng.Int()))
				os.MkdirAll(pick(src), 0o755)
				os.Rename(src, p)
			}
		}
		sameAsWalk(t, tr, n, root, fmt.Sprint("round ", round))
	}
}

// A file system whose changes may be made elsewhere is never trusted.
func TestTreeKnowsRemoteFileSystems(t *testing.T) {
	for magic, name := range remoteNames {
		if localMagics[magic] {
			t.Errorf("%s is listed as local", name)
		}
	}
	if !strings.Contains(fsKind(0x6969), "NFS") || !strings.Contains(fsKind(0x1234), "0x1234") {
		t.Errorf("fsKind names: %q, %q", fsKind(0x6969), fsKind(0x1234))
	}
}

func TestTreeClosed(t *testing.T) {
	tr, _ := openTree(t, t.TempDir())
	tr.Close()
	err := tr.Sync(nil)
	if _, ok := err.(*InexactError); !ok {
		t.Fatalf("Sync after Close: %v, want an InexactError", err)
	}
}

// The first reading's names are the vault's, not a later folder's: the
// tree reads every folder into one buffer, and a name kept from it must
// be a copy.
func TestTreeKeepsNamesOfItsOwn(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		write(t, filepath.Join(root, fmt.Sprintf("root-note-%02d.md", i)))
	}
	for i := range 5 {
		for j := range 50 {
			write(t, filepath.Join(root, fmt.Sprintf("f%d", i), fmt.Sprintf("zzzzzzzzzzzz-%02d.md", j)))
		}
	}
	tr, n := openTree(t, root)
	sameAsWalk(t, tr, n, root, "after the first reading")
}
