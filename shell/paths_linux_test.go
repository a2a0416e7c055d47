package shell

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
	"testing"
)

// kernelPath is where the kernel's own lookup of p leads, or "" when it
// fails: the path is opened (O_PATH, a final link followed or not) and the
// descriptor's name read back.
func kernelPath(t *testing.T, p string, follow bool) string {
	t.Helper()
	flags := unix.O_PATH | syscall.O_CLOEXEC
	if !follow {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(p, flags, 0)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// TestWalkMatchesKernel builds a tree of links whose targets climb with
// "..", through other links, and checks that the analysis' walk of
// thousands of random paths through it lands where the kernel's lookup
// does, whenever the kernel's lookup succeeds.
func TestWalkMatchesKernel(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"v/a/b/c", "v/p/q", "v/z", "out/o"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"v/a/b/c/f", "v/p/q/g", "v/z/h", "out/o/s"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"v/a/up":     ".",            // a/up/.. is v
		"v/a/deep":   "b/c",          // a/deep/.. is a/b
		"v/p/q/back": "../../a/deep", // through another link
		"v/z/climb":  "../a/deep/..", // ".." in a target, after a link
		"v/z/abs":    "",             // absolute, filled in below
		"v/z/loop":   "loop",
		"v/z/out":    "../../out/o",
		"v/a/b/c/ff": "f",
	} {
		if link == "v/z/abs" {
			target = filepath.Join(root, "v/p/q")
		}
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	a := newAnalyzer(Options{Vault: filepath.Join(root, "v"), Stat: lstat, Readlink: readlink, ReadDir: readDir, MaxDepth: 5})
	st := a.initialState()
	names := []string{"a", "b", "c", "f", "ff", "p", "q", "g", "z", "h", "up", "deep", "back", "climb", "abs", "loop", "out", "o", "s", "..", "..", "."}
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for range 60000 {
		parts := []string{root, "v"}
		for range 1 + rng.IntN(6) {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		p := strings.Join(parts, "/")
		follow := rng.IntN(2) == 0
		want := kernelPath(t, p, follow)
		if want == "" {
			continue
		}
		checked++
		got := a.resolveAbs(st, p, follow)
		if got.unknown || got.none || got.abs != want {
			t.Fatalf("walk of %s (follow %v) = %+v, the kernel's lookup = %s", strings.TrimPrefix(p, root), follow, got, want)
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d paths the kernel could look up", checked)
	}
}

// TestWalkLinksMade checks the links a command makes are walked as the ones
// on disk are: "..", after one, is taken from its target.
func TestWalkLinksMade(t *testing.T) {
	a := newAnalyzer(Options{Vault: "/v", Cwd: "/v", Stat: lstat, Readlink: readlink, ReadDir: readDir, MaxDepth: 5})
	st := a.initialState()
	st.links["/v/notes/m"] = "/v/notes/../мета/бобер"
	st.links["/v/notes/q"] = "/v/notes/m/.."
	for _, c := range []struct{ p, want string }{
		{"/v/notes/m/../план.md", "/v/мета/план.md"},
		{"/v/notes/q/план.md", "/v/мета/план.md"},
		{"/v/notes/q/../x", "/v/x"},
		{"/v/notes/m/../../notes/a", "/v/notes/a"},
	} {
		if got := a.resolveAbs(st, c.p, true); got.abs != c.want {
			t.Errorf("walk of %s = %+v, want %s", c.p, got, c.want)
		}
	}
	st.links["/v/l"] = "/v/l"
	if got := a.resolveAbs(st, "/v/l/x", true); !got.unknown {
		t.Errorf("a link to itself walks to %+v, want unknown (ELOOP)", got)
	}
}
