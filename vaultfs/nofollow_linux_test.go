//go:build linux

package vaultfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// noFollowVault builds, under a temporary root:
//
//	d/f.md                    "f"
//	d/sub/g.md                "g"
//	d/link-dir  -> ../m       a folder link
//	d/link-file -> f.md       a file link
//	d/dangling  -> nowhere.md
//	d/abs       -> /etc
//	m/p.md                    "p": what no call through a link may touch
//
// and opens a NoFollowFs over it, walking per component if asked.
func noFollowVault(t *testing.T, perComponent bool) (*NoFollowFs, string) {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"d/sub", "m"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"d/f.md": "f", "d/sub/g.md": "g", "m/p.md": "p"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"d/link-dir": "../m", "d/link-file": "f.md", "d/dangling": "nowhere.md", "d/abs": "/etc"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	f.perComponent.Store(perComponent)
	t.Cleanup(func() { f.Close() })
	return f, root
}

func bothWalks(t *testing.T, test func(t *testing.T, perComponent bool)) {
	t.Run("openat2", func(t *testing.T) { test(t, false) })
	t.Run("per-component", func(t *testing.T) { test(t, true) })
}

// call is one use of an Fs method on one name.
type call struct {
	name string
	fn   func(f *NoFollowFs, p string) error
}

func openErr(file interface{ Close() error }, err error) error {
	if err == nil {
		file.Close()
	}
	return err
}

// calls uses every method of the Fs on p; where a method takes two names,
// the other is harmless.
var calls = []call{
	{"Open", func(f *NoFollowFs, p string) error { return openErr(f.Open(p)) }},
	{"OpenFile create", func(f *NoFollowFs, p string) error { return openErr(f.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)) }},
	{"OpenFile excl", func(f *NoFollowFs, p string) error {
		return openErr(f.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_TRUNC, 0o644))
	}},
	{"Create", func(f *NoFollowFs, p string) error { return openErr(f.Create(p)) }},
	{"Mkdir", func(f *NoFollowFs, p string) error { return f.Mkdir(p, 0o755) }},
	{"MkdirAll", func(f *NoFollowFs, p string) error { return f.MkdirAll(p+"/x", 0o755) }},
	{"Remove", func(f *NoFollowFs, p string) error { return f.Remove(p) }},
	{"RemoveAll", func(f *NoFollowFs, p string) error { return f.RemoveAll(p) }},
	{"Rename from", func(f *NoFollowFs, p string) error { return f.Rename(p, "d/renamed") }},
	{"Rename to", func(f *NoFollowFs, p string) error { return f.Rename("d/sub/g.md", p) }},
	{"RenameNoReplace from", func(f *NoFollowFs, p string) error { return f.RenameNoReplace(p, "d/renamed") }},
	{"RenameNoReplace to", func(f *NoFollowFs, p string) error { return f.RenameNoReplace("d/sub/g.md", p) }},
	{"Stat", func(f *NoFollowFs, p string) error { _, err := f.Stat(p); return err }},
	{"Lstat", func(f *NoFollowFs, p string) error { _, _, err := f.LstatIfPossible(p); return err }},
	{"Readlink", func(f *NoFollowFs, p string) error { _, err := f.ReadlinkIfPossible(p); return err }},
	{"Symlink", func(f *NoFollowFs, p string) error { return f.SymlinkIfPossible("x", p) }},
	{"Chmod", func(f *NoFollowFs, p string) error { return f.Chmod(p, 0o600) }},
	{"Chown", func(f *NoFollowFs, p string) error { return f.Chown(p, 12345, 12345) }},
	{"Chtimes", func(f *NoFollowFs, p string) error { return f.Chtimes(p, time.Unix(1, 0), time.Unix(1, 0)) }},
	{"Pin", func(f *NoFollowFs, p string) error { return openErr(f.Pin(p)) }},
}

