package txn_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/txn"
)

// BenchmarkCommit commits n changed notes of one folder (goal: 100 under
// 20 ms). The journal, every file's fsync and the folder's are counted;
// building the layer is not.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("notes=%d", n), func(b *testing.B) {
			v := newVault(b)
			for i := range n {
				put(b, v.dir, fmt.Sprintf("notes/%04d.md", i), "# a note\n\nsome text of a usual length\n", 0o644)
			}
			stateDir := b.TempDir()
			for round := 0; b.Loop(); round++ {
				b.StopTimer()
				l, err := txn.NewLayer(stateDir)
				if err != nil {
					b.Fatal(err)
				}
				changes := make([]txn.Change, n)
				for i := range n {
					name := fmt.Sprintf("notes/%04d.md", i)
					changes[i] = modifyFile(b, v, l, name, name, fmt.Sprintf("# a note\n\nedited in round %d\n", round), 0o644)
				}
				// The previous round's commit just wrote these files: a start
				// after the margin lets the check pass without waiting.
				started := time.Now().Add(time.Second)
				b.StartTimer()
				if err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Started: started}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := l.Remove(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
