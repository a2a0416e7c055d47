package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A grandchild that would leave a trace: it marks that it started, and
// after 2 s that it survived. Its argv carries the marker path, so a scan
// of /proc finds it.
const grandchild = `bash -c 'touch "$0.started"; sleep 2; touch "$0.survived"' `

// TestTimeoutEndsEveryProcess starts grandchildren that leave bash's
// process group or session, then lets the timeout end the call: none may be
// left, and none may write its file later.
func TestTimeoutEndsEveryProcess(t *testing.T) {
	cases := []struct {
		name, cmd string
		sweep     bool // the sweep can contain it too (see sweep's limits)
	}{
		{"setsid", `setsid ` + grandchild + `M & sleep 300`, true},
		{"set -m", `set -m; ` + grandchild + `M & sleep 300`, true},
		{"timeout", `timeout 300 ` + grandchild + `M & sleep 300`, true},
		{"nohup", `nohup ` + grandchild + `M >/dev/null 2>&1 & sleep 300`, true},
		{"orphan in own session", `(setsid ` + grandchild + `M &); sleep 300`, true},
		{"pid 1 ignores TERM", `trap '' TERM; ` + grandchild + `M & sleep 300`, true},
		{"daemon", `(setsid ` + grandchild + `M >/dev/null 2>&1 </dev/null &); sleep 300`, false},
	}
	var jobs []job
	for _, m := range modes {
		for _, tc := range cases {
			if m.contain == containSweep && !tc.sweep {
				continue
			}
			jobs = append(jobs, job{name: m.name + "/" + tc.name, cmd: tc.cmd, contain: m.contain, layer: m.layer})
		}
	}
	runJobs(t, jobs, 1500*time.Millisecond, func(t *testing.T, res Result) {
		if !res.TimedOut || res.ExitCode != ExitTimedOut {
			t.Errorf("timed out %v exit %d, want true %d", res.TimedOut, res.ExitCode, ExitTimedOut)
		}
	})
}

// TestExitEndsBackground: bash exits by itself and leaves background work;
// it ends with the call.
func TestExitEndsBackground(t *testing.T) {
	cases := []struct {
		name, cmd string
		sweep     bool
	}{
		{"subshell", `(sleep 0.3; ` + grandchild + `M) & ` + grandchild + `M & sleep 0.5; exit 0`, true},
		{"setsid", `setsid ` + grandchild + `M & sleep 0.5`, true},
		{"set -m", `set -m; ` + grandchild + `M & sleep 0.5`, true},
		{"holding stdout", `setsid ` + grandchild + `M & sleep 0.5; echo done`, true},
		{"daemon", `(setsid ` + grandchild + `M >/dev/null 2>&1 &); sleep 0.5`, false},
	}
	var jobs []job
	for _, m := range modes {
		for _, tc := range cases {
			if m.contain == containSweep && !tc.sweep {
				continue
			}
			jobs = append(jobs, job{name: m.name + "/" + tc.name, cmd: tc.cmd, contain: m.contain, layer: m.layer})
		}
	}
	runJobs(t, jobs, 20*time.Second, func(t *testing.T, res Result) {
		if res.TimedOut || res.Duration > 5*time.Second {
			t.Errorf("call took %v (timed out %v): a background process held it", res.Duration, res.TimedOut)
		}
	})
}

// job is one command with a grandchild to watch; " M" in cmd stands for
// the grandchild's marker path.
type job struct {
	name, cmd string
	contain   containMode
	layer     string
	marker    string
	res       Result
	err       error
	ended     time.Time // when Run returned
}

// runJobs runs every job at once (they mostly wait), then checks each: the
// grandchild ran, no process with its marker is left, and after the
// grandchild's 2 s none has written its file.
func runJobs(t *testing.T, jobs []job, timeout time.Duration, check func(*testing.T, Result)) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range jobs {
		j := &jobs[i]
		j.marker = filepath.Join(t.TempDir(), fmt.Sprintf("vgmark-%d-%d", time.Now().UnixNano(), i))
		r := request(t, j.contain, strings.ReplaceAll(j.cmd, " M", " '"+j.marker+"'"))
		r.Timeout = timeout
		wg.Go(func() {
			j.res, j.err = Run(context.Background(), r)
			j.ended = time.Now()
		})
	}
	wg.Wait()
	for i := range jobs {
		j := &jobs[i]
		t.Run(j.name, func(t *testing.T) {
			switch {
			case j.err != nil:
				t.Fatal(j.err)
			case len(j.res.Isolation) == 0 || j.res.Isolation[0] != j.layer:
				t.Fatalf("isolation %v, want %s", j.res.Isolation, j.layer)
			case !exists(j.marker + ".started"):
				t.Fatalf("the grandchild never started (stdout %q stderr %q)", j.res.Stdout, j.res.Stderr)
			}
			if pids := withMarker(t, j.marker); len(pids) > 0 {
				t.Errorf("processes %v outlived the call", pids)
			}
			check(t, j.res)
		})
	}
	time.Sleep(2500 * time.Millisecond)
	for _, j := range jobs {
		// Written after the call ended, the file is a process the call
		// left behind. Written before, the call itself ran past the
		// grandchild's 2 s (a loaded machine): the grandchild ended
		// inside the call, which is what the test asks.
		fi, err := os.Stat(j.marker + ".survived")
		switch {
		case err != nil:
		case fi.ModTime().After(j.ended):
			t.Errorf("%s: a grandchild survived the call and wrote its file %v after it ended", j.name, fi.ModTime().Sub(j.ended))
		default:
			t.Logf("%s: the call outlasted the grandchild's 2 s (it took %v)", j.name, j.res.Duration)
		}
	}
}
