package sandbox

import (
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A walled call spends 2.5-3.5 ms before its helper runs a line of its
// own (the clone of its namespaces, the exec, the Go runtime's start) and
// 0.6-0.8 ms more building the part of the new root that no zone changes
// (the system folders, /proc, /dev). None of that depends on the call. So
// for a server that runs many calls (Request.Ahead) the helper of the next
// call is started ahead, when a call ends (not while its bash runs, whose
// CPU it would take), with a first plan that says
// only what that part depends on (the user, pid_max, the vault's
// in-memory overlay, the homes; aheadPlan); it builds
// it, and blocks reading its call's plan from a pipe that nothing has
// written yet (callPlanFD). The next call like the last (same helper,
// namespaces and first plan) writes its plan there; the helper checks that
// it agrees with the first, and carries on. Its files (stdin, the output
// pipes, the status socket) are made for it when it starts, as for any
// call.
//
// Its mount namespace is a copy of the server's as it was when it
// started: a spare is used only while the server's mount table is still
// what it was then, and is thrown away otherwise, or when the call needs
// another helper or other namespaces.

// spare is a helper started ahead, waiting for its plan.
type spare struct {
	launched
	key    string
	mounts [sha256.Size]byte // the server's mount table when it started
	plan   *os.File          // the write end of the helper's call-plan pipe
}

var spares struct {
	sync.Mutex
	ready    map[string][]*spare // oldest first
	starting map[string]int
	// started is closed, and made anew, whenever a start has ended.
	started chan struct{}
}

// aheadDepth is how many spares of a kind wait (or start) at once. Two,
// so that a call that follows the last one closely (a script's calls, a
// benchmark's) takes a spare started a call earlier, done with its part
// of the root, while the one started at the last call's end builds its
// own: one spare made it wait for most of that start (2-3 ms here). A
// call still starts one spare, when it ends.
const aheadDepth = 2

// spareWait bounds how long a call waits for a spare that is starting.
// A start under way ends sooner than one the call would begin (the same
// clone and exec, already begun), however slow a busy machine makes
// both, so the call waits for it to end; the bound is for a start that
// hangs.
const spareWait = 250 * time.Millisecond

// spareHits counts the spares that took a call's plan, for the tests.
var spareHits atomic.Int64

// planWrite bounds the write of a plan to a spare, which reads it at once.
const planWrite = 5 * time.Second

// aheadKey is what a spare must have been started with to serve spec:
// everything but its files. "" for a spec that no spare serves.
func aheadKey(spec launchSpec, first []byte) string {
	a := spec.attr
	if !spec.walled || a.Credential != nil || len(a.AmbientCaps) > 0 || a.Ptrace || a.Foreground || a.Setctty || a.Noctty || a.Chroot != "" {
		return ""
	}
	return fmt.Sprintf("%s\x00%q\x00%q\x00%s\x00%x\x00%t\x00%d\x00%v\x00%v\x00%t\x00%s",
		spec.path, spec.args, spec.env, spec.dir, a.Cloneflags, a.Setsid, a.Pdeathsig, a.UidMappings, a.GidMappings, a.GidMappingsEnableSetgroups, first)
}

// mountTable is the sha256 of the server's mount table, read in one
// large read where it fits: os.ReadFile, whose first reads are small,
// took half as long again.
func mountTable() ([sha256.Size]byte, error) {
	fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 64<<10)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b))
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return [sha256.Size]byte{}, err
		case n == 0:
			return sha256.Sum256(b), nil
		}
		b = b[:len(b)+n]
	}
}

// readMounts begins reading the server's mount table, for a call that may
// take a spare: 0.05-0.12 ms that may overlap with building its wall.
func readMounts() *mountRead {
	m := &mountRead{done: make(chan struct{})}
	go func() {
		m.sum, m.err = mountTable()
		close(m.done)
	}()
	return m
}

