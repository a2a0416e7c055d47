package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
	"weak"

	"github.com/spf13/afero"
	"github.com/vaultgate/vaultgate/vaultfs"
)

// Start is when a call began, on the clock that stamps the vault's
// ctimes: a vault entry whose ctime is Start or later changed during the
// call, one whose ctime is earlier changed before it. Begin is its only
// maker, so nothing compares a ctime with time.Now, whose clock runs up
// to a tick ahead of the one the kernel stamps files with.
type Start struct{ at time.Time }

// IsZero tells a Start no Begin made.
func (s Start) IsZero() bool { return s.at.IsZero() }

// during tells whether an entry of ctime ct changed during the call: an
// equal stamp is during, since a tick holds changes on both sides of the
// moment Begin saw it.
func (s Start) during(ct time.Time) bool { return !ct.Before(s.at) }

// startWait bounds how long Begin waits for the clock to tick: more than
// a second, the coarsest stamp of a file system that makes unnamed files
// (ext4 with small inodes). Past it Begin takes the stamp it began with,
// so a change of that tick made before the call is a conflict: the safe
// side, never a change during the call let through.
const startWait = 1500 * time.Millisecond

// Begin takes a call's start from the file system's own clock, and is
// called once the call holds the vault's lock, before its command can
// run. The kernel stamps a ctime with a coarse clock that lags the real
// time by up to a tick (a jiffy, or the file system's granularity), so
// neither time.Now nor one stamp can part "before" from "during": a
// change made just before the call and one made just after can share a
// stamp. So Begin reads the clock, waits for it to tick, and returns the
// new stamp: every change made before Begin has a stamp no later than the
// first, so strictly earlier than Start, and every change made after it a
// stamp no earlier than Start.
//
// The clock is read where the vault's ctimes are stamped: the ctime of a
// file made with no name in the vault's root folder (O_TMPFILE: nothing
// the person's programs can list, nothing a crash leaves), so the file
// system's own granularity counts. Where the vault can't make one (a
// kernel or file system without O_TMPFILE, a full disk), the stamp of a
// file of the call's own in stateDir, stamped by the same kernel clock.
// Each reading touches that file (a chmod to its own mode, which stamps
// its ctime with the clock now) and reads the stamp back: on a kernel
// with multigrain timestamps, a change to a file whose time was read
// since gets a fine stamp, later than every stamp before it, so the tick
// is not waited for.
//
// The vault's file is made once per vault file system and kept, with no
// name, while the process has the vault open (keptClock): making an
// inode on a journalled disk cost 0.1-0.5 ms of every call, three times
// over when each reading made a file of its own.
func Begin(vault afero.Fs, stateDir string) (Start, error) {
	c, err := newStartClock(vault, stateDir)
	if err != nil {
		return Start{}, err
	}
	defer c.done()
	defer runtime.KeepAlive(vault) // its kept clock is closed once it is garbage
	var first time.Time
	deadline := time.Now().Add(startWait)
	for pause := 50 * time.Microsecond; ; {
		at, err := c.read()
		switch {
		case errors.Is(err, errClockChanged):
			first = time.Time{} // begin again on the state folder's clock
			continue
		case err != nil:
			return Start{}, err
		case first.IsZero():
			first = at
			continue
		case at.After(first):
			return Start{at: at}, nil
		case time.Now().After(deadline):
			return Start{at: first}, nil
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// errClockChanged: the vault's file could not be stamped, and the call's
// start is read from the state folder from now on; a stamp read from the
// vault before is never compared with one read there.
var errClockChanged = errors.New("txn: the call's start: the vault's clock can't be read")

// startClock reads the time the kernel stamps the vault's files with.
type startClock struct {
	f        clockFile // with no name: in the vault, or else in stateDir
	kept     *keptClock
	inVault  bool
	stateDir string
}

// clockFile is a file whose ctime Begin stamps and reads.
type clockFile interface {
	Chmod(os.FileMode) error
	Stat() (fs.FileInfo, error)
	Close() error
}

func newStartClock(vault afero.Fs, stateDir string) (*startClock, error) {
	c := &startClock{stateDir: stateDir}
	if k := keptClockOf(vault); k != nil {
		c.f, c.kept, c.inVault = k.f, k, true
		return c, nil
	}
	if f := unnamedClock(vault); f != nil {
		c.f, c.inVault = f, true
		return c, nil
	}
	if err := c.useOwn(); err != nil {
		return nil, err
	}
	return c, nil
}

// unnamedClock is a new file with no name in the vault's root folder, or
// nil where the vault can't make one.
func unnamedClock(vault afero.Fs) clockFile {
	v, ok := vault.(vaultfs.UnnamedCreator)
	if !ok {
		return nil
	}
	f, err := v.CreateUnnamed(0o600)
	if err != nil {
		return nil
	}
	if cf, ok := f.(clockFile); ok {
		return cf
	}
	f.Close()
	return nil
}

// done lets the clock go: a kept file stays for the next call.
func (c *startClock) done() {
	if c.kept != nil {
		c.kept.mu.Unlock()
		return
	}
	c.f.Close()
}

// useOwn reads the clock from a file of the call's own in the state
// folder, with no name.
func (c *startClock) useOwn() error {
	dir := filepath.Join(c.stateDir, layersDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("txn: the call's start: %w", err)
	}
	own, err := openUnnamed(dir)
	if err != nil {
		// No O_TMPFILE here: a name of its own, removed at once (never in
		// dir, where Sweep would take it for a layer).
		if own, err = os.CreateTemp(c.stateDir, ".txn-start-*"); err != nil {
			return fmt.Errorf("txn: the call's start: %w", err)
		}
		if err := os.Remove(own.Name()); err != nil {
			own.Close()
			return fmt.Errorf("txn: the call's start: %w", err)
		}
	}
	c.f, c.inVault = own, false
	return nil
}

// read stamps the clock's file with the time now and reads the stamp.
func (c *startClock) read() (time.Time, error) {
	err := c.f.Chmod(0o600)
	var fi fs.FileInfo
	if err == nil {
		fi, err = c.f.Stat()
	}
	switch {
	case err != nil && c.inVault:
		if c.kept != nil {
			c.kept.drop()
			c.kept.mu.Unlock()
			c.kept = nil
		} else {
			c.f.Close()
		}
		if err := c.useOwn(); err != nil {
			return time.Time{}, err
		}
		return time.Time{}, errClockChanged
	case err != nil:
		return time.Time{}, fmt.Errorf("txn: the call's start: %w", err)
	}
	return ctimeOf(fi)
}

// keptClock is the vault's clock file kept for the next call, one per
// vault file system (a *vaultfs.NoFollowFs, the gate's) while that is in
// use: closed once the file system is garbage, or once it fails. mu is
// held by the Begin reading it, so that two calls' readings do not take
// each other's fine stamps.
type keptClock struct {
	mu  sync.Mutex
	f   clockFile
	key weak.Pointer[vaultfs.NoFollowFs]
}

var keptClocks struct {
	sync.Mutex
	m map[weak.Pointer[vaultfs.NoFollowFs]]*keptClock
}

// keptClockOf is the vault's kept clock, locked, made on first use; nil
// for a file system that keeps none, or can't make one.
func keptClockOf(vault afero.Fs) *keptClock {
	v, ok := vault.(*vaultfs.NoFollowFs)
	if !ok || v == nil {
		return nil
	}
	key := weak.Make(v)
	keptClocks.Lock()
	k := keptClocks.m[key]
	if k == nil {
		f := unnamedClock(vault)
		if f == nil {
			keptClocks.Unlock()
			return nil
		}
		if keptClocks.m == nil {
			keptClocks.m = map[weak.Pointer[vaultfs.NoFollowFs]]*keptClock{}
		}
		k = &keptClock{f: f, key: key}
		keptClocks.m[key] = k
		runtime.AddCleanup(v, (*keptClock).drop, k)
	}
	keptClocks.Unlock()
	k.mu.Lock()
	return k
}

// drop closes the kept file and forgets it; a later call makes another.
func (k *keptClock) drop() {
	keptClocks.Lock()
	if keptClocks.m[k.key] == k {
		delete(keptClocks.m, k.key)
	}
	keptClocks.Unlock()
	k.f.Close()
}

func ctimeOf(fi fs.FileInfo) (time.Time, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, errors.New("txn: the call's start: the file system gives no ctime")
	}
	return ctime(st), nil
}
