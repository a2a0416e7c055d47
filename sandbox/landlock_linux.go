package sandbox

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The one place where the wall's plan becomes Landlock rules.

// landlockConfigs are go-landlock's presets by ABI: each handles every
// right its ABI knows, so whatever no rule grants is denied.
var landlockConfigs = []landlock.Config{
	{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// Rights that Landlock grants on each kind of path.
const (
	rightsRead landlock.AccessFSSet = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	// change: create and write files and folders, never remove, rename or
	// link across folders (no Refer, no Remove*).
	rightsChange landlock.AccessFSSet = ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSMakeReg |
		ll.AccessFSMakeDir | ll.AccessFSMakeSym
	rightsWrite landlock.AccessFSSet = rightsChange | ll.AccessFSRemoveFile | ll.AccessFSRemoveDir |
		ll.AccessFSMakeFifo | ll.AccessFSMakeSock | ll.AccessFSRefer
	rightsDevice landlock.AccessFSSet = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// landlockRules is the wall's plan as Landlock rules, for the ABI given.
func landlockRules(w *Wall, abi int) (landlock.Config, []landlock.Rule, error) {
	if abi < 1 || abi >= len(landlockConfigs) {
		if abi >= len(landlockConfigs) {
			abi = len(landlockConfigs) - 1
		} else {
			return landlock.Config{}, nil, fmt.Errorf("no Landlock ABI %d", abi)
		}
	}
	cfg := landlockConfigs[abi]
	if w.Network {
		// The host's network was asked for; the namespace is not there
		// either. Abstract sockets and signals stay scoped.
		cfg.HandledAccessNet = 0
	}
	handled := cfg.HandledAccessFS
	mask := func(a landlock.AccessFSSet) landlock.AccessFSSet { return a & handled }
	rules := []landlock.Rule{
		landlock.PathAccess(mask(rightsRead), "/"),
		landlock.PathAccess(mask(rightsDevice), "/dev/null", "/dev/zero", "/dev/full",
			"/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts").IgnoreIfMissing(),
	}
	for _, g := range append(append([]Grant{}, w.Scratch...), w.Grants...) {
		r := rightsChange
		if g.Access == AccessWrite {
			r = rightsWrite
		}
		rules = append(rules, landlock.PathAccess(mask(rightsRead|r), g.Path).IgnoreIfMissing())
	}
	return cfg, rules, nil
}

// restrictLandlock applies the rules at exactly the ABI the plan names:
// not best effort, so a right the kernel can't enforce is an error, never
// silently dropped. It restricts the calling thread only, which must be
// locked to it and exec bash (the helper's is): the domain is that
// thread's, and exec ends the others. Restricting every thread (Restrict)
// signalled each of the Go runtime's, 0.2-0.3 ms of every call.
func restrictLandlock(w *Wall, abi int) error {
	cfg, rules, err := landlockRules(w, abi)
	if err != nil {
		return err
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("the ruleset restricts nothing") // never, at an exact ABI; fail closed all the same
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	return ll.LandlockRestrictSelf(fd, flags)
}

// landlockABI is the kernel's Landlock ABI version, 0 if none.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}
