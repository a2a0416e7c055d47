package admin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// benchLines is the size of the benchmark's log; VAULTGATE_BENCH_LINES
// makes it smaller for a quick look.
func benchLines(b *testing.B) int {
	if v := os.Getenv("VAULTGATE_BENCH_LINES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("VAULTGATE_BENCH_LINES=%q", v)
		}
		return n
	}
	return 1_000_000
}

// bigLog writes n lines of a day's work, all of them today (the worst
// case for the day view, which then counts every line): reads, writes,
// bash calls (some failing), denies, hook calls, 50 sessions. The lines
// are the writer's JSON with its chain fields, written in one go: the
// panel does not check the chain.
func bigLog(b *testing.B, n int, now time.Time) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	y, m, d := now.Date()
	start := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	step := now.Sub(start) / time.Duration(n+1)
	prev := ""
	for i := range n {
		p := fmt.Sprintf("notes/2026/%02d/daily-%d.md", i%12+1, i%997)
		r := audit.Record{
			Time: start.Add(time.Duration(i) * step), ID: audit.NewID(),
			Session: fmt.Sprintf("stdio-%04d", i/(n/50+1)), Agent: "default", Via: "stdio",
			Decision: "allow", Outcome: "ok", DurationMS: 0.4, Seq: int64(i + 1), Prev: prev,
		}
		switch i % 10 {
		case 0, 1, 2, 3:
			r.Tool, r.Args = "read", map[string]any{"path": p}
			r.Effects = []audit.Effect{{Op: "read", Path: p, Zone: "edit"}}
		case 4, 5:
			r.Tool, r.Args = "write", map[string]any{"path": p, "content": audit.Body(p)}
			r.Effects = []audit.Effect{{Op: "modify", Path: p, Zone: "edit"}}
		case 6:
			code := 0
			if i%70 == 6 {
				code = 124
				r.Outcome, r.TimedOut = "failed", true
			}
			r.Tool, r.Args, r.ExitCode = "bash", map[string]any{"command": "grep -c todo " + p}, &code
			r.Effects = []audit.Effect{{Op: "read", Path: p, Zone: "edit"}}
			r.Stdout = "3\n"
		case 7:
			r.Decision, r.Outcome, r.Rule, r.Reason = "deny", "", "zones", `delete "мета/план.md": zone protected (read only)`
			r.Tool, r.Args = "delete", map[string]any{"path": "мета/план.md"}
			r.Effects = []audit.Effect{{Op: "delete", Path: "мета/план.md", Zone: "protected"}}
		case 8:
			r.Via, r.Session, r.Tool = "hook", fmt.Sprintf("cc-%04d", i/(n/50+1)), "Edit"
			r.Args = map[string]any{"file_path": "/home/you/Notes/" + p, "old_string": audit.Body("a"), "new_string": audit.Body("b")}
			r.Effects = []audit.Effect{{Op: "modify", Path: p, Zone: "edit"}}
		case 9:
			r.Tool, r.Args = "search", map[string]any{"path": "notes", "query": "todo"}
			r.Effects = []audit.Effect{{Op: "read", Path: "notes/**", Zone: "edit"}}
		}
		line, err := json.Marshal(&r)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
		prev = fmt.Sprintf("%064x", i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkPanel measures the panel over a log of a million lines:
// building its index once (as the panel does when it starts), then the
// first page (what the page asks for when it opens on today: the day's
// summary, the latest records and the counts) and filtered queries, each
// against a floor measured in the same run: reading the log's bytes and
// counting its lines, the least any reader of the whole log must do.
//
//	go test -run '^$' -bench Panel -benchtime 5x ./admin
func BenchmarkPanel(b *testing.B) {
	n := benchLines(b)
	now := time.Now()
	log := bigLog(b, n, now)
	st, _ := os.Stat(log)

	floorStart := time.Now()
	body, err := os.ReadFile(log)
	if err != nil {
		b.Fatal(err)
	}
	if c := bytes.Count(body, []byte{'\n'}); c != n {
		b.Fatalf("%d lines, want %d", c, n)
	}
	floor := time.Since(floorStart)
	body = nil

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cpuStart := cpuTime(b)
	buildStart := time.Now()
	p, err := New(Options{Log: log, Token: testToken, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	p.ix.mu.Lock() // waits for the start-up build
	if len(p.ix.entries) != n {
		b.Fatalf("indexed %d of %d lines (damaged: %v)", len(p.ix.entries), n, p.ix.damaged)
	}
	p.ix.mu.Unlock()
	build := time.Since(buildStart)
	buildCPU := cpuTime(b) - cpuStart
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)

	get := func(url string) []byte {
		req := httptest.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", url, rec.Code, rec.Body.Bytes())
		}
		return rec.Body.Bytes()
	}
	firstPage := []string{"/api/day?since=today", "/api/records?since=today", "/api/stats?since=today"}
	filtered := []string{
		"/api/records?since=today&q=daily-42.md",                         // free text: a path
		"/api/records?since=today&decision=failed&tool=BASH",             // the timeouts
		"/api/records?since=today&look=any&via=hook&agent=default",       // needs a look, from the hook
		"/api/day?since=today&q=" + "%D0%BC%D0%B5%D1%82%D0%B0&look=deny", // the denies on мета
	}
	var firstTotal, filteredWorst time.Duration
	for b.Loop() {
		t0 := time.Now()
		for _, u := range firstPage {
			get(u)
		}
		firstTotal += time.Since(t0)
		for _, u := range filtered {
			t1 := time.Now()
			get(u)
			filteredWorst = max(filteredWorst, time.Since(t1))
		}
	}
	var page RecordsPage
	if err := json.Unmarshal(get(filtered[1]), &page); err != nil || page.Matched != (n+63)/70 || len(page.Records) == 0 || page.Records[0].FailedWhy != "timed out, exit code 124" {
		b.Fatalf("the failed filter found %d (want %d): %v", page.Matched, (n+63)/70, err)
	}
	p.Close()
	restart, restartFiltered, restartFloor, firstStart := restarts(b, log, now, filtered[0])
	first := firstTotal / time.Duration(b.N)
	b.ReportMetric(float64(n), "lines")
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	b.ReportMetric(floor.Seconds()*1000, "floor-ms")
	b.ReportMetric(build.Seconds()*1000, "build-ms")
	b.ReportMetric(buildCPU.Seconds()*1000, "build-cpu-ms")
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "index-MiB")
	b.ReportMetric(first.Seconds()*1000, "first-page-ms")
	b.ReportMetric(filteredWorst.Seconds()*1000, "worst-filtered-ms")
	b.ReportMetric(float64(first)/float64(floor), "first/floor")
	b.ReportMetric(firstStart.Seconds()*1000, "first-start-day-ms")
	b.ReportMetric(restart.Seconds()*1000, "restart-day-ms")
	b.ReportMetric(restartFiltered.Seconds()*1000, "restart-filtered-ms")
	b.ReportMetric(float64(restart)/float64(restartFloor), "restart/floor")
	b.ReportMetric(float64(filteredWorst)/float64(floor), "filtered/floor")
}

// restarts starts the panel cold on log as vaultgate admin does (its
// index kept in the state folder, IndexFile), and times until the day view
// the page asks for first is answered, then one filtered query: first
// with no index kept (it builds and keeps it), then restartRounds times
// from the kept one, each after a floor (reading the log's bytes and
// counting its lines), alternating. It returns the medians.
func restarts(b *testing.B, log string, now time.Time, filtered string) (day, query, floor, firstStart time.Duration) {
	const restartRounds = 5
	file := IndexFile(b.TempDir(), log)
	start := func() (time.Duration, time.Duration) {
		runtime.GC()
		t0 := time.Now()
		p, err := New(Options{Log: log, Token: testToken, Index: file, Now: func() time.Time { return now }})
		if err != nil {
			b.Fatal(err)
		}
		serve := func(url string) {
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+testToken)
			rec := httptest.NewRecorder()
			p.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%s: %d", url, rec.Code)
			}
		}
		serve("/api/day?since=today")
		d := time.Since(t0)
		t1 := time.Now()
		serve(filtered)
		q := time.Since(t1)
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
		return d, q
	}
	firstStart, _ = start()
	if st, err := os.Stat(file); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "index-file-MiB")
	}
	var days, queries, floors []time.Duration
	for range restartRounds {
		t0 := time.Now()
		body, err := os.ReadFile(log)
		if err != nil {
			b.Fatal(err)
		}
		bytes.Count(body, []byte{'\n'})
		floors = append(floors, time.Since(t0))
		body = nil
		d, q := start()
		days, queries = append(days, d), append(queries, q)
	}
	b.Logf("restart, day view: %v; filtered: %v; floor: %v", days, queries, floors)
	return median(days), median(queries), median(floors), firstStart
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the CPU time the process has used, user and system: the
// index's build on a machine shared with others, without their share.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
