package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// The run tests start `vaultgate run` with a stand-in agent (testdata/
// runprobe, built into a system folder, since the agent's view holds only
// system folders) and read what it saw from the inside. They need root,
// to create the agent's user and to switch to it; CI runs them as root,
// and fails if one skips.

const runUser = "vaultgate-run-test"

// The launcher's own secrets: none may reach the agent.
var launcherSecrets = map[string]string{
	"DATABASE_URL":          "postgres://vg:launcher-db-secret@db/vg",
	"POSTGRES_PASSWORD":     "launcher-pg-secret",
	"GH_PAT":                "ghp_launcherPATsecret",
	"AWS_SECRET_ACCESS_KEY": "launcher-aws-secret",
}

// agentKey is the agent's own credential, given as [[run.secrets]].
const agentKey = "sk-agent-own-credential-1234"

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("wall: vaultgate run's tests create the agent's user and switch to it: they need root (CI runs them as root)")
	}
}

// agentUser creates the agent's user once and returns its ids.
func agentUser(t *testing.T, name string) (uid, gid int) {
	t.Helper()
	if _, err := user.Lookup(name); err != nil {
		if out, err := exec.Command("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v %s", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

var (
	probeOnce sync.Once
	probePath string
	probeErr  error
)

// runProbe builds the stand-in agent into a folder under /usr/local, which
// the agent's view binds read-only like the rest of the system.
func runProbe(t *testing.T) string {
	t.Helper()
	probeOnce.Do(func() {
		if err := os.MkdirAll("/usr/local/libexec", 0o755); err != nil {
			probeErr = err
			return
		}
		dir, err := os.MkdirTemp("/usr/local/libexec", "vaultgate-runtest-")
		if err != nil {
			probeErr = err
			return
		}
		os.Chmod(dir, 0o755)
		probePath = filepath.Join(dir, "runprobe")
		if out, err := exec.Command("go", "build", "-o", probePath, "./testdata/runprobe").CombinedOutput(); err != nil {
			probeErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probePath
}

func TestMain(m *testing.M) {
	removeRuntimeDir := vaulttest.RuntimeDir()
	code := m.Run()
	removeRuntimeDir()
	if probePath != "" {
		os.RemoveAll(filepath.Dir(probePath))
	}
	os.Exit(code)
}

// runSetup is a vault and config for run: the vault and the config in a
// system folder (/usr/local/share, which the view binds, so they must be
// covered there), the state folder and the agent's home elsewhere.
type runSetup struct {
	dir, vault, cfg, state, audit, home string
}

func newRunSetup(t *testing.T, runTable string) runSetup {
	t.Helper()
	os.MkdirAll("/usr/local/share", 0o755)
	sys, err := os.MkdirTemp("/usr/local/share", "vaultgate-runtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sys) })
	os.Chmod(sys, 0o755)
	s := runSetup{dir: t.TempDir(), vault: filepath.Join(sys, "vault"), cfg: filepath.Join(sys, "vault.toml")}
	s.state = filepath.Join(s.dir, "state")
	s.audit = filepath.Join(s.state, "audit.jsonl")
	s.home = filepath.Join(s.dir, "agent-home")
	for f, body := range map[string]string{"notes/a.md": "a note the agent reads\n", "мета/x.md": "protected\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(s.vault, f)), 0o755)
		if err := os.WriteFile(filepath.Join(s.vault, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body := fmt.Sprintf("vault = %q\n[audit]\npath = %q\n[zones]\nedit = [\".\"]\nprotected = [\"мета\"]\n%s", s.vault, s.audit,
		strings.ReplaceAll(runTable, "HOME", s.home))
	if err := os.WriteFile(s.cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

const runTable = `[run]
user = "` + runUser + `"
home = "HOME"
[[run.secrets]]
name = "ANTHROPIC_API_KEY"
from_env = "RUN_TEST_AGENT_KEY"
`

// launcherEnv is the launcher's environment: the secrets the agent must
// not get, its own credential, and what any process has.
func launcherEnv() []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "LC_TIME=C", "TERM=dumb", "HOME=/root", "RUN_TEST_AGENT_KEY=" + agentKey, "EDITOR=vi"}
	for k, v := range launcherSecrets {
		env = append(env, k+"="+v)
	}
	return env
}

type probeReport struct {
	UID, EUID, GID int
	Groups         []int
	Env            []string
	Cwd            string
	Reads          map[string]string
	Pids           []int
	Environs       []int
	Cmdlines       []string
	Fds            []string
	Writes         map[string]string
	Launcher       int
	Kill, Ptrace   string
	Token          string
	Tools          []string
	Read           string
	Delete         string
	DeleteErr      bool
	Status         map[string]string
	Err            []string
}

// TestWallRunAgentView runs the stand-in agent and checks from the inside
// what it is, what it has and what it can reach; from the outside, that
// no argv on the host carries a secret or the run's token, and that its
// calls are in the audit with via "run" and the run's id.
func TestWallRunAgentView(t *testing.T) {
	needRoot(t)
	uid, gid := agentUser(t, runUser)
	probe := runProbe(t)
	bin := filepath.Join(bundle(t), "vaultgate")
	s := newRunSetup(t, runTable)

	cmd := exec.Command(bin, "run", "--config", s.cfg, "--", probe, "probe", s.vault, s.cfg, s.state, s.audit, filepath.Join(s.vault, "notes/a.md"))
	cmd.Env = launcherEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Where the probe will look for vaultgate's pid, to signal and trace it.
	waitFor(t, s.home, &errb)
	os.WriteFile(filepath.Join(s.home, "launcher.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	var hostArgv []string
	if waitFile(filepath.Join(s.home, "mid"), 30*time.Second) {
		hostArgv = allArgv()
	}
	os.WriteFile(filepath.Join(s.home, "scanned"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("vaultgate run: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	var r probeReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("the probe's report: %v\n%s\nstderr: %s", err, out.String(), errb.String())
	}
	if len(r.Err) > 0 {
		t.Errorf("the probe failed: %v", r.Err)
	}
	if hostArgv == nil {
		t.Fatal("the probe never reached the middle of its run")
	}

	// Who it is.
	if r.UID != uid || r.EUID != uid || r.GID != gid {
		t.Errorf("agent uid %d euid %d gid %d, want %d %d", r.UID, r.EUID, r.GID, uid, gid)
	}
	if len(r.Groups) > 0 && !slices.Equal(r.Groups, []int{gid}) {
		t.Errorf("supplementary groups %v, want none", r.Groups)
	}
	checkPrivileges(t, r)
	// What it has.
	env := strings.Join(r.Env, "\n")
	for k, v := range launcherSecrets {
		if strings.Contains(env, k+"=") || strings.Contains(env, v) {
			t.Errorf("the launcher's %s reached the agent", k)
		}
	}
	for _, want := range []string{"ANTHROPIC_API_KEY=" + agentKey, "HOME=" + s.home, "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "LC_TIME=C", "TERM=dumb", "USER=" + runUser} {
		if !slices.Contains(r.Env, want) {
			t.Errorf("the agent's environment lacks %s: %v", want, r.Env)
		}
	}
	for _, e := range r.Env {
		k, _, _ := strings.Cut(e, "=")
		if !slices.Contains([]string{"ANTHROPIC_API_KEY", "HOME", "PATH", "LANG", "LC_TIME", "TERM", "USER", "LOGNAME", "VAULTGATE_MCP_CONFIG"}, k) {
			t.Errorf("%s is in the agent's environment, though [run] env does not name it", k)
		}
	}
	if r.Cwd != s.home {
		t.Errorf("the agent started in %s, want its home %s", r.Cwd, s.home)
	}
	for _, fd := range r.Fds {
		if n, _ := strconv.Atoi(fd); n > 3 { // 3 is the folder the probe lists them with
			t.Errorf("the agent inherited descriptor %s: %v", fd, r.Fds)
		}
	}
	// What it can see.
	for p, got := range r.Reads {
		// Absent, or covered: an empty folder, an empty file.
		if !strings.Contains(got, "no such file") && got != "empty" && got != "read 0 bytes" {
			t.Errorf("the agent could see %s: %s", p, got)
		}
	}
	if len(r.Reads) != 5 {
		t.Errorf("reads: %v", r.Reads)
	}
	if len(r.Environs) > 0 {
		t.Errorf("the agent read the environ of pids %v", r.Environs)
	}
	if r.Launcher != cmd.Process.Pid || !strings.Contains(r.Kill, "no such process") || !strings.Contains(r.Ptrace, "no such process") {
		t.Errorf("signal / ptrace vaultgate (pid %d): kill %q, ptrace %q", r.Launcher, r.Kill, r.Ptrace)
	}
	if slices.Contains(r.Pids, cmd.Process.Pid) || len(r.Pids) > 4 {
		t.Errorf("pids the agent sees: %v", r.Pids)
	}
	// What it can change.
	for p, want := range map[string]string{filepath.Join(s.home, "probe-wrote"): "written", "/tmp/probe-wrote": "written"} {
		if r.Writes[p] != want {
			t.Errorf("write %s: %s", p, r.Writes[p])
		}
	}
	for _, p := range []string{"/usr/probe-wrote", "/etc/probe-wrote", "/probe-wrote"} {
		if !strings.Contains(r.Writes[p], "read-only file system") {
			t.Errorf("write %s: %s", p, r.Writes[p])
		}
	}
	if _, err := os.Stat("/tmp/probe-wrote"); err == nil {
		t.Errorf("the agent's /tmp is the host's")
		os.Remove("/tmp/probe-wrote")
	}
	if fi, err := os.Stat(s.home); err != nil || fi.Mode().Perm() != 0o700 || int(fi.Sys().(*syscall.Stat_t).Uid) != uid {
		t.Errorf("the agent's home: %v %v", fi, err)
	} else if b, err := os.ReadFile(filepath.Join(s.home, "probe-wrote")); err != nil || string(b) != "x" {
		t.Errorf("the agent's home was not kept: %v", err)
	}
	// No secret, and not the token, in any argv, inside or out.
	if len(r.Token) != 64 {
		t.Errorf("the run's token %q", r.Token)
	}
	for _, argv := range append(r.Cmdlines, hostArgv...) {
		for _, v := range append(mapValues(launcherSecrets), agentKey, r.Token) {
			if v != "" && strings.Contains(argv, v) {
				t.Errorf("an argv holds a secret: %q", argv)
			}
		}
	}
	if !slices.ContainsFunc(r.Cmdlines, func(a string) bool { return strings.Contains(a, "vaultgate connect") }) {
		t.Errorf("the bridge is not among the agent's processes: %v", r.Cmdlines)
	}
	// Its way to the vault.
	if !slices.Contains(r.Tools, "read") || !slices.Contains(r.Tools, "delete") {
		t.Errorf("tools: %v", r.Tools)
	}
	if r.Read != "a note the agent reads\n" {
		t.Errorf("read notes/a.md: %q", r.Read)
	}
	if !r.DeleteErr || !strings.Contains(r.Delete, "protected") {
		t.Errorf("delete мета/x.md: %v %q", r.DeleteErr, r.Delete)
	}
	if b, err := os.ReadFile(filepath.Join(s.vault, "мета/x.md")); err != nil || string(b) != "protected\n" {
		t.Errorf("the protected file: %q %v", b, err)
	}
	lines := auditLines(t, s.audit)
	runID := ""
	var got []string
	for _, l := range lines {
		if l.Via != "run" || l.Run == "" {
			t.Errorf("audit line via %q run %q", l.Via, l.Run)
		}
		if runID == "" {
			runID = l.Run
		} else if l.Run != runID {
			t.Errorf("two run ids in one run: %s, %s", runID, l.Run)
		}
		got = append(got, l.Tool+":"+l.Decision)
	}
	if !slices.Equal(got, []string{"read:allow", "delete:deny"}) {
		t.Errorf("audit: %v", got)
	}
	if !strings.Contains(errb.String(), runID) {
		t.Errorf("the launcher did not say the run's id %s: %s", runID, errb.String())
	}
}

type auditLine struct {
	Via, Run, Tool, Decision, Session string
}

func auditLines(t *testing.T, p string) []auditLine {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// allArgv is every argv on the host now.
func allArgv() []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			out = append(out, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func waitFile(p string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// waitFor waits until the launcher has made the agent's home.
func waitFor(t *testing.T, home string, errb *bytes.Buffer) {
	t.Helper()
	if !waitFile(home, 30*time.Second) {
		t.Fatalf("the agent's home %s never appeared: %s", home, errb.String())
	}
}

// TestWallRunFaults: when the user, the program, a secret or a layer of
// the wall is missing, run exits non-zero with the reason and the agent
// never runs (it would leave a mark in its home).
func TestWallRunFaults(t *testing.T) {
	needRoot(t)
	agentUser(t, runUser)
	probe := runProbe(t)
	bin := filepath.Join(bundle(t), "vaultgate")
	// A copy of the probe outside the system folders: not in the view
	// unless run shows it.
	hidden := filepath.Join(t.TempDir(), "runprobe")
	if b, err := os.ReadFile(probe); err != nil || os.WriteFile(hidden, b, 0o755) != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, table string
		args        []string
		env         []string
		why         string
	}{
		{"user missing", strings.Replace(runTable, runUser, "vaultgate-no-such-user", 1), nil, nil, `"vaultgate-no-such-user": user: unknown user vaultgate-no-such-user (create it: useradd --system --user-group --no-create-home --shell /usr/sbin/nologin vaultgate-no-such-user)`},
		{"no user as root", strings.Replace(runTable, "user = \""+runUser+"\"\n", "", 1), nil, nil, "[run] user is required when vaultgate runs as root"},
		{"program missing", runTable, []string{"/usr/local/libexec/vaultgate-no-such-agent"}, nil, "can't start /usr/local/libexec/vaultgate-no-such-agent"},
		{"program in the state folder", runTable, []string{"STATE/runprobe"}, nil, "overlaps the state folder"},
		{"secret unset", runTable, nil, []string{"RUN_TEST_AGENT_KEY="}, "$RUN_TEST_AGENT_KEY is not set"},
		{"wall can't stand up (no such --cwd)", runTable, []string{"--cwd", "/nonexistent-vg"}, nil, "chdir /nonexistent-vg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newRunSetup(t, c.table)
			mark := filepath.Join(s.home, "ran")
			args := []string{"run", "--config", s.cfg}
			agent := []string{probe, "touch", mark}
			switch {
			case len(c.args) == 1 && strings.HasPrefix(c.args[0], "STATE/"):
				// run would have to show the state folder for it to start
				agent[0] = filepath.Join(s.state, strings.TrimPrefix(c.args[0], "STATE/"))
				b, _ := os.ReadFile(hidden)
				if os.MkdirAll(s.state, 0o700) != nil || os.WriteFile(agent[0], b, 0o755) != nil {
					t.Fatal("copying the probe into the state folder")
				}
			case len(c.args) == 1:
				agent[0] = c.args[0]
			case len(c.args) > 1:
				args = append(args, c.args...)
			}
			cmd := exec.Command(bin, append(append(args, "--"), agent...)...)
			cmd.Env = append(launcherEnv(), c.env...)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errorsAs(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("exit %v, want 1: %s", err, out)
			}
			if !strings.Contains(string(out), c.why) {
				t.Errorf("the reason %q is not in: %s", c.why, out)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Errorf("the agent ran")
			}
			if _, err := os.Stat(s.audit); err == nil && len(auditLines(t, s.audit)) > 0 {
				t.Errorf("a failed run wrote audit lines")
			}
		})
	}
	// And the mark does appear when nothing is missing.
	s := newRunSetup(t, runTable)
	cmd := exec.Command(bin, "run", "--config", s.cfg, "--", probe, "touch", filepath.Join(s.home, "ran"))
	cmd.Env = launcherEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run: %v %s", err, out)
	}
	if _, err := os.Stat(filepath.Join(s.home, "ran")); err != nil {
		t.Errorf("the agent did not run: %v", err)
	}
	// A program in /opt runs: /opt is system to the agent.
	os.MkdirAll("/opt", 0o755)
	opt, err := os.MkdirTemp("/opt", "vaultgate-runtest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(opt)
	os.Chmod(opt, 0o755)
	if b, err := os.ReadFile(probe); err != nil || os.WriteFile(filepath.Join(opt, "runprobe"), b, 0o755) != nil {
		t.Fatal(err)
	}
	s = newRunSetup(t, runTable)
	cmd = exec.Command(bin, "run", "--config", s.cfg, "--", filepath.Join(opt, "runprobe"), "touch", filepath.Join(s.home, "ran"))
	cmd.Env = launcherEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("a program in /opt: %v %s", err, out)
	} else if _, err := os.Stat(filepath.Join(s.home, "ran")); err != nil {
		t.Errorf("the agent in /opt did not run: %v", err)
	}
	// A program outside the system folders runs with no read_only: run
	// shows the file alone (it is in no npm package).
	s = newRunSetup(t, runTable)
	cmd = exec.Command(bin, "run", "--config", s.cfg, "--", hidden, "touch", filepath.Join(s.home, "ran"))
	cmd.Env = launcherEnv()
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "shown read-only for it to start: "+hidden+"\n") {
		t.Errorf("a program outside the system folders: %v %s", err, out)
	} else if _, err := os.Stat(filepath.Join(s.home, "ran")); err != nil {
		t.Errorf("the agent outside the system folders did not run: %v", err)
	}
	// It runs as well where [run] read_only binds its folder; a read_only
	// path that is missing starts nothing.
	for _, ro := range []string{filepath.Dir(hidden), "/nonexistent-vg-ro"} {
		s := newRunSetup(t, strings.Replace(runTable, "[[run.secrets]]", fmt.Sprintf("read_only = [%q]\n[[run.secrets]]", ro), 1))
		cmd := exec.Command(bin, "run", "--config", s.cfg, "--", hidden, "touch", filepath.Join(s.home, "ran"))
		cmd.Env = launcherEnv()
		out, err := cmd.CombinedOutput()
		_, ran := os.Stat(filepath.Join(s.home, "ran"))
		if ro == filepath.Dir(hidden) && (err != nil || ran != nil) {
			t.Errorf("read_only %s: %v %s", ro, err, out)
		}
		if ro != filepath.Dir(hidden) && (err == nil || ran == nil || !strings.Contains(string(out), ro)) {
			t.Errorf("read_only %s (missing): %v %s", ro, err, out)
		}
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// TestWallRunEnds: a signal to run, or run's death, ends the agent and
// everything it started, even a child in a session of its own.
func TestWallRunEnds(t *testing.T) {
	needRoot(t)
	agentUser(t, runUser)
	probe := runProbe(t)
	bin := filepath.Join(bundle(t), "vaultgate")
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			s := newRunSetup(t, runTable)
			cmd := exec.Command(bin, "run", "--config", s.cfg, "--", probe, "sleep")
			cmd.Env = launcherEnv()
			var errb lockedBuffer // read while run may still write to it
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if !waitFile(filepath.Join(s.home, "ready"), 30*time.Second) {
				cmd.Process.Kill()
				t.Fatalf("the agent never got ready: %s", errb.String())
			}
			ns := agentPidNS(t, cmd.Process.Pid)
			if n := len(inPidNS(ns)); n < 2 {
				t.Fatalf("%d processes in the agent's pid namespace, want the agent and its child", n)
			}
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if sig != syscall.SIGKILL && err == nil {
					t.Errorf("run exited 0 after %v", sig)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("run did not end after %v: %s", sig, errb.String())
			}
			for end := time.Now().Add(10 * time.Second); len(inPidNS(ns)) > 0 && time.Now().Before(end); {
				time.Sleep(20 * time.Millisecond)
			}
			if left := inPidNS(ns); len(left) > 0 {
				t.Errorf("after %v to run, processes of the agent live on: %v", sig, left)
				for _, p := range left {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
		})
	}
}

// agentPidNS is the pid namespace of the launcher's child: the agent.
func agentPidNS(t *testing.T, launcher int) string {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", launcher))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			own, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", launcher))
			if ns, err := os.Readlink("/proc/" + c + "/ns/pid"); err == nil && ns != own {
				return ns
			}
		}
	}
	t.Fatalf("no child of run %d in a pid namespace of its own", launcher)
	return ""
}

// inPidNS are the host's processes in pid namespace ns.
func inPidNS(ns string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns {
			if b, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(b[strings.LastIndexByte(string(b), ')')+1:]), " Z ") {
				out = append(out, pid)
			}
		}
	}
	return out
}

// checkPrivileges: no capability in any set, and no_new_privs.
func checkPrivileges(t *testing.T, r probeReport) {
	t.Helper()
	for _, k := range []string{"CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"} {
		if r.Status[k] != "0000000000000000" {
			t.Errorf("%s = %q, want no capabilities", k, r.Status[k])
		}
	}
	if r.Status["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs = %q", r.Status["NoNewPrivs"])
	}
}

// TestWallRunUserNS: vaultgate not root runs the agent as its own uid in
// a user namespace: the same uid inside, no capabilities, no_new_privs,
// the vault and the state folder not there, its way to the vault the
// run's server.
func TestWallRunUserNS(t *testing.T) {
	needRoot(t) // to make the unprivileged user the launcher runs as
	const name = "vaultgate-test"
	uid, gid := agentUser(t, name)
	probe := runProbe(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) is needed to start vaultgate as %s: %v", name, err)
	}
	bin := filepath.Join(bundle(t), "vaultgate")
	for d := filepath.Dir(bin); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o711) // the user must reach the binary
		}
	}
	dir, err := os.MkdirTemp("", "vaultgate-run-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	vault := filepath.Join(dir, "vault")
	os.MkdirAll(filepath.Join(vault, "notes"), 0o755)
	os.MkdirAll(filepath.Join(vault, "мета"), 0o755)
	os.WriteFile(filepath.Join(vault, "notes/a.md"), []byte("a note the agent reads\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "мета/x.md"), []byte("protected\n"), 0o644)
	cfg := filepath.Join(dir, "c.toml")
	home := filepath.Join(dir, "agent-home")
	os.WriteFile(cfg, []byte("vault = \"vault\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nedit = [\".\"]\nprotected = [\"мета\"]\n[run]\nhome = \"agent-home\"\n"), 0o644)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })

	cmd := exec.Command(setpriv, "--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(gid), "--clear-groups", "--",
		bin, "run", "--config", cfg, "--", probe, "probe", vault, cfg, filepath.Join(dir, "state"))
	cmd.Env = append(launcherEnv(), "HOME="+dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, home, &errb)
	os.WriteFile(filepath.Join(home, "launcher.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	waitFile(filepath.Join(home, "mid"), 30*time.Second)
	os.WriteFile(filepath.Join(home, "scanned"), nil, 0o644)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("vaultgate run as %s: %v\n%s\n%s", name, err, out.String(), errb.String())
	}
	var r probeReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("the probe's report: %v\n%s\n%s", err, out.String(), errb.String())
	}
	if len(r.Err) > 0 {
		t.Errorf("the probe failed: %v", r.Err)
	}
	if r.UID != uid || r.EUID != uid || r.GID != gid || len(r.Groups) > 0 {
		t.Errorf("uid %d euid %d gid %d groups %v, want the launcher's %d %d and no groups", r.UID, r.EUID, r.GID, r.Groups, uid, gid)
	}
	checkPrivileges(t, r)
	for p, got := range r.Reads {
		if !strings.Contains(got, "no such file") {
			t.Errorf("the agent could see %s: %s", p, got)
		}
	}
	for k := range launcherSecrets {
		if slices.ContainsFunc(r.Env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			t.Errorf("the launcher's %s reached the agent", k)
		}
	}
	if !strings.Contains(r.Kill, "no such process") || !strings.Contains(r.Ptrace, "no such process") {
		t.Errorf("signal / ptrace vaultgate: %q %q", r.Kill, r.Ptrace)
	}
	if r.Read != "a note the agent reads\n" || !r.DeleteErr || !strings.Contains(r.Delete, "protected") {
		t.Errorf("read %q, delete %v %q", r.Read, r.DeleteErr, r.Delete)
	}
	for _, l := range auditLines(t, filepath.Join(dir, "state", "audit.jsonl")) {
		if l.Via != "run" || l.Run == "" {
			t.Errorf("audit line %+v", l)
		}
	}
}

// TestConnectRefusesBuiltins: run --claude's hook refuses Claude Code's
// file built-ins with the vault's tool to use instead, in the agent's
// language, and has no opinion on the rest.
func TestConnectRefusesBuiltins(t *testing.T) {
	bin := binary(t)
	hook := func(tool, lang string) (string, int) {
		cmd := exec.Command(bin, "connect", "--refuse-builtins", "--lang", lang, "--server", "vault")
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":{"file_path":"/x"}}`)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	for tool, instead := range map[string]string{"Write": "mcp__vault__write", "Read": "mcp__vault__read", "Bash": "mcp__vault__bash", "Grep": "mcp__vault__search", "Monitor": "mcp__vault__*"} {
		out, code := hook(tool, "en")
		var o struct {
			HookSpecificOutput struct{ HookEventName, PermissionDecision, PermissionDecisionReason string }
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil || code != 0 {
			t.Fatalf("%s: %v %d %q", tool, err, code, out)
		}
		h := o.HookSpecificOutput
		if h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, "Use "+instead) {
			t.Errorf("%s: %+v", tool, h)
		}
	}
	if out, _ := hook("Write", "ru"); !strings.Contains(out, "Используйте mcp__vault__write") {
		t.Errorf("ru: %s", out)
	}
	for _, tool := range []string{"mcp__vault__write", "TodoWrite", "Task", "WebFetch"} {
		if out, code := hook(tool, "en"); out != "" || code != 0 {
			t.Errorf("%s: %q %d, want no opinion", tool, out, code)
		}
	}
	cmd := exec.Command(bin, "connect", "--refuse-builtins")
	cmd.Stdin = strings.NewReader("not json")
	if err := cmd.Run(); err == nil || err.(*exec.ExitError).ExitCode() != 2 {
		t.Errorf("unreadable input: %v, want exit 2 (blocks the call)", err)
	}
}

// TestConnectReportsAttempts: run --claude's hook reports the calls of
// refused built-ins to the run; one it can't report is still refused
// (PreToolUse), and after the batch the failure is the hook's exit 1,
// which Claude Code shows, not a refusal of anything.
func TestConnectReportsAttempts(t *testing.T) {
	bin := binary(t)
	hook := func(input string, socket bool) (string, string, int) {
		args := []string{"connect", "--refuse-builtins"}
		if socket {
			args = append(args, "--socket", filepath.Join(t.TempDir(), "no-such-sock"), "--token-file", "/nonexistent-token")
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(input)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return stdout.String(), stderr.String(), code
	}
	batch := `{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Write","tool_input":{"file_path":"/x","content":"y"},"tool_use_id":"t1","tool_response":"No such tool available: Write"}]}`
	if out, _, code := hook(batch, false); out != "" || code != 0 {
		t.Errorf("a batch, nowhere to report: %q %d", out, code)
	}
	if out, errOut, code := hook(batch, true); out != "" || code != 1 || !strings.Contains(errOut, "not in the audit log") {
		t.Errorf("a batch whose report fails: %q %q %d", out, errOut, code)
	}
	if out, _, code := hook(`{"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"TodoWrite","tool_use_id":"t2"}]}`, true); out != "" || code != 0 {
		t.Errorf("a batch with nothing refused: %q %d", out, code)
	}
	out, _, code := hook(`{"hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"/x"},"tool_use_id":"t3"}`, true)
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Errorf("a PreToolUse whose report fails is not refused: %q %d", out, code)
	}
}

// lockedBuffer is a bytes.Buffer that a process's output may be copied
// into while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
