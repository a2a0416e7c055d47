//go:build linux

package txn

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// baseVault is the vault most cases start from.
const baseVault = `mkdir d e
echo alpha > a.md
echo beta > b.md
echo gamma > d/c.md
echo phi > e/f.md
`

// summary prints a change in the shape the table compares: what a reader of the audit would want to see.
func summary(c Change) string {
	kind, s := "file", c.After
	if s == nil {
		s = c.Before
	}
	switch {
	case c.Dir:
		kind = "dir"
	case s != nil && s.Mode&fs.ModeSymlink != 0:
		kind = "symlink"
	}
	switch c.Op {
	case Create:
		if kind == "symlink" {
			return fmt.Sprintf("create symlink %q -> %q", c.Path, c.After.Target)
		}
		return fmt.Sprintf("create %s %q", kind, c.Path)
	case Modify:
		var what []string
		if c.Before.SHA256 != c.After.SHA256 || c.Before.Target != c.After.Target {
			what = append(what, "content")
		}
		if c.Before.Mode != c.After.Mode {
			what = append(what, "mode "+c.After.Mode.String())
		}
		return fmt.Sprintf("modify %s %q %s", kind, c.Path, strings.Join(what, " "))
	case Delete:
		return fmt.Sprintf("delete %s %q", kind, c.Path)
	case Move:
		return fmt.Sprintf("move %s %q -> %q", kind, c.From, c.Path)
	case Link:
		return fmt.Sprintf("link %q = %q", c.Path, c.From)
	case Special:
		return fmt.Sprintf("special %q %s", c.Path, c.After.Mode.Type())
	}
	return c.String()
}

