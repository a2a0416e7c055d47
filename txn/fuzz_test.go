//go:build linux

package txn

import (
	"path"
	"strings"
	"testing"
)

// A redirect xattr comes from the upper layer: whatever it holds, the source it names
// stays a clean name inside the vault, or is an error.
func FuzzRedirectSource(f *testing.F) {
	for _, seed := range []string{"d", "/d", "/a/b", "../x", "/../x", "a/b", "", "/", "//d", "./d", "/a/./b"} {
		f.Add(seed, "")
		f.Add(seed, "notes")
	}
	f.Fuzz(func(t *testing.T, redirect, parent string) {
		if parent != "" && (path.Clean(parent) != parent || strings.HasPrefix(parent, "/") || strings.HasPrefix(parent, "..")) {
			return // the parent is always a clean lower name the walk made
		}
		src, err := redirectSource(redirect, parent)
		if err != nil {
			return
		}
		if src == "" || path.Clean(src) != src || path.IsAbs(src) || src == ".." || strings.HasPrefix(src, "../") {
			t.Fatalf("redirect %q under %q gave %q", redirect, parent, src)
		}
	})
}

// An origin xattr too: decoding never reads past it, and a short one is no handle.
func FuzzOriginHandle(f *testing.F) {
	f.Add([]byte{0, 0xfb, 29, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa1, 0x41, 0x98, 0, 0xb8, 0x1e, 0x4d, 0xc0})
	f.Add([]byte{})
	f.Add([]byte{0, 0xfb, 255})
	f.Fuzz(func(t *testing.T, fb []byte) {
		key, ok := originHandle(fb)
		if ok != (key != "") {
			t.Fatalf("originHandle(%x) = %q, %v", fb, key, ok)
		}
	})
}
