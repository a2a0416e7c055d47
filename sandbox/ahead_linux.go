package sandbox

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// A walled call spends 2.5-3.5 ms before its helper runs a line of its
// own (the clone of its namespaces, the exec, the Go runtime's start) and
// 0.6-0.8 ms more building the part of the new root that no zone changes
// (the system folders, /proc, /dev). None of that depends on the call. So
// for a server that runs many calls (Request.Ahead) the helper of the next
// call is started ahead, as soon as a call's helper has exec'd its bash
// (or when the call ends), with a first plan that says
// only what that part depends on (the user, pid_max; aheadPlan); it builds
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
	ready    map[string]*spare
	starting map[string]chan struct{} // closed when the start has ended
}

// spareWait bounds how long a call waits for a spare that is starting:
// about what starting its own helper would take.
const spareWait = 5 * time.Millisecond

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

func mountTable() ([sha256.Size]byte, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// takeSpare is the spare for spec, given the plan it is to run, or nil
// when there is none to use. A spare that can't take its plan is ended.
func takeSpare(spec launchSpec, plan, first []byte) *spare {
	key := aheadKey(spec, first)
	if key == "" {
		return nil
	}
	spares.Lock()
	if starting := spares.starting[key]; spares.ready[key] == nil && starting != nil {
		// Half started already: sooner done than a start from nothing.
		spares.Unlock()
		select {
		case <-starting:
		case <-time.After(spareWait):
		}
		spares.Lock()
	}
	sp := spares.ready[key]
	delete(spares.ready, key)
	spares.Unlock()
	if sp == nil {
		return nil
	}
	if now, err := mountTable(); err != nil || now != sp.mounts {
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
			waiting := len(spares.ready)
			spares.Unlock()
			if waiting == 0 {
				continue
			}
			now, err := mountTable()
			spares.Lock()
			for k, sp := range spares.ready {
				if err != nil || sp.mounts != now {
					delete(spares.ready, k)
					go sp.discard()
				}
			}
			spares.Unlock()
		}
	}()
}

// startAhead starts a spare for spec in the background, unless one is
// ready or starting.
func startAhead(spec launchSpec, first []byte) {
	key := aheadKey(spec, first)
	if key == "" {
		return
	}
	watchOnce.Do(watchMounts)
	spares.Lock()
	if spares.ready == nil {
		spares.ready, spares.starting = map[string]*spare{}, map[string]chan struct{}{}
	}
	if spares.ready[key] != nil || spares.starting[key] != nil {
		spares.Unlock()
		return
	}
	done := make(chan struct{})
	spares.starting[key] = done
	spares.Unlock()
	go func() {
		sp, err := newSpare(key, spec, first)
		spares.Lock()
		defer spares.Unlock()
		delete(spares.starting, key)
		defer close(done)
		if err == nil {
			if old := spares.ready[key]; old != nil {
				go old.discard()
			}
			spares.ready[key] = sp
		}
		// A spare that did not start costs nothing: the next call starts
		// its helper itself, and says why if it can't.
	}()
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
