package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestExitCodes(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				cmd  string
				want int
			}{
				{"true", 0},
				{"false", 1},
				{"exit 7", 7},
				{"exit 300", 44},
				{"", 0},
				{"no-such-program-vg", 127},
				{"sh -c 'kill -KILL $$'; exit $?", 137}, // not exec'd: at pid 1 it could not kill itself
				{"sh -c 'kill -TERM $$'; exit $?", 143},
				{"echo unterminated '", 2},
			} {
				res := mustRun(t, request(t, m.contain, tc.cmd), m.layer)
				if res.ExitCode != tc.want || res.TimedOut {
					t.Errorf("%q: exit %d timed out %v, want %d", tc.cmd, res.ExitCode, res.TimedOut, tc.want)
				}
			}
		})
	}
}

// TestKilledBashReportsSignal: bash killed by a signal reports 128+N. At
// pid 1 of a namespace bash can not be killed from inside, so only the
// sweep can show it.
func TestKilledBashReportsSignal(t *testing.T) {
	res := mustRun(t, request(t, containSweep, "kill -TERM $$"), "sweep")
	if res.ExitCode != 143 {
		t.Errorf("exit %d, want 143", res.ExitCode)
	}
}

func TestStdinIsDevNull(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			res := mustRun(t, request(t, m.contain, "cat; read x; echo read=$?; readlink /proc/self/fd/0"), m.layer)
			if res.Stdout != "read=1\n/dev/null\n" || res.ExitCode != 0 {
				t.Errorf("stdout %q exit %d", res.Stdout, res.ExitCode)
			}
			if res.Duration > 5*time.Second {
				t.Errorf("cat took %v: stdin is not at EOF", res.Duration)
			}
		})
	}
}

func TestWorkingDirectory(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			r := request(t, m.contain, "pwd -P; echo hi > made.txt")
			res := mustRun(t, r, m.layer)
			want, _ := filepath.EvalSymlinks(r.Dir)
			if strings.TrimSpace(res.Stdout) != want {
				t.Errorf("pwd = %q, want %q", res.Stdout, want)
			}
			if b, err := os.ReadFile(filepath.Join(r.Dir, "made.txt")); err != nil || string(b) != "hi\n" {
				t.Errorf("file made in Dir: %q, %v", b, err)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, r := range []Request{
		{Command: "true", Dir: ""},
		{Command: "true", Dir: "relative"},
		{Command: "true", Dir: filepath.Join(dir, "missing")},
		{Command: "true", Dir: file},
		{Command: "echo \x00", Dir: dir},
		{Command: "true", Dir: dir, Timeout: -1},
		{Command: "true", Dir: dir, MaxOutput: -1},
		{Command: "true", Dir: dir, Home: "rel"},
		{Command: "true", Dir: dir, Secrets: []Secret{{Name: "LD_PRELOAD", Value: "x", Commands: []string{"gh"}}}},
		{Command: "true", Dir: dir, Secrets: []Secret{{Name: "BASH_ENV", Value: "x"}}},
		{Command: "true", Dir: dir, Secrets: []Secret{{Name: "PATH", Value: "x"}}},
		{Command: "true", Dir: dir, Secrets: []Secret{{Name: "A=B", Value: "x"}}},
	} {
		if _, err := Run(context.Background(), r); err == nil {
			t.Errorf("Run(%+v) = nil error, want one", r)
		}
	}
}

const tokenValue = "ghp_unitTestSecretValue0123456789"

func tokenRequest(t *testing.T, contain containMode, command string, programs ...string) Request {
	t.Helper()
	r := request(t, contain, command)
	r.Programs = programs
	r.Secrets = []Secret{{Name: "GITHUB_TOKEN", Value: tokenValue, Commands: []string{"git", "gh"}}}
	return r
}

func TestSecretOnlyForItsPrograms(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			cmd := `echo "[$GITHUB_TOKEN]"; echo "err $GITHUB_TOKEN" >&2`
			res := mustRun(t, tokenRequest(t, m.contain, cmd, "echo", "cat"), m.layer)
			if res.Stdout != "[]\n" {
				t.Errorf("a command that calls no listed program got the secret: %q", res.Stdout)
			}
			res = mustRun(t, tokenRequest(t, m.contain, cmd, "echo", "/usr/bin/gh"), m.layer)
			if res.Stdout != "[***GITHUB_TOKEN***]\n" || res.Stderr != "err ***GITHUB_TOKEN***\n" {
				t.Errorf("secret not given or not masked: stdout %q stderr %q", res.Stdout, res.Stderr)
			}
			// The server's own variable of the same name never passes.
			r := tokenRequest(t, m.contain, cmd, "echo")
			r.Env = append(r.Env, "GITHUB_TOKEN")
			r.Environ = append(r.Environ, "GITHUB_TOKEN=ghp_server_side")
			if res := mustRun(t, r, m.layer); res.Stdout != "[]\n" {
				t.Errorf("server's GITHUB_TOKEN reached the child: %q", res.Stdout)
			}
		})
	}
}

