package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/judgesock"
)

// judgeOf is the pid of the process that listens for the hook of cfg
// (agent default) under the bundle's vaultgate, or 0 if none does.
func judgeOf(t *testing.T, cfg string) int {
	t.Helper()
	abs, digest, err := judgesock.ConfigKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name, err := judgesock.Name(judgesock.Dir(), abs, digest, config.DefaultAgent, filepath.Join(bundle(t), "vaultgate"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := judgesock.Dial(name)
	if err != nil {
		return 0
	}
	defer c.Close()
	pid, err := judgesock.PeerPID(c)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.ReplaceAll(string(b), "\x00", " ")
}

// gone waits until process pid has ended.
func gone(pid int, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		if st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil && bytes.Contains(st, []byte(") Z ")) {
			return true // ended, not yet reaped by its new parent
		}
	}
	return false
}

// TestHookStartsItsJudge: vaultgate-hook's first call starts a
// vaultgate hook-judge for the config and agent, which answers that call
// and the next ones (the same process); an edit of the config ends it,
// and the next call starts a judge of the new config, which judges by it.
func TestHookStartsItsJudge(t *testing.T) {
	if !judgesock.Supported {
		t.Skip("no judge is reached on " + runtime.GOOS)
	}
	vault, cfg, auditPath := ruleVault(t, "")
	hook := []string{filepath.Join(bundle(t), "vaultgate-hook")}
	write := hookJSON("hj", vault, "Write", map[string]any{"file_path": filepath.Join(vault, "drafts/x.md"), "content": "x"})
	read := hookJSON("hj", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "drafts/x.md")})
	if pid := judgeOf(t, cfg); pid != 0 {
		t.Fatalf("a judge before the first call: %d", pid)
	}
	if out, errs, code := runHookBinary(t, hook, cfg, read); code != 0 || !strings.Contains(out, `"allow"`) {
		t.Fatalf("first call: exit %d, %q %q", code, out, errs)
	}
	first := judgeOf(t, cfg)
	if first == 0 || !strings.Contains(cmdline(first), "hook-judge --config "+cfg) {
		t.Fatalf("no judge after the first call: %d %q", first, cmdline(first))
	}
	if out, errs, code := runHookBinary(t, hook, cfg, write); code != 0 || !strings.Contains(out, "drafts/ is the person's own") {
		t.Fatalf("second call: exit %d, %q %q", code, out, errs)
	}
	if pid := judgeOf(t, cfg); pid != first {
		t.Errorf("the second call's judge: %d, want %d", pid, first)
	}
	logData, _ := os.ReadFile(auditPath)
	if n := strings.Count(string(logData), `"via":"hook"`); n != 2 {
		t.Errorf("%d hook lines in the audit, want 2:\n%s", n, logData)
	}

	// The rule's reason is reworded: the old judge ends, a new one judges
	// the Write by the new config.
	body, _ := os.ReadFile(cfg)
	edited := strings.Replace(string(body), "drafts/ is the person's own", "drafts/ belong to the person", 1)
	if edited == string(body) {
		t.Fatal("the reason to edit is not in the config")
	}
	if err := os.WriteFile(cfg, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if !gone(first, 5*time.Second) {
		t.Fatalf("the judge of the old config still runs: %q", cmdline(first))
	}
	if out, errs, code := runHookBinary(t, hook, cfg, write); code != 0 || !strings.Contains(out, "drafts/ belong to the person") {
		t.Fatalf("after the edit: exit %d, %q %q", code, out, errs)
	}
	if second := judgeOf(t, cfg); second == 0 || second == first {
		t.Errorf("the judge of the new config: %d (the old was %d)", second, first)
	}
}

// TestHookJudgeRefusesAnotherConfig: a request that names another config
// than the judge loaded is denied, whatever socket it came in on.
func TestHookJudgeRefusesAnotherConfig(t *testing.T) {
	if !judgesock.Supported {
		t.Skip("no judge is reached on " + runtime.GOOS)
	}
	vault, cfg, _ := sampleVault(t)
	read := hookJSON("rc", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "Welcome.md")})
	if _, errs, code := runHookBinary(t, []string{filepath.Join(bundle(t), "vaultgate-hook")}, cfg, read); code != 0 {
		t.Fatalf("first call: exit %d %q", code, errs)
	}
	abs, digest, _ := judgesock.ConfigKey(cfg)
	name, _ := judgesock.Name(judgesock.Dir(), abs, digest, config.DefaultAgent, filepath.Join(bundle(t), "vaultgate"))
	for _, req := range []judgesock.Request{
		{Config: abs, Digest: strings.Repeat("0", 64), Agent: config.DefaultAgent},
		{Config: abs + ".other", Digest: digest, Agent: config.DefaultAgent},
		{Config: abs, Digest: digest, Agent: "someone"},
	} {
		c, err := judgesock.Dial(name)
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code, err := judgesock.Ask(c, req, strings.NewReader(read), &out, &errOut)
		if err != nil || code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "the judge on this socket loaded") {
			t.Errorf("%+v: %d %v %q %q", req, code, err, out.String(), errOut.String())
		}
	}
}

