// Package vaulttest holds what the tests of several packages need to build
// a vault on disk. It is for tests only.
package vaulttest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CopyDir copies the folder src (the sample vault, usually) to dst, files
// keeping their permission bits. Links are not followed.
func CopyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// RuntimeDir points XDG_RUNTIME_DIR, where hooks find their judges
// (judgesock.Dir), at a new folder of the test binary's own, for TestMain;
// the function it returns removes the folder.
func RuntimeDir() (remove func()) {
	dir, err := os.MkdirTemp("", "vaultgate-run-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_RUNTIME_DIR", dir)
	return func() { os.RemoveAll(dir) }
}

// Snapshot is every path under dir with its type, mode, size, mtime and
// (for files) bytes.
func Snapshot(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String() + " " + fi.ModTime().Format(time.RFC3339Nano)
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// SameSnapshot reports, as errors naming what, every path of before that
// changed in after and every path that appeared.
func SameSnapshot(tb testing.TB, what string, before, after map[string]string) {
	tb.Helper()
	for p, v := range before {
		if after[p] != v {
			tb.Errorf("%s: %s was %q, now %q", what, p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			tb.Errorf("%s: %s appeared", what, p)
		}
	}
}
