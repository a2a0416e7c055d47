package txn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

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
// file Begin makes with no name in the vault's root folder (O_TMPFILE:
// nothing the person's programs can list, nothing a crash leaves), so the
// file system's own granularity counts. Where the vault can't make one
// (a kernel or file system without O_TMPFILE, a full disk), the stamp of
// a file of its own in stateDir, stamped by the same kernel clock. Each
// reading touches that file first: on a kernel with multigrain
// timestamps, a change to a file whose time was read since gets a fine
// stamp, and every stamp after it is later, so the tick is not waited
// for.
func Begin(vault afero.Fs, stateDir string) (Start, error) {
	c, err := newStartClock(vault, stateDir)
	if err != nil {
		return Start{}, err
	}
	defer c.own.Close()
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

// errClockChanged: the vault could not make its file, and the call's
// start is read from the state folder from now on; a stamp read from the
// vault before is never compared with one read there.
var errClockChanged = errors.New("txn: the call's start: the vault's clock can't be read")

// startClock reads the time the kernel stamps the vault's files with.
type startClock struct {
	vault vaultfs.UnnamedCreator // nil: own's stamp is the clock
	own   *os.File               // the call's own file in the state folder, with no name
}

func newStartClock(vault afero.Fs, stateDir string) (*startClock, error) {
	dir := filepath.Join(stateDir, layersDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("txn: the call's start: %w", err)
	}
	own, err := openUnnamed(dir)
	if err != nil {
		// No O_TMPFILE here: a name of its own, removed at once (never in
		// dir, where Sweep would take it for a layer).
		if own, err = os.CreateTemp(stateDir, ".txn-start-*"); err != nil {
			return nil, fmt.Errorf("txn: the call's start: %w", err)
		}
		if err := os.Remove(own.Name()); err != nil {
			own.Close()
			return nil, fmt.Errorf("txn: the call's start: %w", err)
		}
	}
	c := &startClock{own: own}
	c.vault, _ = vault.(vaultfs.UnnamedCreator)
	return c, nil
}

// read touches the call's own file, and gives the ctime of a file made
// now in the vault, or else of its own. The touch comes first: on a
// multigrain kernel, a change to a file whose time was read since is a
// fine stamp, and every stamp after it is later, so the reading after
// the first is later than it without a tick's wait.
func (c *startClock) read() (time.Time, error) {
	if err := c.own.Chmod(0o600); err != nil {
		return time.Time{}, fmt.Errorf("txn: the call's start: %w", err)
	}
	fi, err := c.own.Stat()
	if err != nil {
		return time.Time{}, fmt.Errorf("txn: the call's start: %w", err)
	}
	if c.vault == nil {
		return ctimeOf(fi)
	}
	at, err := vaultStamp(c.vault)
	if err != nil {
		c.vault = nil
		return time.Time{}, errClockChanged
	}
	return at, nil
}

// vaultStamp is the ctime of a file made now, unnamed, in the vault.
func vaultStamp(vault vaultfs.UnnamedCreator) (time.Time, error) {
	f, err := vault.CreateUnnamed(0o600)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	return ctimeOf(fi)
}

func ctimeOf(fi fs.FileInfo) (time.Time, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, errors.New("txn: the call's start: the file system gives no ctime")
	}
	return ctime(st), nil
}
