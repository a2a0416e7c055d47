package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
	"golang.org/x/sys/unix"
)

// newLayer makes an upper and a work folder beside the vault, never in
// it, as txn.NewLayer does in the state folder: a private folder holding
// both, the upper one made as the server makes it (0700, its own).
func newLayer(t *testing.T) *Overlay {
	t.Helper()
	dir := t.TempDir()
	var fs unix.Statfs_t
	if unix.Statfs(dir, &fs) == nil && upperFSProblem(int64(fs.Type)) != "" {
		// The test machine's temp folder is on overlayfs (a container):
		// tmpfs can hold an upper layer.
		d, err := os.MkdirTemp("/dev/shm", "vaultgate-layer-")
		must(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		dir = d
	}
	must(t, os.Chmod(dir, 0o700))
	o := &Overlay{Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work")}
	must(t, os.Mkdir(o.Upper, 0o700))
	must(t, os.Mkdir(o.Work, 0o700))
	// overlayfs leaves folders of mode 0 in the work folder (work,
	// incompat/volatile), which only root can remove as they are.
	t.Cleanup(func() { openUp(o.Work) })
	return o
}

// openUp makes dir and every folder in it the owner's to remove.
func openUp(dir string) {
	os.Chmod(dir, 0o700)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			openUp(filepath.Join(dir, e.Name()))
		}
	}
}

// withOverlay puts the call's vault on the overlay o.
func withOverlay(o *Overlay) func(*Request) {
	return func(r *Request) { r.Wall.Overlay = o }
}

// overlaid runs command under the required wall with the vault as an
// overlay on o, and checks that the overlay was up.
func overlaid(t *testing.T, v *zoneVault, o *Overlay, command string, mod ...func(*Request)) Result {
	t.Helper()
	res := walled(t, v.tab, v.dir, command, append([]func(*Request){withOverlay(o)}, mod...)...)
	if !strings.Contains(" "+strings.Join(res.Isolation, " ")+" ", " overlay ") {
		t.Errorf("Run(%q): isolation %v: the overlay was not up", command, res.Isolation)
	}
	return res
}