func TestNoFollowRefusesBadNames(t *testing.T) {
	f, root := noFollowVault(t, false)
	before := vaulttest.Snapshot(t, root)
	for _, name := range []string{"", "/", "/etc/passwd", root + "/d/f.md", "..", "../x", "d/..", "d/../d/f.md",
		"d//f.md", "d/", "./d", "d/./f.md", "d/f.md\x00"} {
		for _, c := range calls {
			if err := c.fn(f, name); !errors.Is(err, errBadName) {
				t.Errorf("%s(%q): %v, want %v", c.name, name, err, errBadName)
			}
		}
	}
	vaulttest.SameSnapshot(t, "bad names", before, vaulttest.Snapshot(t, root))
}

// A link in the middle of a name stops every method: RESOLVE_NO_SYMLINKS
// answers ELOOP, an O_NOFOLLOW|O_DIRECTORY open ELOOP or ENOTDIR.
func TestNoFollowLinkInTheMiddle(t *testing.T) {
	bothWalks(t, func(t *testing.T, perComponent bool) {
		for _, p := range []string{"d/link-dir/p.md", "d/link-dir/new.md", "d/abs/passwd", "d/dangling/x", "d/link-file/x"} {
			for _, c := range calls {
				f, root := noFollowVault(t, perComponent)
				before := vaulttest.Snapshot(t, root)
				err := c.fn(f, p)
				if err == nil {
					t.Errorf("%s(%q) went through a link", c.name, p)
				} else if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
					t.Errorf("%s(%q): %v, want ELOOP or ENOTDIR", c.name, p, err)
				}
				vaulttest.SameSnapshot(t, c.name+" "+p, before, vaulttest.Snapshot(t, root))
			}
		}
	})
}