// TestHookJudgeEnds: a judge ends by itself after --idle without a call,
// and when its config is removed.
func TestHookJudgeEnds(t *testing.T) {
	if !judgesock.Supported {
		t.Skip("no judge is reached on " + runtime.GOOS)
	}
	for _, how := range []string{"idle", "config removed"} {
		_, cfg, _ := sampleVault(t)
		idle := map[string]string{"idle": "1s", "config removed": "1h"}[how]
		cmd := exec.Command(filepath.Join(bundle(t), "vaultgate"), "hook-judge", "--config", cfg, "--idle", idle)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); judgeOf(t, cfg) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("%s: the judge never listened: %s", how, errOut.String())
			}
		}
		if how == "config removed" {
			os.Remove(cfg)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			want := map[string]string{"idle": "no call for", "config removed": "the config was changed or removed"}[how]
			if err != nil || !strings.Contains(errOut.String(), want) {
				t.Errorf("%s: %v, stderr %q", how, err, errOut.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%s: the judge still runs", how)
		}
	}
}

// TestHookAnsweredByServe: with vaultgate serve running on the config, its
// judge answers vaultgate-hook, and no judge of the hook's own is started.
func TestHookAnsweredByServe(t *testing.T) {
	if !judgesock.Supported {
		t.Skip("no judge is reached on " + runtime.GOOS)
	}
	vault, cfg, _ := ruleVault(t, "")
	serve := exec.Command(filepath.Join(bundle(t), "vaultgate"), "serve", "--config", cfg)
	stdin, err := serve.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var serveErr bytes.Buffer
	serve.Stderr = &serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	for deadline := time.Now().Add(10 * time.Second); judgeOf(t, cfg) != serve.Process.Pid; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve's judge never listened: %s", serveErr.String())
		}
	}
	write := hookJSON("sv", vault, "Write", map[string]any{"file_path": filepath.Join(vault, "drafts/x.md"), "content": "x"})
	read := hookJSON("sv", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "drafts/x.md")})
	if _, errs, code := runHookBinary(t, []string{filepath.Join(bundle(t), "vaultgate-hook")}, cfg, read); code != 0 {
		t.Errorf("read through serve: exit %d, %q", code, errs)
	}
	if out, errs, code := runHookBinary(t, []string{filepath.Join(bundle(t), "vaultgate-hook")}, cfg, write); code != 0 || !strings.Contains(out, "drafts/ is the person's own") {
		t.Errorf("through serve: exit %d, %q %q", code, out, errs)
	}
	if pid := judgeOf(t, cfg); pid != serve.Process.Pid {
		t.Errorf("the judge is %d %q, not serve (%d)", pid, cmdline(pid), serve.Process.Pid)
	}
	stdin.Close() // the client is gone: serve ends, and its judge with it
	if err := serve.Wait(); err != nil {
		t.Fatalf("serve: %v, %s", err, serveErr.String())
	}
	if pid := judgeOf(t, cfg); pid != 0 {
		t.Errorf("a judge after serve ended: %d", pid)
	}
}

// TestHookWithoutAJudge: a config that does not load ends the hook at
// once (the judge it starts exits, and vaultgate hook says why), and
// vaultgate-hook with no vaultgate beside it denies every call.
func TestHookWithoutAJudge(t *testing.T) {
	vault, cfg, _ := sampleVault(t)
	read := hookJSON("nj", vault, "Read", map[string]any{"file_path": filepath.Join(vault, "Welcome.md")})
	broken := filepath.Join(filepath.Dir(cfg), "broken.toml")
	os.WriteFile(broken, []byte("vault = \n"), 0o644)
	start := time.Now()
	if out, errs, code := runHookBinary(t, []string{filepath.Join(bundle(t), "vaultgate-hook")}, broken, read); code != 2 || out != "" || !strings.Contains(errs, "config") {
		t.Errorf("broken config: exit %d, %q %q", code, out, errs)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("broken config: the hook waited %s for a judge that had ended", d)
	}
	alone := loneHook(t)
	if out, errs, code := runHookBinary(t, []string{alone}, cfg, read); code != 2 || out != "" || !strings.Contains(errs, "no vaultgate binary beside") {
		t.Errorf("alone: exit %d, %q %q", code, out, errs)
	}
}
