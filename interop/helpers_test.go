// Package interop drives the built vaultgate binary with MCP clients that
// are not mcp-go: the official TypeScript SDK (through node, interop/ts) and
// the official Go SDK, over stdio and Streamable HTTP, and checks what they
// did on disk.
package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const token = "interop-token-0123456789abcdef"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	if bundleDir != "" {
		os.RemoveAll(bundleDir)
	}
	os.Exit(code)
}

// binary builds vaultgate once per test run.
func binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vaultgate-interop-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "vaultgate")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/vaultgate").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err, out}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// vault copies testdata/vault into a temp folder and writes a config for it
// beside it (outside the vault): the sample zones, the audit log in a state
// folder of its own, and bash with the wall off, so that bash runs on the
// analysis alone until the OS wall lands.
func vault(tb testing.TB) (dir, cfg, auditPath string) {
	tb.Helper()
	root := tb.TempDir()
	dir = filepath.Join(root, "vault")
	vaulttest.CopyDir(tb, "../testdata/vault", dir)
	cfg = filepath.Join(root, "vault.toml")
	body := `vault = "vault"
lang  = "en"
[audit]
path = "state/audit.jsonl"
[zones]
write     = ["мета/бобер"]
create    = ["💬 чаты"]
edit      = ["."]
protected = [".obsidian", "мета"]
[bash]
wall = "off"
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	return dir, cfg, filepath.Join(root, "state", "audit.jsonl")
}

// serverEnv is the whole environment the binary gets: nothing of the
// test's own, so a stray variable can't change what is served.
func serverEnv(tb testing.TB) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tb.TempDir(), "LANG=C.UTF-8", "VAULTGATE_TOKEN=" + token}
}

// serveHTTP starts `vaultgate serve --http 127.0.0.1:0` on cfg and returns
// the URL of its /mcp endpoint, read from the line it prints on start.
func serveHTTP(tb testing.TB, cfg string) string {
	tb.Helper()
	cmd := exec.Command(binary(tb), "serve", "--http", "127.0.0.1:0", "--config", cfg)
	cmd.Env = serverEnv(tb)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	var logBuf syncBuffer
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			logBuf.WriteString(line + "\n")
			if _, rest, ok := strings.Cut(line, " at http://"); ok {
				if u, _, ok := strings.Cut(rest, " "); ok {
					select {
					case urlc <- "http://" + u:
					default:
					}
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tb.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if tb.Failed() {
			tb.Logf("serve --http stderr:\n%s", logBuf.String())
		}
	})
	select {
	case u := <-urlc:
		return u
	case err := <-done:
		tb.Fatalf("serve --http exited: %v\n%s", err, logBuf.String())
	case <-time.After(15 * time.Second):
		tb.Fatalf("serve --http printed no address in 15s:\n%s", logBuf.String())
	}
	return ""
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) WriteString(x string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.WriteString(x)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkScenario checks the vault after a client ran the common scenario
// (interop/ts/interop.test.mjs, and runScenario in gosdk_test.go): each
// allowed call's change is on disk, each refused one changed nothing, and
// the audit log has a line for each call, the refusals among them.
func checkScenario(t *testing.T, dir, auditPath, via, content string) {
	t.Helper()
	want := map[string]string{ // "" for a file that must be there, unchanged
		"Welcome.md":           "# Welcome\n\nThis is the sample vault for vaultgate.\nThe agent may edit notes here, but never delete them.\n\n- [ ] done: read the README\n",
		"notes/moved.md":       content,
		"notes/x.md":           "hi\n",
		"notes/ideas.md":       "",
		"мета/x.md":            "",
		"мета/план.md":         "",
		".obsidian/app.json":   "",
		"💬 чаты/2026-11-30.md": "",
	}
	for p, body := range want {
		if body == "" {
			orig, err := os.ReadFile(filepath.Join("../testdata/vault", p))
			if err != nil {
				t.Fatal(err)
			}
			body = string(orig)
		}
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != body {
			t.Errorf("%s = %q, %v; want %q", p, b, err, body)
		}
	}
	for _, p := range []string{"мета/бобер/x.md", "notes/new.md"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	var allowed, denied int
	deniedDelete := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Via, Tool, Decision, Rule string
			Args                      map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("audit line %q: %v", sc.Bytes(), err)
		}
		if rec.Via != via {
			t.Errorf("audit line via %q, want %q: %s", rec.Via, via, sc.Bytes())
		}
		switch rec.Decision {
		case "allow":
			allowed++
		case "deny":
			denied++
			if rec.Tool == "delete" && rec.Args["path"] == "мета/x.md" && rec.Rule == "zones" {
				deniedDelete = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// read ×2, write, edit, move, delete, list ×2, search ×2, bash allowed;
	// the unread edit, the protected delete, the rm in мета denied.
	if allowed < 11 || denied < 3 || !deniedDelete {
		t.Errorf("audit: %d allowed, %d denied, the protected delete denied by zones: %v", allowed, denied, deniedDelete)
	}
}