func TestNoFollowLastLink(t *testing.T) {
	bothWalks(t, func(t *testing.T, perComponent bool) {
		mustFail := func(what string, err error, want ...error) {
			t.Helper()
			for _, w := range want {
				if errors.Is(err, w) {
					return
				}
			}
			t.Errorf("%s: %v, want %v", what, err, want)
		}
		f, root := noFollowVault(t, perComponent)
		before := vaulttest.Snapshot(t, root)
		for _, p := range []string{"d/link-file", "d/link-dir", "d/dangling", "d/abs"} {
			_, err := f.Open(p)
			mustFail("Open "+p, err, syscall.ELOOP)
			_, err = f.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
			mustFail("OpenFile trunc "+p, err, syscall.ELOOP)
			_, err = f.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
			mustFail("OpenFile create "+p, err, syscall.ELOOP)
			_, err = f.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			mustFail("OpenFile excl "+p, err, fs.ErrExist)
			_, err = f.Stat(p)
			mustFail("Stat "+p, err, syscall.ELOOP)
			mustFail("Mkdir "+p, f.Mkdir(p, 0o755), fs.ErrExist)
			mustFail("MkdirAll "+p, f.MkdirAll(p, 0o755), syscall.ELOOP, syscall.ENOTDIR)
			mustFail("Chmod "+p, f.Chmod(p, 0o600), syscall.EOPNOTSUPP)
			mustFail("Rename onto "+p, f.Rename("d/sub/g.md", p), fs.ErrExist)
			mustFail("RenameNoReplace onto "+p, f.RenameNoReplace("d/sub/g.md", p), fs.ErrExist)
			_, err = f.Pin(p)
			mustFail("Pin "+p, err, syscall.ELOOP, syscall.ENOTDIR)
			fi, _, err := f.LstatIfPossible(p)
			if err != nil || fi.Mode()&fs.ModeSymlink == 0 || fi.Name() != filepath.Base(p) {
				t.Errorf("Lstat %s: %v %v", p, fi, err)
			}
			if _, err := f.ReadlinkIfPossible(p); err != nil {
				t.Errorf("Readlink %s: %v", p, err)
			}
		}
		vaulttest.SameSnapshot(t, "refused calls on links", before, vaulttest.Snapshot(t, root))

		// Chtimes and Chown act on the link itself, never on its target.
		if err := f.Chtimes("d/link-file", time.Unix(1, 0), time.Unix(1, 0)); err != nil {
			t.Error(err)
		}
		if err := f.Chown("d/link-file", os.Getuid(), os.Getgid()); err != nil {
			t.Error(err)
		}
		if fi, _ := os.Lstat(filepath.Join(root, "d/link-file")); !fi.ModTime().Equal(time.Unix(1, 0)) {
			t.Errorf("Chtimes of a link: its mtime is %v", fi.ModTime())
		}
		// Rename, RenameNoReplace, Remove and RemoveAll act on the link too.
		if err := f.Rename("d/link-file", "d/moved-link"); err != nil {
			t.Error(err)
		}
		if err := f.RenameNoReplace("d/link-dir", "d/moved-dir-link"); err != nil {
			t.Error(err)
		}
		if err := f.Remove("d/dangling"); err != nil {
			t.Error(err)
		}
		if err := f.RemoveAll("d/moved-dir-link"); err != nil {
			t.Error(err)
		}
		if err := f.RemoveAll("d/abs"); err != nil {
			t.Error(err)
		}
		if got, err := os.Readlink(filepath.Join(root, "d/moved-link")); got != "f.md" || err != nil {
			t.Errorf("moved link: %q %v", got, err)
		}
		for _, gone := range []string{"d/link-file", "d/link-dir", "d/dangling", "d/moved-dir-link", "d/abs"} {
			if _, err := os.Lstat(filepath.Join(root, gone)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s still there: %v", gone, err)
			}
		}
		for _, kept := range []string{"d/f.md", "m/p.md", "d/nowhere.md"} {
			if _, err := os.Lstat(filepath.Join(root, kept)); errors.Is(err, fs.ErrNotExist) != (kept == "d/nowhere.md") {
				t.Errorf("%s: %v", kept, err)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(root, "d/f.md")); string(b) != "f" {
			t.Errorf("the link's target changed: %q", b)
		}
		if _, err := os.Stat("/etc/passwd"); err != nil {
			t.Errorf("/etc/passwd: %v", err)
		}
	})
}

func TestNoFollowPlainFiles(t *testing.T) {
	bothWalks(t, func(t *testing.T, perComponent bool) {
		f, root := noFollowVault(t, perComponent)
		w, err := f.OpenFile("d/new.md", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, "new")
		w.Close()
		if fi, err := f.Stat("d/new.md"); err != nil || fi.Size() != 3 || fi.Mode().Perm()&^0o022 != 0o640&^0o022 {
			t.Errorf("Stat: %v %v", fi, err)
		}
		if fi, _, err := f.LstatIfPossible("."); err != nil || !fi.IsDir() {
			t.Errorf("Lstat of the root: %v %v", fi, err)
		}
		fi, _, err := f.LstatIfPossible("d/f.md")
		if st, ok := fi.Sys().(*syscall.Stat_t); err != nil || !ok || st.Nlink != 1 || st.Size != 1 {
			t.Errorf("Lstat's Sys: %#v %v", fi.Sys(), err)
		}
		if d, err := f.Open("."); err != nil {
			t.Error(err)
		} else {
			names, _ := d.Readdirnames(-1)
			d.Close()
			if len(names) != 2 {
				t.Errorf("root holds %v", names)
			}
		}
		if err := f.MkdirAll("d/a/b/c", 0o755); err != nil {
			t.Error(err)
		}
		if err := f.MkdirAll("d/f.md/x", 0o755); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("MkdirAll through a file: %v", err)
		}
		if err := f.Mkdir("d/a", 0o755); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Mkdir of an existing folder: %v", err)
		}
		if err := f.RenameNoReplace("d/new.md", "d/f.md"); !errors.Is(err, fs.ErrExist) {
			t.Errorf("RenameNoReplace onto a file: %v", err)
		}
		if err := f.Rename("d/new.md", "d/a"); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Rename onto a folder: %v", err)
		}
		if err := f.Rename("d/new.md", "d/f.md"); err != nil {
			t.Errorf("Rename onto a file: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "d/f.md")); string(b) != "new" {
			t.Errorf("after Rename: %q", b)
		}
		if err := f.Remove("d/a"); !errors.Is(err, syscall.ENOTEMPTY) {
			t.Errorf("Remove of a full folder: %v", err)
		}
		if err := f.Remove("d/a/b/c"); err != nil {
			t.Errorf("Remove of an empty folder: %v", err)
		}
		for _, op := range []func() error{
			func() error { return f.Remove(".") }, func() error { return f.RemoveAll(".") },
			func() error { return f.Rename(".", "x") }, func() error { return f.Mkdir(".", 0o755) },
		} {
			if op() == nil {
				t.Error("an operation on the root itself went through")
			}
		}
		if err := f.RemoveAll("d/missing/x"); err != nil {
			t.Errorf("RemoveAll of nothing: %v", err)
		}
		if err := f.Chmod("d/f.md", 0o600); err != nil {
			t.Error(err)
		} else if fi, _ := os.Stat(filepath.Join(root, "d/f.md")); fi.Mode().Perm() != 0o600 {
			t.Errorf("Chmod: %v", fi.Mode())
		}
	})
}

