package judgesock

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"golang.org/x/sys/unix"
)

func TestDefaultAgentIsConfigs(t *testing.T) {
	if DefaultAgent != config.DefaultAgent {
		t.Errorf("DefaultAgent %q, config.DefaultAgent %q", DefaultAgent, config.DefaultAgent)
	}
}

func TestDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if d := Dir(); d != "/run/user/1000/vaultgate" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", d)
	}
	t.Setenv("XDG_RUNTIME_DIR", "relative/dir") // not a place to trust
	if d := Dir(); filepath.Dir(d) != filepath.Clean(os.TempDir()) {
		t.Errorf("with a relative XDG_RUNTIME_DIR: %s", d)
	}
}

// CheckDir trusts a folder of this user's alone, and nothing else: a
// folder others may enter, a link to a good folder, a file.
func TestCheckDir(t *testing.T) {
	root := t.TempDir()
	good := filepath.Join(root, "good")
	if err := EnsureDir(good); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(good); err != nil { // again: it is there
		t.Fatal(err)
	}
	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	link := filepath.Join(root, "link")
	os.Symlink(good, link)
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	for _, bad := range []string{open, link, file, filepath.Join(root, "missing")} {
		if err := CheckDir(bad); err == nil {
			t.Errorf("%s: trusted", bad)
		}
	}
	if err := EnsureDir(open); err == nil {
		t.Errorf("EnsureDir of %s: trusted", open)
	}
}

// Name changes with each thing a judge is keyed by, and only with them.
func TestName(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "vaultgate")
	os.WriteFile(bin, []byte("binary"), 0o755)
	base, err := Name(dir, "/c.toml", "d1", "default", bin)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Name(dir, "/c.toml", "d1", "default", bin); again != base {
		t.Errorf("not stable: %s, %s", base, again)
	}
	linked := filepath.Join(dir, "linked")
	os.Symlink(bin, linked)
	if viaLink, _ := Name(dir, "/c.toml", "d1", "default", linked); viaLink != base {
		t.Errorf("a link to the binary names another judge: %s, %s", base, viaLink)
	}
	seen := map[string]string{base: "base"}
	for what, args := range map[string][4]string{
		"config path": {"/other.toml", "d1", "default", bin},
		"digest":      {"/c.toml", "d2", "default", bin},
		"agent":       {"/c.toml", "d1", "other", bin},
	} {
		n, err := Name(dir, args[0], args[1], args[2], args[3])
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[n]; ok {
			t.Errorf("%s: same name as %s", what, prev)
		}
		seen[n] = what
	}
	os.WriteFile(bin, []byte("upgraded binary"), 0o755)
	if n, _ := Name(dir, "/c.toml", "d1", "default", bin); seen[n] != "" {
		t.Errorf("an upgraded binary: same name as %s", seen[n])
	}
	if _, err := Name(dir, "/c.toml", "d1", "default", filepath.Join(dir, "none")); err == nil {
		t.Error("a missing binary has a name")
	}
	if _, err := Name(filepath.Join(dir, string(make([]byte, 100))), "/c.toml", "d1", "default", bin); err == nil {
		t.Error("a name too long for a socket")
	}
}

func TestDial(t *testing.T) {
	if !Supported {
		t.Skip("no judge is reached on " + runtime.GOOS)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	if _, err := Dial(sock); err == nil {
		t.Fatal("dialled nothing")
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	if _, err := Dial(filepath.Join(dir, "file")); err == nil {
		t.Fatal("dialled a file")
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c) // the request, to its end
			c.Write([]byte(`{"code":0,"stdout":"eyJvayI6dHJ1ZX0K"}`))
			c.Close()
		}
	}()
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	if pid, err := PeerPID(c); err != nil || pid != os.Getpid() {
		t.Errorf("peer pid %d, %v; want this process, %d", pid, err, os.Getpid())
	}
	var out, errOut bytes.Buffer
	code, err := Ask(c, Request{Config: "/c.toml"}, strings.NewReader("{}"), &out, &errOut)
	if err != nil || code != 0 || out.String() != "{\"ok\":true}\n" {
		t.Errorf("Ask: %d %v %q", code, err, out.String())
	}
}

// TestConfigKeyIsConfigs: the key a hook computes from the config's path is
// the one config.Load gives the judge, or no hook would reach its judge
// (and a judge would refuse every request as another config's).
func TestConfigKeyIsConfigs(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "vault"), 0o755)
	cfgPath := filepath.Join(dir, "c.toml")
	os.WriteFile(cfgPath, []byte("vault = \"vault\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nedit = [\".\"]\n"), 0o644)
	t.Chdir(dir)
	cfg, err := config.Load("c.toml")
	if err != nil {
		t.Fatal(err)
	}
	abs, digest, err := ConfigKey("c.toml")
	if err != nil || abs != cfg.File || digest != cfg.Digest {
		t.Errorf("ConfigKey: %s %s %v; config.Load: %s %s", abs, digest, err, cfg.File, cfg.Digest)
	}
}

// TestAskExecInterrupted: exec's command runs as long as its own timeout
// allows (no budget of the hook's on the answer), and a Close of the
// connection while exec waits (exec interrupted) ends the wait at once
// and tells the judge, which stops the command.
func TestAskExecInterrupted(t *testing.T) {
	if !Supported {
		t.Skip("no judge is reached on " + runtime.GOOS)
	}
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	judged := make(chan Request, 1)
	hungUp := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadBytes('\n')
		var req Request
		json.Unmarshal(line, &req) // a request it can't read fails the test below
		judged <- req
		// The command runs until exec goes away.
		_, err = c.Read(make([]byte, 1))
		hungUp <- err
	}()
	c, err := Dial(sock)
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := unix.GetsockoptTimeval(fdOf(t, c), unix.SOL_SOCKET, unix.SO_RCVTIMEO)
	if err != nil || rcv.Sec != 0 || rcv.Usec != 0 {
		t.Errorf("the connection's reads time out after %v (%v): a command that runs longer would fail", rcv, err)
	}
	call := ExecCall{CallID: "id", Cwd: "/v", Command: "sleep 60", Environ: []string{"A=\xff"}}
	done := make(chan error, 1)
	go func() {
		_, err := AskExecSent(c, Request{Config: "/c.toml", Run: &call}, func() {
			if req := <-judged; req.Run == nil || req.Run.Command != call.Command || req.Run.Environ[0] != "A=\uFFFD" {
				t.Errorf("the judge read %+v", req.Run)
			}
			c.Close()
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("an interrupted exec got an answer")
		}
	case <-time.After(30 * time.Second): // a safety net, not a measure
		t.Fatal("a Close did not end exec's wait for its answer")
	}
	select {
	case err := <-hungUp:
		if err != io.EOF {
			t.Errorf("the judge read %v, want EOF", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the judge was not told")
	}
}

// fdOf is f's descriptor, without taking it out of the poller.
func fdOf(t *testing.T, f *os.File) int {
	raw, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	raw.Control(func(d uintptr) { fd = int(d) })
	return fd
}
