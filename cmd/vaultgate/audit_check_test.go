package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vaultgate/vaultgate/audit"
)

// The "How it is checked", with the built binary: four stdio
// servers write one log at once; the log verifies clean and stats counts
// every call; each kind of tampering of a copy makes verify name the
// right line; and admin serves that log only to its token.

const (
	checkServers = 4
	checkCalls   = 30 // per server: a read, a denied delete and a list, in turn
)

func TestAuditAcrossFourServers(t *testing.T) {
	bin := binary(t)
	_, cfg, logPath := sampleVault(t)
	home := t.TempDir()

	var wg sync.WaitGroup
	errs := make(chan error, checkServers)
	start := make(chan struct{})
	for s := range checkServers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serveAndCall(bin, home, cfg, start); err != nil {
				errs <- fmt.Errorf("server %d: %w", s, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := checkServers * checkCalls

	out, errOut, code := runBin(t, bin, "audit", "verify", "--config", cfg)
	if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("ok: %d lines", total)) {
		t.Fatalf("verify: exit %d: %s%s", code, out, errOut)
	}
	out, _, code = runBin(t, bin, "audit", "stats", "--audit", logPath, "--json")
	var s audit.Stats
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != 0 {
		t.Fatalf("stats: exit %d, %v: %s", code, err, out)
	}
	third := total / 3
	if s.Calls != total || s.Denies != third || s.ByRule["zones"] != third || s.ByDecision["allow"] != 2*third ||
		s.ByTool["read"].Calls != third || s.ByTool["delete"].Denies != third || s.ByTool["list"].Calls != third {
		t.Errorf("stats: %s", out)
	}
	if len(s.BySession) != checkServers {
		t.Errorf("%d sessions, want %d: %v", len(s.BySession), checkServers, s.BySession)
	}
	for id, c := range s.BySession {
		if c.Calls != checkCalls || c.Denies != checkCalls/3 {
			t.Errorf("session %s: %+v", id, c)
		}
	}
	out, _, _ = runBin(t, bin, "audit", "stats", "--config", cfg)
	if !strings.Contains(out, fmt.Sprintf("calls:   %d (allow %d, deny %d,", total, 2*third, third)) {
		t.Errorf("stats, readable:\n%s", out)
	}
	// Lines are whole and in chain order: seq 1..total, no two alike.
	seen := map[int64]bool{}
	if err := audit.Read(logPath, func(r audit.Record) error {
		if seen[r.Seq] {
			return fmt.Errorf("seq %d twice", r.Seq)
		}
		seen[r.Seq] = true
		return nil
	}); err != nil || len(seen) != total {
		t.Fatalf("read back: %v, %d lines", err, len(seen))
	}

	t.Run("tampering", func(t *testing.T) { tamperCopies(t, bin, logPath, total) })
	t.Run("admin", func(t *testing.T) { adminOverLog(t, bin, logPath, total) })
}

// serveAndCall starts one vaultgate serve and makes its calls once start
// is closed, so the four servers write at the same time.
func serveAndCall(bin, home, cfg string, start <-chan struct{}) error {
	c, err := client.NewStdioMCPClient(bin, []string{"HOME=" + home}, "serve", "--config", cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "audit-check", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return err
	}
	<-start
	for i := range checkCalls {
		req := mcp.CallToolRequest{}
		wantErr := false
		switch i % 3 {
		case 0:
			req.Params.Name, req.Params.Arguments = "read", map[string]any{"path": "Welcome.md"}
		case 1:
			req.Params.Name, req.Params.Arguments = "delete", map[string]any{"path": "мета/x.md"}
			wantErr = true
		case 2:
			req.Params.Name, req.Params.Arguments = "list", map[string]any{"path": "notes"}
		}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return fmt.Errorf("call %d (%s): %w", i, req.Params.Name, err)
		}
		if res.IsError != wantErr {
			return fmt.Errorf("call %d (%s): isError %v", i, req.Params.Name, res.IsError)
		}
	}
	return nil
}