// RemoveAll empties a tree by descriptors: the links inside go, what they
// point at stays.
func TestNoFollowRemoveAllKeepsLinkTargets(t *testing.T) {
	bothWalks(t, func(t *testing.T, perComponent bool) {
		f, root := noFollowVault(t, perComponent)
		os.MkdirAll(filepath.Join(root, "d/tree/deep/er"), 0o755)
		os.WriteFile(filepath.Join(root, "d/tree/deep/er/x.md"), []byte("x"), 0o644)
		os.Symlink("../../../m", filepath.Join(root, "d/tree/deep/to-m"))
		os.Symlink("../../m/p.md", filepath.Join(root, "d/tree/to-p"))
		m := vaulttest.Snapshot(t, filepath.Join(root, "m"))
		if err := f.RemoveAll("d/tree"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(root, "d/tree")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("d/tree: %v", err)
		}
		vaulttest.SameSnapshot(t, "RemoveAll", m, vaulttest.Snapshot(t, filepath.Join(root, "m")))
		if err := f.RemoveAll("d"); err != nil {
			t.Fatal(err)
		}
		vaulttest.SameSnapshot(t, "RemoveAll", m, vaulttest.Snapshot(t, filepath.Join(root, "m")))
	})
}

// A pinned folder keeps its descriptor: swapping the folder for a link
// afterwards does not move where the pinned Fs acts.
func TestNoFollowPinHoldsTheFolder(t *testing.T) {
	f, root := noFollowVault(t, false)
	p, err := f.Pin("d/sub")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Rename(filepath.Join(root, "d/sub"), filepath.Join(root, "d/sub.real")))
	must(os.Symlink("../m", filepath.Join(root, "d/sub")))
	m := vaulttest.Snapshot(t, filepath.Join(root, "m"))
	must(afero.WriteFile(p, "h.md", []byte("h"), 0o644))
	must(p.Rename("h.md", "g.md"))
	must(p.Remove("g.md"))
	must(afero.WriteFile(p, "p.md", []byte("not p"), 0o644))
	vaulttest.SameSnapshot(t, "pinned", m, vaulttest.Snapshot(t, filepath.Join(root, "m")))
	if b, err := os.ReadFile(filepath.Join(root, "d/sub.real/p.md")); string(b) != "not p" {
		t.Errorf("pinned write landed elsewhere: %q %v", b, err)
	}
	if _, err := f.Pin("d/sub"); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("Pin of a link: %v", err)
	}
}