// diffCases: each changes the vault through the merged view, as a program would. want is
// for both mounts unless wantUserNS says how a user namespace sees it (no handles, no redirects).
var diffCases = []struct {
	name       string
	setup      string // sh in the vault, after baseVault
	script     string // sh in the merged view
	want       []string
	wantUserNS []string
}{
	{name: "nothing", script: "cat a.md d/c.md >/dev/null; ls -R >/dev/null"},
	{name: "new file", script: "echo new > new.md", want: []string{`create file "new.md"`}},
	{name: "new folder with a file", script: "mkdir n; echo x > n/x.md",
		want: []string{`create dir "n"`, `create file "n/x.md"`}},
	{name: "new symlink is not followed", script: "ln -s ../../etc/passwd d/l",
		want: []string{`create symlink "d/l" -> "../../etc/passwd"`}},
	{name: "append", script: "echo more >> a.md", want: []string{`modify file "a.md" content`}},
	{name: "python rewrite", script: `python3 -c "open('a.md','w').write('x')"`,
		want: []string{`modify file "a.md" content`}},
	{name: "copy-up without change", script: `python3 -c "open('a.md','r+').close()"`},
	{name: "touch", script: "touch a.md d/c.md"},
	{name: "rewrite with the same text", script: "echo alpha > a.md"},
	{name: "chmod", script: "chmod 600 a.md", want: []string{`modify file "a.md" mode -rw-------`}},
	{name: "chmod of a folder", script: "chmod 700 d", want: []string{`modify dir "d" mode drwx------`}},
	{name: "sed -i", script: "sed -i s/alpha/omega/ a.md", want: []string{`modify file "a.md" content`}},
	{name: "temp-and-rename save", script: "echo saved > .a.md.tmp; mv .a.md.tmp a.md",
		want: []string{`modify file "a.md" content`}},
	{name: "delete", script: "rm a.md", want: []string{`delete file "a.md"`}},
	{name: "delete a folder", script: "rm -r d", want: []string{`delete dir "d"`}},
	{name: "replaced folder", script: "rm -r e; mkdir e; echo new > e/g.md",
		want: []string{`delete file "e/f.md"`, `create file "e/g.md"`}},
	{name: "replaced folder, same file again", script: "rm -r e; mkdir e; echo phi > e/f.md; echo new > e/g.md",
		want: []string{`create file "e/g.md"`}},
	{name: "replaced folder, renamed", script: "rm -r e; mkdir e; echo new > e/g.md; mv e e2",
		// the new e lives in the upper layer only: its rename needs no redirect
		want: []string{`delete dir "e"`, `create dir "e2"`, `create file "e2/g.md"`}},
	{name: "file replaced by a folder", script: "rm a.md; mkdir a.md; echo x > a.md/x",
		want: []string{`delete file "a.md"`, `create dir "a.md"`, `create file "a.md/x"`}},
	{name: "python rename", script: `python3 -c "import os; os.rename('b.md','b2.md')"`,
		want: []string{`move file "b.md" -> "b2.md"`}},
	{name: "rename into a new folder", script: "mkdir arch; mv b.md arch/",
		want: []string{`create dir "arch"`, `move file "b.md" -> "arch/b.md"`}},
	{name: "rename then modify", script: "mv b.md b2.md; echo more >> b2.md",
		want:       []string{`move file "b.md" -> "b2.md"`, `modify file "b2.md" content`},
		wantUserNS: []string{`delete file "b.md"`, `create file "b2.md"`}},
	{name: "rename onto an existing file", script: "mv b.md a.md",
		want:       []string{`delete file "a.md"`, `move file "b.md" -> "a.md"`},
		wantUserNS: []string{`modify file "a.md" content`, `delete file "b.md"`}},
	{name: "rename away and a new file at the old name", script: "mv a.md z.md; echo new > a.md",
		want: []string{`move file "a.md" -> "z.md"`, `create file "a.md"`}},
	{name: "move out of a folder, then delete it", script: "mv d/c.md x.md; rm -r d",
		want: []string{`move file "d/c.md" -> "x.md"`, `delete dir "d"`}},
	{name: "folder rename", script: "mv d d2",
		want:       []string{`move dir "d" -> "d2"`},
		wantUserNS: []string{`delete dir "d"`, `create dir "d2"`, `create file "d2/c.md"`}},
	{name: "folder rename, then a change inside", script: "mv d d2; echo more >> d2/c.md; echo new > d2/n.md",
		want: []string{`move dir "d" -> "d2"`, `modify file "d2/c.md" content`, `create file "d2/n.md"`},
		wantUserNS: []string{`delete dir "d"`, `create dir "d2"`, `create file "d2/c.md"`,
			`create file "d2/n.md"`}},
	{name: "folder moved into a new folder", script: "mkdir n; mv d n/d2",
		want:       []string{`create dir "n"`, `move dir "d" -> "n/d2"`},
		wantUserNS: []string{`delete dir "d"`, `create dir "n"`, `create dir "n/d2"`, `create file "n/d2/c.md"`}},
	{name: "file moved out of a renamed folder", script: "mv d d2; mv d2/c.md c.md",
		want: []string{`move dir "d" -> "d2"`, `move file "d2/c.md" -> "c.md"`},
		// mv copies the folder (EXDEV), so c.md is a copy's rename: a new file.
		wantUserNS: []string{`create file "c.md"`, `delete dir "d"`, `create dir "d2"`}},
	{name: "renames inside a renamed folder", setup: "mkdir d/sub; echo x > d/sub/x.md",
		script: "mv d d2; mv d2/sub d2/sub2; mv d2/sub2/x.md d2/y.md; mv d2/c.md top.md",
		want: []string{`move dir "d" -> "d2"`, `move dir "d2/sub" -> "d2/sub2"`,
			`move file "d2/sub2/x.md" -> "d2/y.md"`, `move file "d2/c.md" -> "top.md"`},
		wantUserNS: []string{`delete dir "d"`, `create dir "d2"`, `create dir "d2/sub2"`,
			`create file "d2/y.md"`, `create file "top.md"`}},
	{name: "delete inside a renamed folder", script: "mv d d2; rm d2/c.md",
		want:       []string{`move dir "d" -> "d2"`, `delete file "d2/c.md"`},
		wantUserNS: []string{`delete dir "d"`, `create dir "d2"`}},
	{name: "symlink renamed", setup: "ln -s a.md l", script: "mv l l2",
		want: []string{`move symlink "l" -> "l2"`},
		// a symlink can't carry a user.* xattr, so its copy-up has no origin to trace
		wantUserNS: []string{`delete symlink "l"`, `create symlink "l2" -> "a.md"`}},
	{name: "equal candidates: the lexically first", setup: "echo same > dup1.md; echo same > dup2.md",
		script:     "mv dup2.md x.md; rm dup1.md",
		want:       []string{`delete file "dup1.md"`, `move file "dup2.md" -> "x.md"`},
		wantUserNS: []string{`delete file "dup2.md"`, `move file "dup1.md" -> "x.md"`}},
	{name: "fifo", script: "mkfifo d/p", want: []string{`special "d/p" p---------`}},
	{name: "hard link to a vault file", script: "ln a.md hl", want: []string{`link "hl" = "a.md"`}},
	{name: "hard link between new files", script: "echo x > n.md; ln n.md m.md",
		want: []string{`create file "m.md"`, `link "n.md" = "m.md"`}},
	{name: "rename and hard link", script: "ln b.md hl; mv b.md b2.md",
		want: []string{`move file "b.md" -> "b2.md"`, `link "hl" = "b2.md"`}},
	{name: "names in Cyrillic, with spaces and newlines",
		setup: `mkdir 'заметки'; printf 'текст\n' > 'заметки/с пробелом.md'`,
		script: `python3 -c "
import os
os.rename('заметки/с пробелом.md', 'заметки/новое\nимя.md')
os.mkdir('💬 чаты')
open('💬 чаты/чат 1\n.md', 'w').write('привет')
"`,
		want: []string{`move file "заметки/с пробелом.md" -> "заметки/новое\nимя.md"`,
			`create dir "💬 чаты"`, `create file "💬 чаты/чат 1\n.md"`}},
}

