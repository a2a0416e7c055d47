package audit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tampering table: each way of breaking a 10-line log, and the first
// bad line Verify must name.
func TestVerifyTampering(t *testing.T) {
	for _, c := range []struct {
		name     string
		tamper   func(t *testing.T, path string, lines [][]byte) [][]byte
		firstBad int
		problem  string // a word the problem must hold
	}{
		{"edited line", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[3] = bytes.Replace(l[3], []byte(`"session":"s3"`), []byte(`"session":"s9"`), 1)
			return l
		}, 4, "changed"},
		{"deny repainted as allow", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[5] = bytes.Replace(l[5], []byte(`"decision":"deny"`), []byte(`"decision":"allow"`), 1)
			return l
		}, 6, "changed"},
		{"edited first line", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[0] = bytes.Replace(l[0], []byte(`"agent":"claude"`), []byte(`"agent":"mallory"`), 1)
			return l
		}, 1, "changed"},
		{"edited last line", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[9] = bytes.Replace(l[9], []byte(`"agent":"claude"`), []byte(`"agent":"mallory"`), 1)
			return l
		}, 10, "head"},
		{"edited prev field", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[4] = bytes.Replace(l[4], []byte(`"prev":"`), []byte(`"prev":"0`), 1)
			l[4] = bytes.Replace(l[4], []byte(`"}`), []byte(`"}`), 1)
			i := bytes.Index(l[4], []byte(`"prev":"`)) + len(`"prev":"`)
			l[4] = append(l[4][:i+64], l[4][i+65:]...) // keep it 64 hex
			return l
		}, 5, "changed"},
		{"removed line", func(t *testing.T, path string, l [][]byte) [][]byte {
			return append(l[:4:4], l[5:]...)
		}, 5, "missing"},
		{"removed first line", func(t *testing.T, path string, l [][]byte) [][]byte {
			return l[1:]
		}, 1, "missing"},
		{"two lines swapped", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[2], l[3] = l[3], l[2]
			return l
		}, 3, "moved"},
		{"line repeated", func(t *testing.T, path string, l [][]byte) [][]byte {
			return append(l[:7:7], append([][]byte{l[6]}, l[7:]...)...)
		}, 8, "moved or repeated"},
		{"torn last line", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[9] = l[9][:len(l[9])/2]
			return l
		}, 10, "torn"},
		{"last newline gone", func(t *testing.T, path string, l [][]byte) [][]byte {
			l[9] = bytes.TrimSuffix(l[9], []byte("\n"))
			return l
		}, 10, "torn"},
		{"garbage line", func(t *testing.T, path string, l [][]byte) [][]byte {
			return append(l[:6:6], append([][]byte{[]byte("not json\n")}, l[6:]...)...)
		}, 7, "not a log line"},
		{"tail cut", func(t *testing.T, path string, l [][]byte) [][]byte {
			return l[:8]
		}, 9, "tail was cut"},
		{"everything cut", func(t *testing.T, path string, l [][]byte) [][]byte {
			return nil
		}, 1, "tail was cut"},
		{"head file garbled", func(t *testing.T, path string, l [][]byte) [][]byte {
			os.WriteFile(headPath(path), []byte("{"), 0o600)
			return l
		}, 0, "head"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testPath(t)
			writeN(t, path, Options{}, 0, 10)
			lines := readLines(t, path)
			lines = lines[:len(lines)-1] // the empty piece after the last newline
			writeLines(t, path, c.tamper(t, path, lines))
			rep, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", rep)
			if rep.OK || rep.FirstBad != c.firstBad || !strings.Contains(rep.Problem, c.problem) {
				t.Fatalf("Verify = %+v, want first bad line %d (%s)", rep, c.firstBad, c.problem)
			}
			if c.firstBad > 0 && rep.File != path {
				t.Errorf("file %q, want %q", rep.File, path)
			}
		})
	}
}

