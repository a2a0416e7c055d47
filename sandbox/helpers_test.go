package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// modes are the two ways a call's processes are contained; every test of
// real runs goes through both.
var modes = []struct {
	name    string
	contain containMode
	layer   string
}{
	{"pidns", containAuto, "pidns"},
	{"sweep", containSweep, "sweep"},
}

// request is a Request for a command run in a fresh folder with the test's PATH.
func request(t *testing.T, contain containMode, command string) Request {
	t.Helper()
	return Request{
		Command: command,
		Dir:     t.TempDir(),
		Env:     []string{"PATH"},
		Environ: []string{"PATH=" + os.Getenv("PATH")},
		Timeout: 20 * time.Second,
		contain: contain,
	}
}

// mustRun runs r and fails the test on an error or on the wrong containment.
func mustRun(t *testing.T, r Request, layer string) Result {
	t.Helper()
	res, err := Run(context.Background(), r)
	if err != nil {
		t.Fatalf("Run(%q): %v", r.Command, err)
	}
	if len(res.Isolation) == 0 || res.Isolation[0] != layer {
		t.Fatalf("Run(%q): isolation %v, want %s first", r.Command, res.Isolation, layer)
	}
	return res
}

// withMarker returns the pids of live processes whose argv holds marker.
func withMarker(t *testing.T, marker string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFor polls cond every 10 ms until it holds or d has passed.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func exists(path string) bool { _, err := os.Lstat(path); return err == nil }

// envOf parses the output of env(1).
func envOf(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m
}