func TestDiffThroughOverlay(t *testing.T) {
	for _, mode := range overlayModes {
		t.Run(mode.name, func(t *testing.T) {
			for _, tc := range diffCases {
				t.Run(tc.name, func(t *testing.T) {
					base := testBase(t)
					vault := newTestVault(t, base, baseVault+tc.setup)
					l := newTestLayer(t, base)
					changeThroughOverlay(t, base, vault, l, mode, tc.script)
					changes, err := Diff(l, vault, DiffOptions{Privileged: mode.privileged})
					if err != nil {
						t.Fatal(err)
					}
					want := tc.want
					if !mode.privileged && tc.wantUserNS != nil {
						want = tc.wantUserNS
					}
					var got []string
					for _, c := range changes {
						got = append(got, summary(c))
						checkStates(t, vault, l, c)
					}
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("changes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
					}
				})
			}
		})
	}
}

// checkStates holds each change's states against the files themselves: Before against
// the vault (which the overlay never wrote), After against the upper layer.
func checkStates(t *testing.T, vault string, l *Layer, c Change) {
	t.Helper()
	if wantBefore := c.Op == Modify || c.Op == Delete || c.Op == Move; (c.Before != nil) != wantBefore {
		t.Errorf("%s: Before %+v", c, c.Before)
	}
	if (c.Op == Delete) != (c.After == nil) {
		t.Errorf("%s: After %+v", c, c.After)
	}
	if c.After != nil && c.After.Mode.IsRegular() && c.Op != Move {
		data, err := os.ReadFile(filepath.Join(l.Upper, filepath.FromSlash(c.Path)))
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		sum := sha256.Sum256(data)
		if c.After.SHA256 != hex.EncodeToString(sum[:]) || c.After.Size != int64(len(data)) {
			t.Errorf("%s: After %+v, the upper file holds %d bytes %x", c, c.After, len(data), sum)
		}
	}
	if c.Op == Delete && c.Before.Mode.IsRegular() {
		data, err := os.ReadFile(filepath.Join(vault, filepath.FromSlash(c.Path)))
		if err == nil {
			sum := sha256.Sum256(data)
			if c.Before.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("%s: Before %+v, the vault file holds %x", c, c.Before, sum)
			}
		}
	}
}

