//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
	"golang.org/x/sys/unix"
)

// readySpare waits for a spare to be ready and returns it (still in the
// pool): the one the next call takes.
func readySpare(t *testing.T) *spare {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		spares.Lock()
		for _, q := range spares.ready {
			if len(q) > 0 {
				spares.Unlock()
				return q[0]
			}
		}
		spares.Unlock()
	}
	t.Fatal("no spare helper was started after a call")
	return nil
}

// dropSpares ends every spare, once none is starting, so that the next
// spare ready is one the test's own call started.
func dropSpares(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		spares.Lock()
		starting := 0
		for _, n := range spares.starting {
			starting += n
		}
		if starting == 0 || time.Now().After(deadline) {
			for k, q := range spares.ready {
				delete(spares.ready, k)
				for _, sp := range q {
					sp.discard()
				}
			}
			spares.Unlock()
			return
		}
		spares.Unlock()
	}
}

// waitingSpares counts the spares ready.
func waitingSpares() int {
	spares.Lock()
	defer spares.Unlock()
	n := 0
	for _, q := range spares.ready {
		n += len(q)
	}
	return n
}

// TestWallAhead: after a walled call of a server (Request.Ahead), the
// next call's helper is started ahead and serves the next call, whose
// output and wall are a fresh helper's; a spare is not used once the
// server's mount table has changed, nor once it has died, and the call is
// made all the same.
func TestWallAhead(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	walled(t, v.tab, v.dir, "true")
	readySpare(t)
	hits := spareHits.Load()
	res := walled(t, v.tab, v.dir, `echo two; cat e/f.txt; cat h/f.txt; touch /x 2>&1 | tail -c 30`)
	if spareHits.Load() != hits+1 {
		t.Fatalf("the call after a call did not take the spare (%d hits, were %d)", spareHits.Load(), hits)
	}
	if !strings.HasPrefix(res.Stdout, "two\n") || strings.Contains(res.Stdout, hiddenMark) || res.ExitCode != 0 {
		t.Errorf("through a spare: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}

	// Through a spare, which emptied its bounding set before its call
	// came, the command holds no capability all the same.
	readySpare(t)
	hits = spareHits.Load()
	res = walled(t, v.tab, v.dir, `grep -E '^Cap' /proc/self/status`)
	if spareHits.Load() != hits+1 || strings.Count(res.Stdout, "\n") != 5 || strings.Count(res.Stdout, "0000000000000000") != 5 {
		t.Errorf("capabilities through a spare (%d hits, were %d): %q %q", spareHits.Load(), hits, res.Stdout, res.Stderr)
	}

	// The server's mounts change: the spare has a copy of the old ones.
	readySpare(t)
	hits = spareHits.Load()
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount: %v", err)
	}
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	if res := walled(t, v.tab, v.dir, "echo three"); res.Stdout != "three\n" || spareHits.Load() != hits {
		t.Errorf("after a mount: %q, %d hits (were %d)", res.Stdout, spareHits.Load(), hits)
	}

	// The spare dies while it waits.
	sp := readySpare(t)
	sp.cmd.Process.Signal(syscall.SIGKILL)
	stat := filepath.Join("/proc", strconv.Itoa(sp.cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(stat); err != nil || strings.Contains(string(b), ") Z ") {
			break // gone, or dead and not yet reaped
		}
	}
	// It may take the plan before its last thread is gone (the write
	// finds a reader), and then end without "ready": the call is made
	// again with a helper of its own.
	if res := walled(t, v.tab, v.dir, "echo four"); res.Stdout != "four\n" || res.ExitCode != 0 {
		t.Errorf("after the spare died: %q %q, exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
}

// TestWallAheadOverlay: a helper started ahead mounts the call's overlay
// on its in-memory layer before its call comes; the call sees the vault as
// it is when it runs, and its changes land in its own layer. A spare whose
// overlay is over a folder that is no longer the vault's (the vault moved
// away and another put at its path) runs nothing, and the call is made
// with a helper of its own, on the vault now at the path.
func TestWallAheadOverlay(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	o := inMemory(t)
	// Only this test's spares wait (readySpare takes any).
	dropSpares(t)
	overlaid(t, v, o, "true")
	readySpare(t)
	must(t, os.WriteFile(filepath.Join(v.dir, "e", "late.txt"), []byte("made after the spare\n"), 0o644))
	hits := spareHits.Load()
	res := overlaid(t, v, o, "cat e/late.txt; echo new > e/new.txt")
	if spareHits.Load() != hits+1 {
		t.Fatalf("the call did not take the spare (%d hits, were %d)", spareHits.Load(), hits)
	}
	if res.Stdout != "made after the spare\n" || res.ExitCode != 0 {
		t.Errorf("through a spare: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, body := upperEntry(t, upperOf(t, o, res), "e/new.txt"); body != "new\n" {
		t.Errorf("the call's layer holds e/new.txt %q", body)
	}
	if _, err := os.Stat(filepath.Join(v.dir, "e", "new.txt")); err == nil {
		t.Error("the change reached the vault")
	}

	// The vault is moved away, and another put at its path, once the
	// spare has mounted its overlay.
	sp := readySpare(t)
	mounted := waitFor(10*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(sp.cmd.Process.Pid), "mountinfo"))
		return err == nil && strings.Contains(string(b), " - overlay ")
	})
	if !mounted {
		t.Fatal("the spare mounted no overlay")
	}
	old := v.dir + ".old"
	must(t, os.Rename(v.dir, old))
	t.Cleanup(func() { os.RemoveAll(old) })
	must(t, os.Mkdir(v.dir, 0o755))
	ents, err := os.ReadDir(old)
	must(t, err)
	for _, e := range ents {
		must(t, os.Rename(filepath.Join(old, e.Name()), filepath.Join(v.dir, e.Name())))
	}
	must(t, os.WriteFile(filepath.Join(v.dir, "e", "late.txt"), []byte("the vault now\n"), 0o644))
	hits = spareHits.Load()
	res = overlaid(t, v, o, "cat e/late.txt")
	if spareHits.Load() != hits+1 {
		t.Errorf("the call did not take the spare (%d hits, were %d)", spareHits.Load(), hits)
	}
	if res.Stdout != "the vault now\n" || res.ExitCode != 0 {
		t.Errorf("after the vault was replaced: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	upperOf(t, o, res)
}

// TestWallLetsNamespacesGo: the server holds each walled call's mount
// namespace only until the call is over (a spare's, while it waits): after
// calls, the only one it holds is the waiting spare's.
func TestWallLetsNamespacesGo(t *testing.T) {
	// No collection: a file left open would be closed by its finalizer.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	v := newZoneVault(t, zones.Edit, nil)
	for range 3 {
		walled(t, v.tab, v.dir, "true")
	}
	readySpare(t)
	held := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		n := 0
		for _, e := range ents {
			if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(l, "mnt:[") {
				n++
			}
		}
		return n
	}
	// Counted again each time: a spare may still be starting, or be
	// ended and replaced when another test changes the mount table.
	if !waitFor(5*time.Second, func() bool { return held() == waitingSpares() }) {
		t.Errorf("%d mount namespaces held, with %d spares waiting", held(), waitingSpares())
	}
}

// TestAheadKey: a spare serves only a spec it was started as, files
// aside; a spec with credentials or capabilities of its own is served by
// none.
func TestAheadKey(t *testing.T) {
	base := launchSpec{path: "/h", args: []string{"h", HelperArg}, env: []string{}, dir: "/", walled: true,
		attr: syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Setsid: true, Pdeathsig: syscall.SIGKILL}}
	first := []byte(`{"version":4}`)
	k := aheadKey(base, first)
	if k == "" {
		t.Fatal("a walled spec has no key")
	}
	withFiles := base
	withFiles.files = []*os.File{os.Stdin}
	if aheadKey(withFiles, first) != k {
		t.Error("the files changed the key")
	}
	if aheadKey(base, []byte(`{"version":4,"ahead":{"mount":true,"pid_max":64}}`)) == k {
		t.Error("another first plan: same key")
	}
	for name, mod := range map[string]func(*launchSpec){
		"helper": func(s *launchSpec) { s.path = "/other" },
		"flags":  func(s *launchSpec) { s.attr.Cloneflags |= syscall.CLONE_NEWNET },
		"maps": func(s *launchSpec) {
			s.attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 1000, Size: 1}}
		},
		"pdeath":   func(s *launchSpec) { s.attr.Pdeathsig = 0 },
		"unwalled": func(s *launchSpec) { s.walled = false },
		"creds":    func(s *launchSpec) { s.attr.Credential = &syscall.Credential{Uid: 1} },
	} {
		s := base
		mod(&s)
		if got := aheadKey(s, first); got == k {
			t.Errorf("%s: same key", name)
		}
	}
}

