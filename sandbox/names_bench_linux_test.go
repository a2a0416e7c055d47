package sandbox

import (
	"os"
	"strconv"
	"testing"

	"github.com/vaultgate/vaultgate/internal/vaultgen"
	"github.com/vaultgate/vaultgate/zones"
)

// BenchmarkNameIndex times the index of names on the generated vault of
// 200,000 notes (VAULTGATE_BIG_NOTES changes the count): its first
// reading, an answer once read, and the walk each walled call made before
// the index, which is the floor the reading is compared with.
//
//	go test ./sandbox -run '^$' -bench NameIndex -benchtime 5x -benchmem
func BenchmarkNameIndex(b *testing.B) {
	notes := 200_000
	if s := os.Getenv("VAULTGATE_BIG_NOTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("VAULTGATE_BIG_NOTES=%q: want a count of notes", s)
		}
		notes = n
	}
	vault, _, err := vaultgen.Cached(notes, 1)
	if err != nil {
		b.Fatal(err)
	}
	tab, err := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "**/.env", Mode: zones.Hidden}, {Path: "**/*.pem", Mode: zones.Hidden}}, zones.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("first-reading", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			x := WatchNames(vault, []*zones.Table{tab})
			if _, err := x.Covered(tab); err != nil {
				b.Fatal(err)
			}
			x.Close()
		}
	})
	b.Run("answer", func(b *testing.B) {
		x := WatchNames(vault, []*zones.Table{tab})
		defer x.Close()
		if _, err := x.Covered(tab); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := x.Covered(tab); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := controlNames(vault, tab); err != nil {
				b.Fatal(err)
			}
		}
	})
}