// TestSecretNeverInArgv looks at the call's processes while they run: the
// secret is in their environment and in no one's argv.
func TestSecretNeverInArgv(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			marker := fmt.Sprintf("vgmark-argv-%d-%s", time.Now().UnixNano(), m.name)
			r := tokenRequest(t, m.contain, ": "+marker+"; sleep 3 & sleep 3", "gh")
			done := make(chan Result)
			go func() { res, _ := Run(context.Background(), r); done <- res }()
			var pids []int
			if !waitFor(5*time.Second, func() bool { pids = withMarker(t, marker); return len(pids) > 0 }) {
				t.Fatal("the call's bash never showed up in /proc")
			}
			time.Sleep(200 * time.Millisecond) // let the sleeps start
			seen := 0
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
				if err != nil || !bytes.Contains(env, []byte("GITHUB_TOKEN="+tokenValue)) {
					continue
				}
				seen++
				argv, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				if bytes.Contains(argv, []byte(tokenValue)) {
					t.Errorf("pid %s has the secret in argv: %q", e.Name(), argv)
				}
			}
			if seen < 2 {
				t.Errorf("%d processes hold the secret in their environment, want bash and its sleeps", seen)
			}
			<-done
		})
	}
}

// TestOutputCap prints 10 MB: the head and the tail are kept with a notice
// between them, and memory stays far below what was printed.
func TestOutputCap(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			const n = 10_000_000
			r := request(t, m.contain, fmt.Sprintf("printf BEGIN; head -c %d /dev/zero | tr '\\0' x; printf END; head -c %d /dev/zero >&2", n, n))
			r.MaxOutput = 1000
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res := mustRun(t, r, m.layer)
			runtime.ReadMemStats(&after)
			if !strings.HasPrefix(res.Stdout, "BEGIN"+strings.Repeat("x", 495)) || !strings.HasSuffix(res.Stdout, strings.Repeat("x", 497)+"END") {
				t.Errorf("head or tail lost: %.60q … %.60q", res.Stdout, res.Stdout[len(res.Stdout)-60:])
			}
			wantCut := int64(n + 8 - 1000)
			if !strings.Contains(res.Stdout, fmt.Sprintf("[… %d bytes cut …]", wantCut)) || res.StdoutCut != wantCut {
				t.Errorf("notice: cut %d, want %d in %q", res.StdoutCut, wantCut, res.Stdout[490:560])
			}
			if res.StderrCut != n-1000 || !res.Truncated || len(res.Stdout) > 1100 {
				t.Errorf("stderr cut %d, truncated %v, stdout %d bytes", res.StderrCut, res.Truncated, len(res.Stdout))
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
				t.Errorf("allocated %d bytes for 20 MB of output: not bounded", grew)
			}
		})
	}
}

func TestContextCancelEndsCall(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			marker := "vgmark-ctx-" + m.name + fmt.Sprint(time.Now().UnixNano())
			r := request(t, m.contain, "echo started; bash -c 'sleep 30' "+marker+" & sleep 30")
			res, err := Run(ctx, r)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the context's", err)
			}
			if res.ExitCode != -1 || res.Stdout != "started\n" || res.Duration > 10*time.Second {
				t.Errorf("result %+v", res)
			}
			if pids := withMarker(t, marker); len(pids) > 0 {
				t.Errorf("processes %v outlived the cancelled call", pids)
			}
		})
	}
}

// TestConcurrentSweeps: one call's sweep must not touch another call's
// processes.
func TestConcurrentSweeps(t *testing.T) {
	var wg sync.WaitGroup
	long := request(t, containSweep, "sleep 1.5; echo long-done")
	var longRes Result
	wg.Go(func() { longRes = mustRun(t, long, "sweep") })
	for i := 0; i < 4; i++ {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 100 * time.Millisecond)
			mustRun(t, request(t, containSweep, "(sleep 5 &); sleep 5 & exit 0"), "sweep")
		})
	}
	wg.Wait()
	if longRes.Stdout != "long-done\n" || longRes.ExitCode != 0 {
		t.Errorf("the long call was disturbed: %+v", longRes)
	}
}