// TestAgrees: a helper started ahead takes only a call's plan that its
// first plan was made for.
func TestAgrees(t *testing.T) {
	call := func() *helperPlan {
		return &helperPlan{Version: planVersion, HostMNT: 7, Wall: &Wall{HostMountNS: 7, RunAs: &User{Name: "a", UID: 5, GID: 5},
			Layers: Layers{Mount: true, PidMax: true, Caps: true}, Limits: Limits{Procs: 64},
			Vault: "/v", Overlay: &Overlay{Memory: &MemoryLayer{MaxBytes: 1 << 20, MaxFiles: 10}},
			Home: "/tmp/h", Hide: []string{"/home/a"}}}
	}
	ahead := func(p *helperPlan) *helperPlan {
		a := aheadOf(p)
		return &helperPlan{Version: planVersion, Ahead: &a, HostMNT: p.HostMNT, UserNS: p.UserNS}
	}
	if err := agrees(ahead(call()), call()); err != nil {
		t.Fatalf("the plan it was made for: %v", err)
	}
	for name, mod := range map[string]func(*helperPlan){
		"another host namespace":     func(p *helperPlan) { p.HostMNT, p.Wall.HostMountNS = 8, 8 },
		"the wall's host namespace":  func(p *helperPlan) { p.Wall.HostMountNS = 8 },
		"a user namespace":           func(p *helperPlan) { p.UserNS = true },
		"another user":               func(p *helperPlan) { p.Wall.RunAs = &User{Name: "b", UID: 6, GID: 6} },
		"no user":                    func(p *helperPlan) { p.Wall.RunAs = nil },
		"another pid_max":            func(p *helperPlan) { p.Wall.Limits.Procs = 65 },
		"no new root":                func(p *helperPlan) { p.Wall.Layers.Mount = false },
		"a probe":                    func(p *helperPlan) { p.Probe = true },
		"a first plan, not a call's": func(p *helperPlan) { a := aheadOf(p); p.Ahead = &a },
		"no wall":                    func(p *helperPlan) { p.Wall = nil },
		"another vault":              func(p *helperPlan) { p.Wall.Vault = "/w" },
		"another layer size":         func(p *helperPlan) { p.Wall.Overlay.Memory.MaxFiles = 11 },
		"a layer on disk":            func(p *helperPlan) { p.Wall.Overlay = &Overlay{Upper: "/u", Work: "/w"} },
		"no overlay":                 func(p *helperPlan) { p.Wall.Overlay = nil },
		"another home":               func(p *helperPlan) { p.Wall.Home = "/tmp/h2" },
		"another hidden home":        func(p *helperPlan) { p.Wall.Hide = []string{"/home/b"} },
		"capabilities kept":          func(p *helperPlan) { p.Wall.Layers.Caps = false },
	} {
		c := call()
		first := ahead(call())
		mod(c)
		if err := agrees(first, c); err == nil {
			t.Errorf("%s: agreed", name)
		}
	}
}

