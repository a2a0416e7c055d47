package txn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/txn"
)

// BenchmarkCommit commits n changed notes of one folder (goal: 100 under
// 20 ms), and in the same loop, alternating with it, writes n files the
// plainest durable way (the floor: each a new file, write, fsync,
// rename over the old one, then one fsync of the folder), on the same
// file system. commit-ms and floor-ms are medians, x-floor their ratio.
// The journal, every file's fsync and the folder's are counted; building
// the layer is not.
// go test -run='^$' -bench=Commit -benchtime=20x ./txn
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("notes=%d", n), func(b *testing.B) {
			v := newVault(b)
			for i := range n {
				put(b, v.dir, fmt.Sprintf("notes/%04d.md", i), "# a note\n\nsome text of a usual length\n", 0o644)
			}
			floorDir := filepath.Join(filepath.Dir(v.dir), "floor")
			if err := os.MkdirAll(floorDir, 0o755); err != nil {
				b.Fatal(err)
			}
			stateDir := b.TempDir()
			var commits, floors []time.Duration
			for round := 0; b.Loop(); round++ {
				b.StopTimer()
				l, err := txn.NewLayer(stateDir)
				if err != nil {
					b.Fatal(err)
				}
				changes := make([]txn.Change, n)
				body := fmt.Sprintf("# a note\n\nedited in round %d\n", round)
				for i := range n {
					name := fmt.Sprintf("notes/%04d.md", i)
					changes[i] = modifyFile(b, v, l, name, name, body, 0o644)
				}
				// The previous round's commit just wrote these files, before
				// this call's start.
				start := startCall(b, v.fs, l)
				b.StartTimer()
				t0 := time.Now()
				if err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: start}); err != nil {
					b.Fatal(err)
				}
				commits = append(commits, time.Since(t0))
				t0 = time.Now()
				writeFloor(b, floorDir, n, body)
				floors = append(floors, time.Since(t0))
				b.StopTimer()
				if err := l.Remove(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			c, f := medianMS(commits), medianMS(floors)
			b.ReportMetric(c, "commit-ms")
			b.ReportMetric(f, "floor-ms")
			b.ReportMetric(c/f, "x-floor")
		})
	}
}

// writeFloor writes n files into dir as plainly as a durable write can
// be: a new file, write, fsync, close, rename over the old name; then
// one fsync of the folder.
func writeFloor(b *testing.B, dir string, n int, body string) {
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("%04d.md", i))
		f, err := os.OpenFile(name+".tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteString(body); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := os.Rename(name+".tmp", name); err != nil {
			b.Fatal(err)
		}
	}
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
	d.Close()
}

func medianMS(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