func runBin(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// tamperCopies breaks copies of the log (with its head file) in each way
// the issue names, and wants verify to exit 1 naming the right line.
func tamperCopies(t *testing.T, bin, logPath string, total int) {
	orig, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	head, err := os.ReadFile(logPath + ".head")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(orig, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last newline
	if len(lines) != total {
		t.Fatalf("%d lines, want %d", len(lines), total)
	}
	// find is the index of the first line from i on that holds sub.
	find := func(l [][]byte, i int, sub string) int {
		for ; i < len(l); i++ {
			if bytes.Contains(l[i], []byte(sub)) {
				return i
			}
		}
		t.Fatalf("no line from %d holds %s", i, sub)
		return 0
	}
	for _, c := range []struct {
		name   string
		tamper func(l [][]byte) ([][]byte, int) // and the first bad line
	}{
		{"a line edited: a deny repainted as an allow", func(l [][]byte) ([][]byte, int) {
			i := find(l, 40, `"decision":"deny"`)
			l[i] = bytes.Replace(l[i], []byte(`"decision":"deny"`), []byte(`"decision":"allow"`), 1)
			return l, i + 1
		}},
		{"a line edited: the path changed", func(l [][]byte) ([][]byte, int) {
			i := find(l, 10, `"path":"Welcome.md"`)
			l[i] = bytes.Replace(l[i], []byte(`Welcome.md`), []byte(`Welcome.mx`), 1)
			return l, i + 1
		}},
		{"a line removed", func(l [][]byte) ([][]byte, int) { return append(l[:57:57], l[58:]...), 58 }},
		{"two lines swapped", func(l [][]byte) ([][]byte, int) { l[20], l[21] = l[21], l[20]; return l, 21 }},
		{"the last line torn", func(l [][]byte) ([][]byte, int) {
			l[len(l)-1] = l[len(l)-1][:len(l[len(l)-1])/2]
			return l, total
		}},
		{"the tail cut", func(l [][]byte) ([][]byte, int) { return l[:total-7], total - 6 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cp := filepath.Join(dir, "audit.jsonl")
			l := make([][]byte, len(lines))
			for i := range lines {
				l[i] = bytes.Clone(lines[i])
			}
			l, firstBad := c.tamper(l)
			tampered := bytes.Join(l, nil)
			if bytes.Equal(tampered, orig) {
				t.Fatal("the tampering changed nothing")
			}
			os.WriteFile(cp, tampered, 0o600)
			os.WriteFile(cp+".head", head, 0o600)
			out, errOut, code := runBin(t, bin, "audit", "verify", "--audit", cp)
			if code != 1 || !strings.HasPrefix(out, fmt.Sprintf("broken at line %d (", firstBad)) {
				t.Errorf("verify: exit %d, want 1 naming line %d: %s%s", code, firstBad, out, errOut)
			}
			out, _, code = runBin(t, bin, "audit", "verify", "--audit", cp, "--json")
			var rep audit.VerifyReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 || rep.OK || rep.FirstBad != firstBad || rep.File != cp {
				t.Errorf("verify --json: exit %d, %v: %+v", code, err, rep)
			}
		})
	}
	// An untouched copy verifies clean; a missing one is a usage error.
	dir := t.TempDir()
	cp := filepath.Join(dir, "audit.jsonl")
	os.WriteFile(cp, orig, 0o600)
	os.WriteFile(cp+".head", head, 0o600)
	if out, _, code := runBin(t, bin, "audit", "verify", "--audit", cp); code != 0 {
		t.Errorf("clean copy: exit %d: %s", code, out)
	}
	if _, _, code := runBin(t, bin, "audit", "verify", "--audit", filepath.Join(dir, "gone.jsonl")); code != 2 {
		t.Errorf("missing log: exit %d, want 2", code)
	}
}

// adminOverLog starts vaultgate admin over the log and asks it things.
func adminOverLog(t *testing.T, bin, logPath string, total int) {
	const token = "admin-token-for-the-check-0123"
	// No token, no panel.
	cmd := exec.Command(bin, "admin", "--audit", logPath, "--listen", "127.0.0.1:0")
	cmd.Env = withoutEnv(os.Environ(), adminTokenEnv)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no admin token") {
		t.Errorf("admin without a token: %v %s", err, out)
	}
	short := exec.Command(bin, "admin", "--audit", logPath, "--listen", "127.0.0.1:0")
	short.Env = append(withoutEnv(os.Environ(), adminTokenEnv), adminTokenEnv+"=short")
	if out, err := short.CombinedOutput(); err == nil {
		t.Errorf("admin with a short token started: %s", out)
	}

	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	cmd = exec.Command(bin, "admin", "--audit", logPath, "--listen", "127.0.0.1:0", "--token-file", tokenFile)
	cmd.Env = withoutEnv(os.Environ(), adminTokenEnv)
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			if m := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)/`).FindStringSubmatch(sc.Text()); m != nil {
				base <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(10 * time.Second):
		t.Fatal("admin did not say where it listens")
	}
	get := func(path, tok string) (int, http.Header, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	for _, p := range []string{"/api/records", "/api/stats"} {
		if code, _, body := get(p, ""); code != 401 || strings.Contains(body, "stdio") {
			t.Errorf("%s without the token: %d %s", p, code, body)
		}
		if code, _, _ := get(p, token+"x"); code != 401 {
			t.Errorf("%s with a wrong token: %d", p, code)
		}
	}
	code, h, body := get("/", "")
	if code != 200 || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(body, "app.js") {
		t.Errorf("page: %d %v", code, h)
	}
	code, _, body = get("/api/stats", token)
	var s audit.Stats
	if err := json.Unmarshal([]byte(body), &s); err != nil || code != 200 || s.Calls != total || s.Denies != total/3 {
		t.Errorf("stats through admin: %d %v %.200s", code, err, body)
	}
	code, _, body = get("/api/records?decision=deny&limit=5", token)
	var page struct {
		Records []audit.Record `json:"records"`
		LastSeq int64          `json:"last_seq"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || code != 200 || len(page.Records) != 5 || page.LastSeq != int64(total) {
		t.Errorf("records through admin: %d %v %.200s", code, err, body)
	}
	for _, r := range page.Records {
		if r.Decision != "deny" || r.Effects[0].Zone != "protected" {
			t.Errorf("record %+v", r)
		}
	}
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