// TestWarmPlanDecodes: the plan a helper started ahead decodes to warm
// its decoder is one it reads, every part of it.
func TestWarmPlanDecodes(t *testing.T) {
	p, err := decodePlan(warmPlan())
	if err != nil {
		t.Fatal(err)
	}
	w := p.Wall
	if w == nil || len(w.Mounts) == 0 || len(w.Grants) == 0 || len(w.Scratch) == 0 || len(w.Placeholders) == 0 ||
		w.RunAs == nil || w.Overlay == nil || w.Overlay.Memory == nil {
		t.Errorf("the warm plan misses a part: %+v", w)
	}
}

// standInSpare takes away the helper a walled call started ahead for v
// (discarded) and makes a stand-in of its key that runs script under sh,
// not yet offered: the test puts it in spares.ready when it is set.
func standInSpare(t *testing.T, v *zoneVault, script string) (real, fake *spare) {
	t.Helper()
	dropSpares(t) // readySpare takes any
	walled(t, v.tab, v.dir, "true")
	real = readySpare(t)
	dropSpares(t)
	stand := launchSpec{path: "/bin/sh", args: []string{"sh", "-c", script}, env: []string{}, dir: "/", walled: true,
		attr: syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}}
	fake, err := newSpare(real.key, stand, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	return real, fake
}

