package audit

import (
	"sync"
	"testing"
	"time"
)

// benchRecord is a typical line: a write with its body replaced, about
// 450 bytes.
func benchRecord() *Record {
	return &Record{
		Session: "4f1c2b", Agent: "default", Via: "stdio", Tool: "write",
		Args:     map[string]any{"path": "notes/2026/03/daily.md", "content": Body("a 4 KB note body")},
		Effects:  []Effect{{Op: "modify", Path: "notes/2026/03/daily.md", Zone: "edit"}},
		Decision: "allow", Outcome: "ok", DurationMS: 0.42,
	}
}

func reportLines(b *testing.B, lines int, d time.Duration) {
	b.ReportMetric(float64(lines)/d.Seconds(), "lines/s")
}

// BenchmarkWrite is one writer appending: flock, head check, one write(2),
// head rewritten in place.
func BenchmarkWrite(b *testing.B) {
	path := testPath(b)
	w, err := Open(path, Options{Mask: []string{"ghp_0123456789abcdef"}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	for b.Loop() {
		if err := w.Write(benchRecord()); err != nil {
			b.Fatal(err)
		}
	}
	reportLines(b, b.N, time.Since(start))
}

// BenchmarkWriteSync is the same with Options.Sync: an fsync per line.
func BenchmarkWriteSync(b *testing.B) {
	path := testPath(b)
	w, err := Open(path, Options{Sync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	for b.Loop() {
		if err := w.Write(benchRecord()); err != nil {
			b.Fatal(err)
		}
	}
	reportLines(b, b.N, time.Since(start))
}

// BenchmarkWrite8Writers is 8 goroutines, each with a Writer of its own,
// so they contend on the flock and re-read the head as separate processes
// do. ns/op is per line.
func BenchmarkWrite8Writers(b *testing.B) {
	path := testPath(b)
	ws := make([]*Writer, 8)
	for i := range ws {
		w, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		ws[i] = w
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, w := range ws {
		n := b.N / 8
		if i < b.N%8 {
			n++
		}
		wg.Go(func() {
			for range n {
				if err := w.Write(benchRecord()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	reportLines(b, b.N, time.Since(start))
}

// BenchmarkWrite8Processes is 8 processes appending to one log, as several
// stdio servers and hooks do; the time includes starting them, so it
// counts only with a large -benchtime (say 20000x).
func BenchmarkWrite8Processes(b *testing.B) {
	path := testPath(b)
	per := max(1, b.N/8)
	start := time.Now()
	runWriters(b, path, 8, per, 0)
	d := time.Since(start)
	if rep, err := Verify(path); err != nil || !rep.OK || rep.Lines != 8*per {
		b.Fatalf("Verify = %v, %v", rep, err)
	}
	reportLines(b, 8*per, d)
}

func BenchmarkVerify(b *testing.B) {
	path := testPath(b)
	writeN(b, path, Options{}, 0, 10000)
	for b.Loop() {
		if rep, err := Verify(path); err != nil || !rep.OK {
			b.Fatal(rep, err)
		}
	}
	b.ReportMetric(float64(10000*b.N)/b.Elapsed().Seconds(), "lines/s")
}