func TestVerifyWithoutHead(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 10)
	os.Remove(headPath(path))
	rep := verifyOK(t, path, 10)
	if rep.Head || !strings.Contains(rep.Note, "no head") {
		t.Errorf("report without head = %+v", rep)
	}
	// The chain itself is still checked.
	lines := readLines(t, path)
	lines[2] = bytes.Replace(lines[2], []byte("claude"), []byte("mallor"), 1)
	writeLines(t, path, lines)
	if rep, _ := Verify(path); rep.OK || rep.FirstBad != 3 {
		t.Fatalf("edited line without head: %+v", rep)
	}
}

func TestVerifyMissing(t *testing.T) {
	if _, err := Verify(filepath.Join(t.TempDir(), "none.jsonl")); !os.IsNotExist(err) && !strings.Contains(fmt.Sprint(err), "not exist") {
		t.Fatalf("Verify of no log = %v", err)
	}
}

func TestRotation(t *testing.T) {
	path := testPath(t)
	opt := Options{MaxSize: 4 << 10}
	writeN(t, path, opt, 0, 30)
	writeN(t, path, opt, 30, 30) // a second writer goes on where the first stopped
	names, _, err := rotated(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 3 {
		t.Fatalf("rotated files %v, want several", names)
	}
	for _, name := range append(names, path) {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > opt.MaxSize {
			t.Errorf("%s has %d bytes, over MaxSize", name, st.Size())
		}
	}
	if first, ok := firstSeq(path); !ok || first == 1 {
		t.Fatalf("current file starts at seq %d", first)
	}
	verifyOK(t, path, 60)
	rs := readAll(t, path)
	for i, r := range rs {
		if r.Seq != int64(i+1) || r.Session != sample(i).Session {
			t.Fatalf("record %d read back as seq %d session %s", i, r.Seq, r.Session)
		}
	}
	if len(rs) != 60 {
		t.Fatalf("read %d records", len(rs))
	}

	// Tampering in a rotated file is named there.
	lines := readLines(t, names[1])
	lines[1] = bytes.Replace(lines[1], []byte("claude"), []byte("mallor"), 1)
	writeLines(t, names[1], lines)
	rep, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(readLines(t, names[0])) - 1; rep.OK || rep.File != names[1] || rep.FileLine != 2 || rep.FirstBad != n+2 {
		t.Fatalf("Verify = %+v, want line 2 of %s", rep, names[1])
	}

	// So is a rotated file that went missing.
	path = testPath(t)
	writeN(t, path, opt, 0, 60)
	names, _, _ = rotated(path)
	os.Remove(names[1])
	if rep, _ := Verify(path); rep.OK || rep.File != names[2] || rep.FileLine != 1 || !strings.Contains(rep.Problem, "missing") {
		t.Fatalf("Verify with a rotated file gone = %+v", rep)
	}
}

// A writer that stopped between appending and updating the head leaves a
// head one line behind; the next writer goes on from the log, and the chain
// verifies clean.
func TestRecoverStaleHead(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 5)
	old, _ := os.ReadFile(headPath(path))
	writeN(t, path, Options{}, 5, 1)
	os.WriteFile(headPath(path), old, 0o600)
	rep := verifyOK(t, path, 6)
	if !strings.Contains(rep.Note, "5 of 6") {
		t.Errorf("note = %q", rep.Note)
	}
	writeN(t, path, Options{}, 6, 2)
	if rep := verifyOK(t, path, 8); rep.Note != "" {
		t.Errorf("note after repair = %q", rep.Note)
	}
}

func TestRecoverMissingHead(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{MaxSize: 2 << 10}, 0, 20)
	os.Remove(headPath(path))
	writeN(t, path, Options{MaxSize: 2 << 10}, 20, 5)
	verifyOK(t, path, 25)

	// Head gone and the current file just rotated away: the rotated files say.
	os.Remove(headPath(path))
	names, _, _ := rotated(path)
	os.Rename(path, rotatedPath(path, len(names)+1))
	writeN(t, path, Options{}, 25, 1)
	verifyOK(t, path, 26)
}

