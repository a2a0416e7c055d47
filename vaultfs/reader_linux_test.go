//go:build linux

package vaultfs

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// OpenReader reads a note by its bare descriptor on NoFollowFs, all of it,
// never through a link, and a FIFO put where a note was gives nothing
// instead of blocking.
func TestOpenReader(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.md", filepath.Join(root, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	read := func(name string) (string, error) {
		f, err := OpenReader(fsys, name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		return string(b), err
	}
	if got, err := read("a.md"); got != "hello\n" || err != nil {
		t.Errorf("a.md: %q %v", got, err)
	}
	if got, err := read("link.md"); err == nil {
		t.Errorf("link.md was followed: %q", got)
	}
	if got, _ := read("fifo.md"); got != "" {
		t.Errorf("fifo.md: %q", got)
	}
}