// withControlNames gives the vault every control name at its root and at
// each writable zone's root, so that the wall makes no placeholder (whose
// creation and removal change a folder's mtime) and the vault can be
// compared byte for byte, times included.
func withControlNames(t *testing.T, v *zoneVault) {
	t.Helper()
	make := func(rel string) {
		p := filepath.Join(v.dir, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if zones.ControlIsFile(rel) {
			must(t, os.WriteFile(p, []byte("{}"), 0o644))
		} else {
			must(t, os.MkdirAll(p, 0o755))
		}
	}
	for _, d := range []string{".", "w", "e", "c"} {
		for _, n := range zones.ControlNames {
			make(filepath.Join(d, n))
		}
	}
	for _, rel := range zones.ControlRoots {
		make(rel)
	}
}

// upperEntry describes what the upper folder holds at rel.
func upperEntry(t *testing.T, o *Overlay, rel string) (fs.FileInfo, string) {
	t.Helper()
	p := filepath.Join(o.Upper, rel)
	fi, err := os.Lstat(p)
	if err != nil {
		t.Errorf("upper folder: %s: %v", rel, err)
		return nil, ""
	}
	if fi.Mode().IsRegular() {
		b, _ := os.ReadFile(p)
		return fi, string(b)
	}
	return fi, ""
}

func isWhiteout(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&fs.ModeCharDevice != 0 && st.Rdev == 0
}

// overlayXattr is the overlay's record name on rel in the upper folder,
// or an error: trusted.overlay.* as root, user.overlay.* (userxattr) in
// a user namespace.
func overlayXattr(o *Overlay, rel, name string) ([]byte, error) {
	prefix := "trusted.overlay."
	if os.Geteuid() != 0 {
		prefix = "user.overlay."
	}
	buf := make([]byte, 4096)
	n, err := unix.Lgetxattr(filepath.Join(o.Upper, rel), prefix+name, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// TestWallOverlay: under the overlay, whatever a walled command does —
// write, delete, rename (mv, python), chmod, make folders, sed -i — leaves
// the vault byte for byte as it was, and the upper folder holds each change
// as overlayfs records it. Protected and hidden zones stay as walled as
// without the overlay. It runs as root here, and as a server that is not
// root in TestWallOverlayUnprivileged.
func TestWallOverlay(t *testing.T) {
	requireWall(t)
	privileged := os.Geteuid() == 0
	cases := []struct {
		name, cmd string
		check     func(t *testing.T, o *Overlay, res Result)
	}{
		{"write", `echo changed > e/f.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if _, body := upperEntry(t, o, "e/f.txt"); body != "changed\n" {
				t.Errorf("upper e/f.txt holds %q", body)
			}
		}},
		{"create in a create zone", `echo new > c/new.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if _, body := upperEntry(t, o, "c/new.txt"); body != "new\n" {
				t.Errorf("upper c/new.txt holds %q", body)
			}
		}},
		{"rm", `rm e/f2.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if fi, _ := upperEntry(t, o, "e/f2.txt"); fi != nil && !isWhiteout(fi) {
				t.Errorf("upper e/f2.txt is %v, want a whiteout (character device 0/0)", fi.Mode())
			}
		}},
		{"mv", `mv e/f3.txt e/f3-moved.txt && [ ! -e e/f3.txt ] && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			checkRenamed(t, o, "e/f3.txt", "e/f3-moved.txt", "content of e\n", privileged)
		}},
		{"python os.rename in a create zone", `python3 -c "import os; os.rename('c/f3.txt', 'c/renamed.txt')" && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			checkRenamed(t, o, "c/f3.txt", "c/renamed.txt", "content of c\n", privileged)
		}},
		{"chmod", `chmod 600 e/f.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			fi, body := upperEntry(t, o, "e/f.txt")
			if fi == nil || fi.Mode() != 0o600 || body != "content of e\n" {
				t.Errorf("upper e/f.txt: %v %q, want the whole file copied up with mode 0600", fi, body)
			}
			if _, err := overlayXattr(o, "e/f.txt", "metacopy"); err == nil {
				t.Error("upper e/f.txt is a metacopy: the diff would not see the whole file")
			}
		}},
		{"mkdir", `mkdir -p e/sub/deeper && echo x > e/sub/deeper/n.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if fi, _ := upperEntry(t, o, "e/sub/deeper"); fi != nil && !fi.IsDir() {
				t.Errorf("upper e/sub/deeper is %v", fi.Mode())
			}
			if _, body := upperEntry(t, o, "e/sub/deeper/n.txt"); body != "x\n" {
				t.Errorf("upper e/sub/deeper/n.txt holds %q", body)
			}
		}},
		{"sed -i in an edit zone", `sed -i s/content/CONTENT/ e/f.txt && cat e/f.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if _, body := upperEntry(t, o, "e/f.txt"); body != "CONTENT of e\n" {
				t.Errorf("upper e/f.txt holds %q", body)
			}
		}},
		{"a write zone", `echo w > w/f.txt && rm w/f2.txt && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if _, body := upperEntry(t, o, "w/f.txt"); body != "w\n" {
				t.Errorf("upper w/f.txt holds %q", body)
			}
		}},
		{"rename a folder", `python3 -c "import os; os.rename('e/d', 'e/d2')" && echo ok`, func(t *testing.T, o *Overlay, res Result) {
			if !privileged {
				// userxattr: no redirect_dir, so overlayfs refuses.
				if !strings.Contains(res.Stderr, "Invalid cross-device link") {
					t.Errorf("renaming a folder of the vault in a user namespace: want EXDEV, got %q %q", res.Stdout, res.Stderr)
				}
				return
			}
			if fi, _ := upperEntry(t, o, "e/d2"); fi != nil && !fi.IsDir() {
				t.Errorf("upper e/d2 is %v", fi.Mode())
			}
			if r, err := overlayXattr(o, "e/d2", "redirect"); err != nil || !strings.Contains(string(r), "d") {
				t.Errorf("upper e/d2: redirect %q, %v: the folder's rename is not recorded", r, err)
			}
		}},
		{"protected and hidden", `echo x > p/f.txt; rm p/f2.txt; mv p/f3.txt e/; cat h/f.txt state/audit.jsonl vault.toml; ls -A h; ls -A state; echo x > h/new.txt; echo x > vault.toml; rm -rf p h state vault.toml; echo end`, func(t *testing.T, o *Overlay, res Result) {
			if strings.Contains(res.Stdout+res.Stderr, hiddenMark) {
				t.Errorf("hidden content shown: %s%s", res.Stdout, res.Stderr)
			}
			if strings.TrimSpace(res.Stdout) != "end" {
				t.Errorf("stdout %q: want only end", res.Stdout)
			}
			for _, d := range []string{"p", "h", "state", "vault.toml"} {
				if _, err := os.Lstat(filepath.Join(o.Upper, d)); err == nil {
					t.Errorf("the upper folder holds %s: a covered zone was written through the overlay", d)
				}
			}
		}},
	}
	for _, layer := range []string{"disk", "memory"} {
		for _, c := range cases {
			t.Run(layer+"/"+c.name, func(t *testing.T) {
				v := newZoneVault(t, zones.Edit, nil)
				must(t, os.MkdirAll(filepath.Join(v.dir, "e/d"), 0o755))
				must(t, os.WriteFile(filepath.Join(v.dir, "e/d/x.txt"), []byte("x\n"), 0o644))
				withControlNames(t, v)
				o := newLayer(t)
				if layer == "memory" {
					o = inMemory(t)
				}
				before := snapshot(t, v.dir)
				res := overlaid(t, v, o, c.cmd)
				if c.name != "protected and hidden" && c.name != "rename a folder" && !strings.HasSuffix(res.Stdout, "ok\n") {
					t.Errorf("the command failed: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
				}
				sameSnapshot(t, "vault", before, snapshot(t, v.dir))
				c.check(t, upperOf(t, o, res), res)
			})
		}
	}
}

// inMemory asks for the call's layer on a tmpfs of its own.
func inMemory(t *testing.T) *Overlay {
	t.Helper()
	if L := requireWall(t); !L.MemoryLayer {
		t.Fatalf("the in-memory layer is unavailable: %v", ProbeWall("").Missing["in-memory layer"])
	}
	return &Overlay{Memory: &MemoryLayer{MaxBytes: 1 << 20, MaxFiles: 100}}
}

// upperOf is the call's upper folder as the tests read it: o's own, or,
// in memory, the folder the helper handed over (closed with the test).
func upperOf(t *testing.T, o *Overlay, res Result) *Overlay {
	t.Helper()
	if o.Memory == nil {
		if res.Upper != nil {
			t.Error("a layer on disk came with an upper folder handed over")
		}
		return o
	}
	if res.Upper == nil {
		t.Fatal("the in-memory layer's upper folder was not handed over")
	}
	t.Cleanup(func() { res.Upper.Close() })
	return &Overlay{Upper: fmt.Sprintf("/proc/self/fd/%d", res.Upper.Fd())}
}

// TestWallMemoryLayer: the in-memory layer holds what the command
// changed and nothing of it reaches the vault; its tmpfs is sized from
// the caps, so a write past them (bytes, or files) is stopped while the
// command runs, and the layer then says it is full.
func TestWallMemoryLayer(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	withControlNames(t, v)
	o := &Overlay{Memory: &MemoryLayer{MaxBytes: 64 << 10, MaxFiles: 10}}
	if L := requireWall(t); !L.MemoryLayer {
		t.Fatalf("the in-memory layer is unavailable: %v", ProbeWall("").Missing["in-memory layer"])
	}
	before := snapshot(t, v.dir)
	res := overlaid(t, v, o, `head -c 60000 /dev/zero > e/big.bin && echo ok`)
	if res.Stdout != "ok\n" || !strings.Contains(strings.Join(res.Isolation, " "), "layer:memory") {
		t.Fatalf("within the caps: %+v", res)
	}
	up := upperOf(t, o, res)
	if fi, _ := upperEntry(t, up, "e/big.bin"); fi == nil || fi.Size() != 60000 {
		t.Errorf("upper e/big.bin: %v", fi)
	}
	if full, err := MemoryFull(res.Upper, *o.Memory); err != nil || full != "" {
		t.Errorf("a call within its caps: full %q, %v", full, err)
	}
	sameSnapshot(t, "vault", before, snapshot(t, v.dir))

	res = overlaid(t, v, o, `head -c 100000000 /dev/zero > e/huge.bin; echo "exit $?"`)
	if !strings.Contains(res.Stderr, "No space left on device") || res.Stdout != "exit 1\n" {
		t.Errorf("a write past the caps: stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	upperOf(t, o, res)
	if full, err := MemoryFull(res.Upper, *o.Memory); err != nil || full != "bytes" {
		t.Errorf("a write past the caps: full %q, %v", full, err)
	}
	res = overlaid(t, v, o, `for i in $(seq 1 100); do : > e/n$i.txt || break; done; echo "at $i"`)
	upperOf(t, o, res)
	if full, err := MemoryFull(res.Upper, *o.Memory); err != nil || full != "files" || res.Stdout == "at 100\n" {
		t.Errorf("files past the caps: stdout %q: full %q, %v", res.Stdout, full, err)
	}
	sameSnapshot(t, "vault", before, snapshot(t, v.dir))
}

// checkRenamed: a renamed file is in the upper folder under its new name,
// its old name is a whiteout, and it carries overlayfs's record of where it
// came from (a file handle as root; empty in a user namespace).
func checkRenamed(t *testing.T, o *Overlay, from, to, body string, privileged bool) {
	t.Helper()
	if _, got := upperEntry(t, o, to); got != body {
		t.Errorf("upper %s holds %q, want %q", to, got, body)
	}
	if fi, _ := upperEntry(t, o, from); fi != nil && !isWhiteout(fi) {
		t.Errorf("upper %s is %v, want a whiteout", from, fi.Mode())
	}
	origin, err := overlayXattr(o, to, "origin")
	switch {
	case err != nil:
		t.Errorf("upper %s has no origin record: %v", to, err)
	case privileged && len(origin) == 0:
		t.Errorf("upper %s: as root the origin record holds the lower file's handle, got none", to)
	}
}

// TestWallOverlayRoot: the overlay's root takes the upper folder's owner
// and mode, which the call gives from the vault root: a run_as user who
// owns the vault writes at its root, and the upper folder is no longer
// the server's 0700.
func TestWallOverlayRoot(t *testing.T) {
	u := requireTestUser(t)
	v := newZoneVault(t, zones.Edit, u)
	must(t, os.Chmod(v.dir, 0o750))
	withControlNames(t, v)
	o := newLayer(t)
	before := snapshot(t, v.dir)
	res := overlaid(t, v, o, `echo made > made.md && stat -c '%u %a' . && echo ok`, func(r *Request) { r.Wall.RunAs = u.Name })
	if want := fmt.Sprintf("%d 750\nok\n", u.UID); res.Stdout != want {
		t.Errorf("stdout %q stderr %q, want %q", res.Stdout, res.Stderr, want)
	}
	var st unix.Stat_t
	must(t, unix.Lstat(o.Upper, &st))
	if int(st.Uid) != u.UID || int(st.Gid) != u.GID || st.Mode&0o7777 != 0o750 {
		t.Errorf("upper root %d:%d %o, want the vault root's %d:%d 750", st.Uid, st.Gid, st.Mode&0o7777, u.UID, u.GID)
	}
	if _, body := upperEntry(t, o, "made.md"); body != "made\n" {
		t.Errorf("upper made.md holds %q", body)
	}
	sameSnapshot(t, "vault", before, snapshot(t, v.dir))
}

// TestWallOverlayZoneMatrix: the zone matrix's programs under the overlay.
// The kernel lets them do everything in write, edit and create zones (the
// diff judges what they did), only read in protected ones and nothing in
// hidden and no-zone ones; the vault itself is not changed at all.
func TestWallOverlayZoneMatrix(t *testing.T) {
	requireWall(t)
	asUsers := []bool{false}
	if os.Geteuid() == 0 {
		asUsers = append(asUsers, true) // run_as needs a root server
	}
	for _, asUser := range asUsers {
		for name, script := range programs {
			label := name
			if asUser {
				label += "/run_as"
			}
			t.Run(label, func(t *testing.T) {
				var u *User
				if asUser {
					u = requireTestUser(t)
				}
				v := newZoneVault(t, zones.NoZone, u)
				o := newLayer(t)
				before := snapshot(t, v.dir)
				cmd := "set -- w e c p h n\n" + script
				switch name {
				case "python3":
					cmd = "python3 -c " + shellQuote(script) + " w e c p h n"
				case "perl":
					cmd = "perl -e " + shellQuote(script) + " w e c p h n"
				}
				res := overlaid(t, v, o, cmd, func(r *Request) {
					if u != nil {
						r.Wall.RunAs = u.Name
					}
				})
				if strings.Contains(res.Stdout+res.Stderr, hiddenMark) {
					t.Errorf("hidden content shown: %s%s", res.Stdout, res.Stderr)
				}
				n := 0
				sc := bufio.NewScanner(strings.NewReader(res.Stdout))
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					if len(f) != 3 {
						continue
					}
					n++
					m := zoneDirs[f[0]]
					if f[0] == "n" {
						m = zones.NoZone
					}
					want := m.Allows(zones.OpCreate) || (m == zones.Protected && (f[1] == "read" || f[1] == "list"))
					if got := f[2] == "ok"; got != want {
						t.Errorf("%s %s in zone %s (%s) under the overlay: ok=%v, want %v", name, f[1], f[0], m, got, want)
					}
				}
				if n == 0 {
					t.Fatalf("no results: stdout %q stderr %q", res.Stdout, res.Stderr)
				}
				after := snapshot(t, v.dir)
				// The placeholders (.git and the like at the zone roots) come
				// and go around the call; only their folders' times change.
				for p, s := range before {
					if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
						before[p], after[p] = dropMtime(s), dropMtime(after[p])
					}
				}
				sameSnapshot(t, "vault", before, after)
			})
		}
	}
}

func dropMtime(s string) string {
	f := strings.Fields(s)
	out := f[:0]
	for _, x := range f {
		if !strings.HasPrefix(x, "mtime=") {
			out = append(out, x)
		}
	}
	return strings.Join(out, " ")
}

// TestWallOverlayUnprivileged runs TestWallOverlay and the zone matrix
// under the overlay again as a server that
// is not root: the test binary, started as an ordinary user, builds the
// wall in a user namespace, where the overlay is mounted with userxattr.
func TestWallOverlayUnprivileged(t *testing.T) {
	u := requireTestUser(t)
	requireWall(t)
	exe, err := os.Executable()
	must(t, err)
	dir, err := os.MkdirTemp("", "vaultgate-unpriv-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "sandbox.test")
	b, err := os.ReadFile(exe)
	must(t, err)
	must(t, os.WriteFile(bin, b, 0o755))
	home := filepath.Join(dir, "home")
	must(t, os.Mkdir(home, 0o700))
	must(t, os.Chown(home, u.UID, u.GID))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestWallOverlay(ZoneMatrix)?$", "-test.v", "-test.count=1")
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", unprivilegedRun + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID), Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWallOverlay ") || !strings.Contains(string(out), "--- PASS: TestWallOverlayZoneMatrix ") {
		t.Fatalf("TestWallOverlay as %s (not root): %v\n%s", u.Name, err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Errorf("TestWallOverlay as %s skipped a case:\n%s", u.Name, out)
	}
}

// unprivilegedRun marks the test binary's run as an ordinary user.
const unprivilegedRun = "VAULTGATE_TEST_UNPRIVILEGED"

// TestWallOverlayMissing: an overlay asked for where the kernel can't mount
// one fails a required wall, naming it; a best-effort wall runs without it
// (the vault bound as before, with today's Landlock rights) and says so.
func TestWallOverlayMissing(t *testing.T) {
	L := requireWall(t)
	v := newZoneVault(t, zones.Edit, nil)
	o := newLayer(t)
	L.Overlay = false
	_, err := Run(context.Background(), Request{Command: "true", Dir: v.dir, Wall: &WallConfig{Zones: v.tab, Required: true, Layers: L, Overlay: o}})
	var we *WallError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "overlay") {
		t.Errorf("required wall, overlay missing: %v", err)
	}
	cfg := &WallConfig{Zones: v.tab, Layers: L, Overlay: o}
	w, err := BuildWall(cfg, "/tmp/home")
	must(t, err)
	var b strings.Builder
	w.Describe(&b)
	if w.Overlay != nil || !strings.Contains(b.String(), "overlay  none") {
		t.Errorf("best effort without the overlay:\n%s", b.String())
	}
	res, err := Run(context.Background(), Request{Command: "echo x > e/f.txt; rm e/f2.txt; echo end", Dir: v.dir, Env: []string{"PATH"}, Environ: os.Environ(), Wall: cfg})
	if err != nil || strings.Contains(strings.Join(res.Isolation, " "), "overlay") || !strings.Contains(res.Stdout, "end") {
		t.Errorf("best effort without the overlay: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(v.dir, "e/f.txt")); string(b) != "x\n" {
		t.Errorf("without the overlay the edit zone is written directly: %q", b)
	}
	if !exists(filepath.Join(v.dir, "e/f2.txt")) {
		t.Error("without the overlay an edit zone lost a file")
	}
}

// TestOverlayGrants: under the overlay the vault's writable zones may
// remove and rename (the diff judges them); absolute zones outside the
// vault and the plan without an overlay keep today's rights.
func TestOverlayGrants(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	outside := t.TempDir()
	tab, err := zones.New(v.dir, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "c", Mode: zones.Create}, {Path: "w", Mode: zones.Write}, {Path: "p", Mode: zones.Protected}, {Path: outside, Mode: zones.Edit}}, zones.Options{})
	must(t, err)
	grants := func(o *Overlay) map[string]Access {
		w, err := BuildWall(&WallConfig{Zones: tab, Layers: Layers{Mount: true, Overlay: true}, Overlay: o}, "/tmp/home")
		must(t, err)
		m := map[string]Access{}
		for _, g := range w.Grants {
			m[g.Path] = g.Access
		}
		for _, mt := range w.Mounts {
			if mt.Path == outside && mt.Kind != MountRW {
				t.Errorf("the absolute zone %s is %s", outside, mt.Kind)
			}
		}
		return m
	}
	j := func(rel string) string { return filepath.Join(v.dir, rel) }
	today := grants(nil)
	want := map[string]Access{v.dir: AccessChange, j("c"): AccessChange, j("w"): AccessWrite, outside: AccessChange}
	for p, a := range want {
		if today[p] != a {
			t.Errorf("without the overlay %s is %q, want %q", p, today[p], a)
		}
	}
	over := grants(&Overlay{Upper: "/u", Work: "/w"})
	want = map[string]Access{v.dir: AccessWrite, j("c"): AccessWrite, j("w"): AccessWrite, outside: AccessChange}
	for p, a := range want {
		if over[p] != a {
			t.Errorf("under the overlay %s is %q, want %q", p, over[p], a)
		}
	}
	if _, ok := over[j("p")]; ok {
		t.Error("a protected zone got a Landlock grant under the overlay")
	}
	w, err := BuildWall(&WallConfig{Zones: tab, Layers: Layers{Mount: true, Overlay: true}, Overlay: &Overlay{Upper: "/state/upper", Work: "/state/work"}}, "/tmp/home")
	must(t, err)
	var b strings.Builder
	w.Describe(&b)
	for _, want := range []string{"overlay  " + v.dir, "/state/upper", "writable, in the overlay", outside + " "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Describe under the overlay lacks %q:\n%s", want, b.String())
		}
	}
}

// TestOverlayCheck refuses upper and work folders overlayfs can't use, or
// that the command would see: inside the vault, overlapping, on two file
// systems, on overlayfs or FUSE.
func TestOverlayCheck(t *testing.T) {
	vault := t.TempDir()
	good := newLayer(t)
	must(t, CheckOverlay(*good, vault))
	inVault := filepath.Join(vault, "state", "upper")
	must(t, os.MkdirAll(inVault, 0o700))
	shm, err := os.MkdirTemp("/dev/shm", "vaultgate-work-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(shm) })
	cases := []struct {
		name string
		o    Overlay
		want string
	}{
		{"upper inside the vault", Overlay{Upper: inVault, Work: good.Work}, "inside the vault"},
		{"upper is the vault", Overlay{Upper: vault, Work: good.Work}, "inside the vault"},
		{"work inside upper", Overlay{Upper: good.Upper, Work: good.Upper}, "overlap"},
		{"two file systems", Overlay{Upper: good.Upper, Work: shm}, "different file systems"},
		{"relative", Overlay{Upper: "upper", Work: good.Work}, "absolute"},
		{"missing", Overlay{Upper: good.Upper + "-gone", Work: good.Work}, "upper folder"},
	}
	for _, c := range cases {
		if err := CheckOverlay(c.o, vault); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	for fsType, want := range map[int64]string{unix.OVERLAYFS_SUPER_MAGIC: "overlayfs", unix.FUSE_SUPER_MAGIC: "FUSE", unix.EXT4_SUPER_MAGIC: "", unix.TMPFS_MAGIC: ""} {
		if got := upperFSProblem(fsType); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("upper on file system %#x: %q, want %q", fsType, got, want)
		}
	}
	// Run refuses such a layer before anything starts.
	v := newZoneVault(t, zones.Edit, nil)
	bad := &Overlay{Upper: filepath.Join(v.dir, "w"), Work: filepath.Join(v.dir, "e")}
	_, err = Run(context.Background(), Request{Command: "true", Dir: v.dir, Wall: &WallConfig{Zones: v.tab, Layers: Layers{Mount: true, Overlay: true}, Overlay: bad}})
	if err == nil || !strings.Contains(err.Error(), "inside the vault") {
		t.Errorf("Run with the upper folder in the vault: %v", err)
	}
}