// A writer that died mid-line leaves a torn fragment: the next writer seals
// it off as a line of its own, and goes on from the last whole line, so only
// the fragment is reported.
func TestRecoverTornLine(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 5)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-`)
	f.Close()
	if rep, _ := Verify(path); rep.OK || rep.FirstBad != 6 || !strings.Contains(rep.Problem, "torn") {
		t.Fatalf("Verify = %+v", rep)
	}
	writeN(t, path, Options{}, 5, 3)
	rep, _ := Verify(path)
	if rep.OK || rep.FirstBad != 6 || rep.Lines != 9 {
		t.Fatalf("Verify = %+v", rep)
	}
	rs := readAll2(t, path)
	if len(rs) != 8 || rs[5].Seq != 6 || rs[7].Seq != 8 {
		t.Fatalf("records after a torn line: %d, %+v", len(rs), rs[5])
	}
}

// readAll2 reads what it can and expects a LineError.
func readAll2(t *testing.T, path string) []Record {
	t.Helper()
	var rs []Record
	err := Read(path, func(r Record) error { rs = append(rs, r); return nil })
	if _, ok := err.(*LineError); !ok {
		t.Fatalf("Read = %v, want a *LineError", err)
	}
	return rs
}

// After the tail is cut, the next writer keeps to the head, so the cut
// stays visible instead of being papered over.
func TestCutTailStaysVisible(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 10)
	lines := readLines(t, path)
	writeLines(t, path, lines[:7])
	writeN(t, path, Options{}, 10, 2)
	rep, _ := Verify(path)
	if rep.OK || rep.FirstBad != 8 || !strings.Contains(rep.Problem, "missing") {
		t.Fatalf("Verify = %+v", rep)
	}
}

// TestHelperWriter is not a test: it is the child process of the
// concurrency tests and benchmarks.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("AUDIT_HELPER_PATH")
	if path == "" {
		t.Skip("helper process only")
	}
	n, _ := strconv.Atoi(os.Getenv("AUDIT_HELPER_N"))
	max, _ := strconv.ParseInt(os.Getenv("AUDIT_HELPER_MAX"), 10, 64)
	w, err := Open(path, Options{MaxSize: max})
	if err != nil {
		t.Fatal(err)
	}
	who := os.Getenv("AUDIT_HELPER_ID")
	for i := range n {
		r := sample(i)
		r.Session = who
		r.Args["i"] = i
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func runWriters(t testing.TB, path string, procs, n int, maxSize int64) {
	t.Helper()
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), "AUDIT_HELPER_PATH="+path, "AUDIT_HELPER_N="+strconv.Itoa(n),
			"AUDIT_HELPER_ID="+fmt.Sprint("p", p), "AUDIT_HELPER_MAX="+strconv.FormatInt(maxSize, 10))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		defer func() {
			if t.Failed() {
				t.Log(out.String())
			}
		}()
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process: %v", err)
		}
	}
}

func checkConcurrent(t *testing.T, path string, writers, n int) {
	t.Helper()
	rs := readAll(t, path)
	if len(rs) != writers*n {
		t.Fatalf("read %d records, want %d", len(rs), writers*n)
	}
	ids := map[string]bool{}
	next := map[string]float64{}
	for i, r := range rs {
		if ids[r.ID] {
			t.Fatalf("id %s repeated", r.ID)
		}
		ids[r.ID] = true
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		// Each writer's lines appear whole and in its own order.
		if got := r.Args["i"].(float64); got != next[r.Session] {
			t.Fatalf("writer %s: line %v after %v", r.Session, got, next[r.Session]-1)
		}
		next[r.Session]++
	}
	if len(next) != writers {
		t.Fatalf("%d writers seen, want %d", len(next), writers)
	}
	verifyOK(t, path, writers*n)
}

func TestConcurrentProcesses(t *testing.T) {
	path := testPath(t)
	runWriters(t, path, 8, 1000, 0)
	checkConcurrent(t, path, 8, 1000)
}

func TestConcurrentProcessesRotating(t *testing.T) {
	path := testPath(t)
	runWriters(t, path, 8, 200, 32<<10)
	checkConcurrent(t, path, 8, 200)
	if names, _, _ := rotated(path); len(names) < 5 {
		t.Fatalf("only %d rotations", len(names))
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	const writers, n = 8, 500
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			path := testPath(t)
			var one *Writer
			if shared {
				var err error
				if one, err = Open(path, Options{MaxSize: 64 << 10}); err != nil {
					t.Fatal(err)
				}
				defer one.Close()
			}
			var wg sync.WaitGroup
			for g := range writers {
				wg.Go(func() {
					w := one
					if w == nil {
						var err error
						if w, err = Open(path, Options{MaxSize: 64 << 10}); err != nil {
							t.Error(err)
							return
						}
						defer w.Close()
					}
					for i := range n {
						r := sample(i)
						r.Session = fmt.Sprint("g", g)
						r.Args["i"] = i
						if err := w.Write(r); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			checkConcurrent(t, path, writers, n)
		})
	}
}

func TestFollow(t *testing.T) {
	defer func(d time.Duration) { followPoll = d }(followPoll)
	followPoll = 5 * time.Millisecond
	path := testPath(t)
	opt := Options{MaxSize: 3 << 10}
	writeN(t, path, opt, 0, 20)

	// follow collects want records from Follow(from) while more is
	// written, a line every millisecond, until it has them.
	follow := func(from int64, want int, write bool) []Record {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		if write {
			w, err := Open(path, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					if err := w.Write(sample(i)); err != nil {
						t.Error(err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			})
		}
		var got []Record
		err := Follow(ctx, path, from, func(r Record) error {
			got = append(got, r)
			if len(got) == want {
				cancel()
			}
			return nil
		})
		cancel()
		wg.Wait()
		if err != context.Canceled {
			t.Fatalf("Follow(%d) = %v after %d records, want %d", from, err, len(got), want)
		}
		return got
	}
	check := func(got []Record, first int64) {
		t.Helper()
		if first == 0 && len(got) > 0 {
			first = got[0].Seq
		}
		for i, r := range got {
			if r.Seq != first+int64(i) {
				t.Fatalf("record %d has seq %d, want %d", i, r.Seq, first+int64(i))
			}
		}
	}

	// From seq 3: the old lines from the rotated files, then new ones
	// across further rotations.
	check(follow(3, 60, true), 3)
	// The last 5.
	last, err := lastSeq(path)
	if err != nil {
		t.Fatal(err)
	}
	check(follow(-5, 5, false), last-4)
	// Only new ones, across rotations.
	got := follow(0, 40, true)
	check(got, 0)
	if got[0].Seq <= last {
		t.Fatalf("from now on began at seq %d, at most %d was old", got[0].Seq, last)
	}
	// A log that does not exist yet.
	path = testPath(t)
	check(follow(0, 3, true), 0)
}

// TestFollowRotationRace rotates the log at each step of Follow's move to a
// new file (see followHook), the window in which a file could fall between
// the listing of rotated files and the current one, and checks that no
// record is skipped or repeated.
func TestFollowRotationRace(t *testing.T) {
	defer func(d time.Duration) { followPoll = d }(followPoll)
	followPoll = 5 * time.Millisecond
	defer func() { followHook = nil }()
	opt := Options{MaxSize: 3 << 10}

	// rotate writes with w until the current file is a new one.
	rotate := func(w *Writer, path string) {
		st0, err := os.Stat(path)
		for i := 0; err != nil && i < 100; i++ { // mid-rotation by another writer
			time.Sleep(time.Millisecond)
			st0, err = os.Stat(path)
		}
		if err != nil {
			t.Error(err)
			return
		}
		for i := range 100 {
			if err := w.Write(sample(i)); err != nil {
				t.Error(err)
				return
			}
			if st, err := os.Stat(path); err == nil && !os.SameFile(st, st0) {
				return
			}
		}
		t.Error("no rotation after 100 writes")
	}
	// run follows path from while the hook rotates the log (its first call
	// opens it), and another writer adds a line every millisecond.
	run := func(path string, from int64, want int) []Record {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// With no log yet, the writer waits for the hook to create it, so
		// that Follow starts without one.
		started := make(chan struct{})
		if _, err := os.Stat(path); err == nil {
			close(started)
		}
		var hw *Writer
		calls := 0
		followHook = func() {
			if calls++; calls > 60 {
				return
			}
			if hw == nil {
				var err error
				if hw, err = Open(path, opt); err != nil {
					t.Error(err)
					return
				}
				select {
				case <-started:
				default:
					close(started)
				}
			}
			rotate(hw, path)
		}
		defer func() {
			followHook = nil
			if hw != nil {
				hw.Close()
			}
		}()
		var wg sync.WaitGroup
		wg.Go(func() {
			select {
			case <-started:
			case <-ctx.Done():
				return
			}
			w, err := Open(path, opt)
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			for i := 0; ctx.Err() == nil; i++ {
				if err := w.Write(sample(i)); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond)
			}
		})
		var got []Record
		err := Follow(ctx, path, from, func(r Record) error {
			got = append(got, r)
			if len(got) == want {
				cancel()
			}
			return nil
		})
		cancel()
		wg.Wait()
		if err != context.Canceled {
			t.Fatalf("Follow(%d) = %v after %d records, want %d", from, err, len(got), want)
		}
		if calls < 2 {
			t.Fatalf("followHook called %d times: the rotation path was not taken", calls)
		}
		return got
	}
	check := func(got []Record, first int64) {
		t.Helper()
		for i, r := range got {
			if r.Seq != first+int64(i) {
				t.Fatalf("record %d has seq %d, want %d", i, r.Seq, first+int64(i))
			}
		}
	}

	path := testPath(t)
	writeN(t, path, opt, 0, 20)
	check(run(path, 3, 300), 3)
	// No log yet, from now on: every line is new, the first one included.
	check(run(testPath(t), 0, 300), 1)
}

// A current file moved away under another name, not rotated, leaves Follow
// unable to tell what came after it: it fails rather than skip ahead.
func TestFollowMovedAway(t *testing.T) {
	defer func(d time.Duration) { followPoll = d }(followPoll)
	followPoll = 5 * time.Millisecond
	path := testPath(t)
	writeN(t, path, Options{}, 0, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	err := Follow(ctx, path, 1, func(r Record) error {
		if n++; n == 3 {
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
			writeN(t, path, Options{}, 3, 1)
		}
		return nil
	})
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "moved or removed") {
		t.Fatalf("Follow = %v after %d records, want the moved file named", err, n)
	}
}

// Verify and Read take a snapshot under a shared lock, so a log being
// written and rotated as they run never looks broken.
func TestVerifyWhileWriting(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			w, err := Open(path, Options{MaxSize: 8 << 10})
			if err != nil {
				t.Error(err)
				return
			}
			defer w.Close()
			for i := 0; i < 1000 && ctx.Err() == nil; i++ {
				if err := w.Write(sample(g*100000 + i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		rep, err := Verify(path)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK || rep.Note != "" {
			t.Fatalf("Verify while writing: %+v", rep)
		}
		n := 0
		if err := Read(path, func(Record) error { n++; return nil }); err != nil || n < rep.Lines {
			cancel()
			t.Fatalf("Read while writing: %d records, %v", n, err)
		}
	}
	cancel()
	<-done
}