// takeSpare is the spare for spec, given the plan it is to run, or nil
// when there is none to use. A spare that can't take its plan is ended.
func takeSpare(spec launchSpec, plan, first []byte, mounts *mountRead) *spare {
	key := aheadKey(spec, first)
	if key == "" {
		return nil
	}
	spares.Lock()
	for deadline := time.Now().Add(spareWait); len(spares.ready[key]) == 0 && spares.starting[key] > 0; {
		// Half started already: sooner done than a start from nothing.
		started := spares.started
		spares.Unlock()
		wait := time.NewTimer(time.Until(deadline))
		select {
		case <-started:
		case <-wait.C:
		}
		wait.Stop()
		spares.Lock()
		if time.Now().After(deadline) {
			break
		}
	}
	var sp *spare
	if q := spares.ready[key]; len(q) > 0 {
		sp, q[0] = q[0], nil
		spares.ready[key] = q[1:]
	}
	spares.Unlock()
	if sp == nil {
		return nil
	}
	if mounts == nil {
		mounts = readMounts()
	}
	if now, err := mounts.table(); err != nil || now != sp.mounts {
		sp.discard()
		return nil
	}
	sp.plan.SetWriteDeadline(time.Now().Add(planWrite))
	_, err := sp.plan.Write(plan)
	if cerr := sp.plan.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// It died or hung while it waited: a fresh helper serves the call.
		sp.discard()
		return nil
	}
	spareHits.Add(1)
	return sp
}

// discard ends a spare that will serve no call.
func (sp *spare) discard() {
	sp.cont.kill()
	sp.cmd.Wait()
	sp.close()
	sp.plan.Close()
}

// watchMounts ends, within mountCheck, each spare waiting whose copy of
// the server's mount table is no longer the table: it would keep a
// filesystem unmounted since (a drive taken out) alive until the next
// call. (The kernel's POLLPRI on mountinfo did not report every mount
// here.) It reads the table only while a spare waits.
var watchOnce sync.Once

const mountCheck = time.Second

func watchMounts() {
	go func() {
		for range time.Tick(mountCheck) {
			spares.Lock()
			waiting := 0
			for _, q := range spares.ready {
				waiting += len(q)
			}
			spares.Unlock()
			if waiting == 0 {
				continue
			}
			now, err := mountTable()
			spares.Lock()
			for k, q := range spares.ready {
				kept := q[:0]
				for _, sp := range q {
					if err != nil || sp.mounts != now {
						go sp.discard()
					} else {
						kept = append(kept, sp)
					}
				}
				spares.ready[k] = kept
			}
			spares.Unlock()
		}
	}()
}

// startAhead starts spares for spec in the background, until aheadDepth
// of them are ready or starting.
func startAhead(spec launchSpec, first []byte) {
	key := aheadKey(spec, first)
	if key == "" {
		return
	}
	watchOnce.Do(watchMounts)
	spares.Lock()
	defer spares.Unlock()
	if spares.ready == nil {
		spares.ready, spares.starting, spares.started = map[string][]*spare{}, map[string]int{}, make(chan struct{})
	}
	for n := len(spares.ready[key]) + spares.starting[key]; n < aheadDepth; n++ {
		spares.starting[key]++
		go func() {
			sp, err := newSpare(key, spec, first)
			spares.Lock()
			defer spares.Unlock()
			spares.starting[key]--
			if err == nil {
				spares.ready[key] = append(spares.ready[key], sp)
			}
			// A spare that did not start costs nothing: the next call
			// starts its helper itself, and says why if it can't.
			close(spares.started)
			spares.started = make(chan struct{})
		}()
	}
}

func newSpare(key string, spec launchSpec, first []byte) (*spare, error) {
	mounts, err := mountTable()
	if err != nil {
		return nil, err
	}
	pf, err := planFileOf(first)
	if err != nil {
		return nil, err
	}
	planR, planW, err := os.Pipe()
	if err != nil {
		pf.Close()
		return nil, err
	}
	l, err := launch(containAuto, spec, pf, planR) // planFD, callPlanFD
	if err != nil {
		planW.Close()
		return nil, err
	}
	return &spare{launched: l, key: key, mounts: mounts, plan: planW}, nil
}