// TestWallAheadRetries: a helper started ahead that takes its plan and
// then ends without a word (here a stand-in that only sleeps) costs the
// call nothing but time: bash had not started, and a helper of the call's
// own makes it.
func TestWallAheadRetries(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	real, fake := standInSpare(t, v, "sleep 0.3")
	spares.Lock()
	spares.ready[real.key] = []*spare{fake}
	spares.Unlock()
	hits := spareHits.Load()
	res := walled(t, v.tab, v.dir, "echo five")
	if spareHits.Load() != hits+1 {
		t.Errorf("the stand-in was not taken (%d hits, were %d)", spareHits.Load(), hits)
	}
	if res.Stdout != "five\n" || res.ExitCode != 0 {
		t.Errorf("after the stand-in: %q %q, exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
}

// TestWallAheadWatchesMounts: a spare waiting is ended within a second or
// so of a change to the server's mount table, with no call to notice it:
// its copy of the old table would keep an unmounted filesystem alive.
func TestWallAheadWatchesMounts(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	walled(t, v.tab, v.dir, "true")
	sp := readySpare(t)
	mnt := t.TempDir()
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatalf("mount: %v", err)
	}
	defer unix.Unmount(mnt, unix.MNT_DETACH)
	stat := filepath.Join("/proc", strconv.Itoa(sp.cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		spares.Lock()
		waiting := slices.Contains(spares.ready[sp.key], sp)
		spares.Unlock()
		_, err := os.Stat(stat)
		if !waiting && err != nil {
			break // dropped, ended and reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a mount the spare %d still waits (%v) or runs (%v)", sp.cmd.Process.Pid, waiting, err)
		}
	}
}

// TestWallStatusHeldOutside: a call whose helper's status socket is still
// held open once every process of the call has ended (here by the test,
// which took a copy of a stand-in helper's end) ends all the same, with
// an error that says why, instead of waiting for an end of the socket
// that never comes.
func TestWallStatusHeldOutside(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	// It waits for its plan, says it is ready, and ends.
	real, fake := standInSpare(t, v, "cat <&5 >/dev/null; printf 'ready\n' >&4")
	pidfd, err := unix.PidfdOpen(fake.cmd.Process.Pid, 0)
	if err != nil {
		fake.discard()
		t.Skipf("pidfd_open: %v", err)
	}
	held, err := unix.PidfdGetfd(pidfd, statusFD, 0)
	unix.Close(pidfd)
	if err != nil {
		fake.discard()
		t.Skipf("pidfd_getfd: %v", err)
	}
	defer unix.Close(held)
	spares.Lock()
	spares.ready[real.key] = []*spare{fake}
	spares.Unlock()
	hits := spareHits.Load()
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Request{Command: "echo six", Dir: v.dir, Env: []string{"PATH"}, Environ: os.Environ(),
			Timeout: 30 * time.Second, Wall: &WallConfig{Zones: v.tab, Required: true, Layers: requireWall(t)}, Ahead: true})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute): // a safety net, not a measure: without the bound it never ends
		t.Fatal("the call never ended: it waits for the end of a status socket held outside it")
	}
	if spareHits.Load() != hits+1 {
		t.Errorf("the stand-in was not taken (%d hits, were %d)", spareHits.Load(), hits)
	}
	if !errors.Is(err, errStatusHeld) {
		t.Errorf("the call's error is %v, want %v", err, errStatusHeld)
	}
}