func TestDiffModifyStates(t *testing.T) {
	base := testBase(t)
	vault := newTestVault(t, base, baseVault)
	l := newTestLayer(t, base)
	changeThroughOverlay(t, base, vault, l, asRoot, "printf 'alpha!\n' > a.md")
	changes, err := Diff(l, vault, DiffOptions{Privileged: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 {
		t.Fatalf("changes %v, want one modify", changes)
	}
	old, new := sha256.Sum256([]byte("alpha\n")), sha256.Sum256([]byte("alpha!\n"))
	c := changes[0]
	want := Change{Op: Modify, Path: "a.md",
		Before: &State{Mode: 0o644, Size: 6, SHA256: hex.EncodeToString(old[:])},
		After:  &State{Mode: 0o644, Size: 7, SHA256: hex.EncodeToString(new[:])}}
	if c.Op != want.Op || c.Path != want.Path || *c.Before != *want.Before || *c.After != *want.After {
		t.Errorf("got %s %+v %+v, want %+v %+v", c, c.Before, c.After, want.Before, want.After)
	}
}

func TestDiffLimits(t *testing.T) {
	base := testBase(t)
	vault := newTestVault(t, base, baseVault)
	l := newTestLayer(t, base)
	changeThroughOverlay(t, base, vault, l, asRoot, "echo 1 > one.md; echo 22 > two.md; head -c 5000 /dev/zero > big.bin")
	for _, tc := range []struct {
		opt  DiffOptions
		what string
		ok   bool
	}{
		{DiffOptions{Privileged: true}, "", true},
		{DiffOptions{Privileged: true, MaxFiles: 3, MaxBytes: 5005}, "", true},
		{DiffOptions{Privileged: true, MaxFiles: 2}, "files", false},
		{DiffOptions{Privileged: true, MaxBytes: 5004}, "bytes", false},
	} {
		_, err := Diff(l, vault, tc.opt)
		var limit *LimitError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%+v: %v", tc.opt, err)
		case !tc.ok && (!errors.As(err, &limit) || limit.What != tc.what):
			t.Errorf("%+v: error %v, want a *LimitError on %s", tc.opt, err, tc.what)
		case !tc.ok && limit.Got <= limit.Limit:
			t.Errorf("%+v: %+v counted no more than the limit", tc.opt, limit)
		}
	}
}

// The upper layer is read without following links: a symlink planted where a folder
// of the vault stood is a change of its own, and nothing behind it is read.
func TestDiffDoesNotFollowLinks(t *testing.T) {
	base := testBase(t)
	vault := newTestVault(t, base, baseVault)
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(outside, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := newTestLayer(t, base)
	changeThroughOverlay(t, base, vault, l, asRoot, "rm -r d; ln -s "+outside+" d")
	changes, err := Diff(l, vault, DiffOptions{Privileged: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, summary(c))
	}
	want := []string{`delete dir "d"`, fmt.Sprintf(`create symlink "d" -> %q`, outside)}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes %q, want %q", got, want)
	}
}

// craftedUpper builds an upper layer by hand, for forms the kernel here does not write
// itself (xattr whiteouts) and for xattrs no command can set through the overlay.
func craftedUpper(t *testing.T, build func(upper string)) (string, *Layer) {
	t.Helper()
	base := testBase(t)
	vault := newTestVault(t, base, baseVault)
	l := newTestLayer(t, base)
	build(l.Upper)
	return vault, l
}

func setXattr(t *testing.T, p, name, value string) {
	t.Helper()
	if err := unix.Lsetxattr(p, name, []byte(value), 0); err != nil {
		missingFeature(t, "set %s on %s: %v", name, p, err)
	}
}

func TestDiffXattrWhiteout(t *testing.T) {
	vault, l := craftedUpper(t, func(upper string) {
		e := filepath.Join(upper, "e")
		if err := os.Mkdir(e, 0o755); err != nil {
			t.Fatal(err)
		}
		setXattr(t, e, "trusted.overlay.opaque", "x") // holds xattr whiteouts; not opaque
		if err := os.WriteFile(filepath.Join(e, "f.md"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		setXattr(t, filepath.Join(e, "f.md"), "trusted.overlay.whiteout", "")
	})
	changes, err := Diff(l, vault, DiffOptions{Privileged: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || summary(changes[0]) != `delete file "e/f.md"` {
		t.Errorf("changes %v, want the delete of e/f.md", changes)
	}
}

// A redirect that would name something outside the vault is an error, never a path.
func TestDiffRedirectOutsideVault(t *testing.T) {
	for _, redirect := range []string{"../../etc", "/../etc", "a/../../x", ""} {
		vault, l := craftedUpper(t, func(upper string) {
			d := filepath.Join(upper, "d2")
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			setXattr(t, d, "trusted.overlay.redirect", redirect)
		})
		if changes, err := Diff(l, vault, DiffOptions{Privileged: true}); err == nil {
			t.Errorf("redirect %q: changes %v, want an error", redirect, changes)
		}
	}
}

// A metacopy holds no data: Diff refuses it rather than hash a hole as the new content.
func TestDiffRefusesMetacopy(t *testing.T) {
	vault, l := craftedUpper(t, func(upper string) {
		p := filepath.Join(upper, "a.md")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 6); err != nil {
			t.Fatal(err)
		}
		setXattr(t, p, "trusted.overlay.origin", "")
		setXattr(t, p, "trusted.overlay.metacopy", "")
	})
	if changes, err := Diff(l, vault, DiffOptions{Privileged: true}); err == nil || !strings.Contains(err.Error(), "metacopy") {
		t.Errorf("changes %v, error %v, want a metacopy error", changes, err)
	}
}

// Diff told the wrong mount would miss an opaque folder's deletions: it refuses instead.
func TestDiffRefusesTheOtherMountsMarks(t *testing.T) {
	for _, mode := range overlayModes {
		t.Run(mode.name, func(t *testing.T) {
			base := testBase(t)
			vault := newTestVault(t, base, baseVault)
			l := newTestLayer(t, base)
			changeThroughOverlay(t, base, vault, l, mode, "rm -r e; mkdir e")
			if _, err := Diff(l, vault, DiffOptions{Privileged: mode.privileged}); err != nil {
				t.Fatalf("told the mount: %v", err)
			}
			if changes, err := Diff(l, vault, DiffOptions{Privileged: !mode.privileged}); err == nil {
				t.Errorf("told the other mount: changes %v, want an error", changes)
			}
		})
	}
}
