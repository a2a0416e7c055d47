//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
	"golang.org/x/sys/unix"
)

// readySpare waits for a spare to be ready and returns it (still in the
// pool).
func readySpare(t *testing.T) *spare {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		spares.Lock()
		for _, sp := range spares.ready {
			spares.Unlock()
			return sp
		}
		spares.Unlock()
	}
	t.Fatal("no spare helper was started after a call")
	return nil
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
			Layers: Layers{Mount: true, PidMax: true}, Limits: Limits{Procs: 64}}}
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
	p, err := decodePlan(warmPlan)
	if err != nil {
		t.Fatal(err)
	}
	w := p.Wall
	if w == nil || len(w.Mounts) != 1 || len(w.Grants) != 1 || len(w.Scratch) != 1 || len(w.Placeholders) != 1 ||
		w.RunAs == nil || w.Overlay == nil || w.Overlay.Memory == nil {
		t.Errorf("the warm plan misses a part: %+v", w)
	}
}

// standInSpare takes away the helper a walled call started ahead for v
// (discarded) and makes a stand-in of its key that runs script under sh,
// not yet offered: the test puts it in spares.ready when it is set.
func standInSpare(t *testing.T, v *zoneVault, script string) (real, fake *spare) {
	t.Helper()
	walled(t, v.tab, v.dir, "true")
	real = readySpare(t)
	spares.Lock()
	delete(spares.ready, real.key)
	spares.Unlock()
	real.discard()
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
	spares.ready[real.key] = fake
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
		_, waiting := spares.ready[sp.key]
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
	spares.ready[real.key] = fake
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
