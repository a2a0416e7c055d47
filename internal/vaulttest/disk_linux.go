package vaulttest

import (
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// SmallDisk mounts a tmpfs of size (mount's spelling: "4m") at dir, made
// if missing, and unmounts it when the test ends: a disk a test can fill
// up. Mounting needs root: without it the test fails under CI (which runs
// as root) and is skipped elsewhere, saying so.
func SmallDisk(tb testing.TB, dir, size string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			tb.Fatal("a small disk is a tmpfs mounted for the test, which needs root; CI runs as root")
		}
		tb.Skip("mounting the test's small tmpfs needs root (CI runs as root)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		tb.Fatalf("mount a tmpfs at %s: %v", dir, err)
	}
	tb.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// Fill writes a file into dir that leaves about room bytes free on its
// disk (none, when the disk's own bookkeeping takes the last of it).
func Fill(tb testing.TB, dir string, room int64) (name string) {
	tb.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		tb.Fatal(err)
	}
	name = dir + "/filler"
	err := os.WriteFile(name, make([]byte, max(int64(st.Bavail)*st.Bsize-room, 0)), 0o600)
	if err != nil && !errors.Is(err, unix.ENOSPC) {
		tb.Fatal(err)
	}
	return name
}
