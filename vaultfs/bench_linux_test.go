//go:build linux

package vaultfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/afero"
)

// go test -run '^$' -bench 'Fs/' ./vaultfs/

func benchFs(b *testing.B, bench func(b *testing.B, fsys afero.Fs)) {
	for _, kind := range []string{"NoFollowFs", "NoFollowFs-per-component", "RootFs"} {
		b.Run(kind, func(b *testing.B) {
			root := b.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "notes/sub"), 0o755); err != nil {
				b.Fatal(err)
			}
			var fsys afero.Fs
			if kind == "RootFs" {
				r, err := OpenRootFs(root)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				fsys = r
			} else {
				n, err := Open(root)
				if err != nil {
					b.Fatal(err)
				}
				defer n.Close()
				n.perComponent.Store(kind != "NoFollowFs")
				fsys = n
			}
			bench(b, fsys)
		})
	}
}

var note4k = []byte(strings.Repeat("0123456789abcde\n", 256))

func BenchmarkFsWrite4K(b *testing.B) {
	benchFs(b, func(b *testing.B, fsys afero.Fs) {
		b.SetBytes(int64(len(note4k)))
		for b.Loop() {
			if err := afero.WriteFile(fsys, "notes/sub/4k.md", note4k, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFsRead4K(b *testing.B) {
	benchFs(b, func(b *testing.B, fsys afero.Fs) {
		if err := afero.WriteFile(fsys, "notes/sub/4k.md", note4k, 0o644); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(note4k)))
		for b.Loop() {
			if data, err := afero.ReadFile(fsys, "notes/sub/4k.md"); err != nil || len(data) != len(note4k) {
				b.Fatal(len(data), err)
			}
		}
	})
}

// Lstat is what Resolve does once per component of every path a planner sees.
func BenchmarkFsLstat(b *testing.B) {
	benchFs(b, func(b *testing.B, fsys afero.Fs) {
		if err := afero.WriteFile(fsys, "notes/sub/4k.md", note4k, 0o644); err != nil {
			b.Fatal(err)
		}
		l := fsys.(afero.Lstater)
		for b.Loop() {
			if _, _, err := l.LstatIfPossible("notes/sub/4k.md"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
