package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
)

// testMaxBody is [http] max_body in these tests' config.
const testMaxBody = 1 << 20

func limitConfig(t *testing.T) *config.Config {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	t.Setenv("VAULTGATE_TOKEN", defaultToken)
	return loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+filepath.Join(dir, "state", "audit.jsonl")+`"
[http]
max_body = "1MiB"
`)
}

func limitServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	cfg := limitConfig(t)
	if cfg.HTTP.MaxBody != testMaxBody {
		t.Fatalf("max_body %d", cfg.HTTP.MaxBody)
	}
	tokens, err := Tokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(serverGate(t, cfg), tokens))
	t.Cleanup(srv.Close)
	return srv, cfg.Vault
}

// repeat yields n bytes of 'a' without allocating them.
type repeat struct{ n int64 }

func (r *repeat) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	for i := range p {
		p[i] = 'a'
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// counting counts the bytes read from r.
type counting struct {
	r io.Reader
	n atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// writeCall is a tools/call of write whose content is n bytes of 'a'.
func writeCall(path string, n int64) io.Reader {
	return io.MultiReader(
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"path":"`+path+`","content":"`),
		&repeat{n},
		strings.NewReader(`"}}}`+"\n"))
}

func post(t *testing.T, url, token string, body io.Reader, length int64) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url+Endpoint, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length // -1: chunked
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// A body just under [http] max_body is served; one over it is refused with
// 413, whether its length is declared or it comes chunked, and nothing is
// written.
func TestHTTPMaxBody(t *testing.T) {
	srv, vault := limitServer(t)

	// positive control: a write whose call is just under the limit
	c := httpClient(t, srv.URL, defaultToken)
	content := strings.Repeat("b", testMaxBody-512)
	if text, isErr := httpCall(t, c, "write", map[string]any{"path": "notes/under-limit.md", "content": content}); isErr {
		t.Fatalf("write under the limit: %s", text)
	}
	if fi, err := os.Stat(filepath.Join(vault, "notes/under-limit.md")); err != nil || fi.Size() != int64(len(content)) {
		t.Fatalf("written: %v %v", fi, err)
	}

	// over it, with a Content-Length: refused before the body is read
	const over = 2 * testMaxBody
	head := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write","arguments":{"path":"notes/cl.md","content":"`
	code, body := post(t, srv.URL, defaultToken, writeCall("notes/cl.md", over), int64(len(head))+over+4+1)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "max_body") {
		t.Errorf("Content-Length over the limit: %d %q", code, body)
	}
	// over it, chunked: cut as it arrives
	code, body = post(t, srv.URL, defaultToken, writeCall("notes/chunked.md", over), -1)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "max_body") {
		t.Errorf("chunked over the limit: %d %q", code, body)
	}
	for _, p := range []string{"notes/cl.md", "notes/chunked.md"} {
		if _, err := os.Stat(filepath.Join(vault, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// A chunked body many times the limit costs the server about the limit,
// not the body: an allocation bound, measured around the request.
func TestHTTPMaxBodyChunkedMemory(t *testing.T) {
	srv, vault := limitServer(t)
	const huge = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, body := post(t, srv.URL, defaultToken, writeCall("notes/huge.md", huge), -1)
	runtime.ReadMemStats(&after)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked %d MiB: %d %q", huge>>20, code, body)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*testMaxBody {
		t.Errorf("a %d MiB chunked body allocated %d bytes; want under %d (4× max_body)", huge>>20, grew, 4*testMaxBody)
	}
	if _, err := os.Stat(filepath.Join(vault, "notes/huge.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("huge.md: %v", err)
	}
}

// Without a token a big body is answered 401 without being read, and the
// answer says nothing of the limit.
func TestHTTPMaxBodyNoToken(t *testing.T) {
	srv, _ := limitServer(t)
	const huge = 64 << 20
	for _, length := range []int64{-1, huge} {
		body := &counting{r: io.LimitReader(&repeat{huge}, huge)}
		code, text := post(t, srv.URL, "", body, length)
		if code != http.StatusUnauthorized || strings.Contains(text, "max_body") {
			t.Errorf("length %d: %d %q", length, code, text)
		}
		if n := body.n.Load(); n >= huge/4 {
			t.Errorf("length %d: the client sent %d of %d bytes before the 401", length, n, huge)
		}
	}
}

// Over stdio, a message longer than max_body ends the session with a
// message saying so, without holding it whole; a call before it is served.
func TestStdioMaxMessage(t *testing.T) {
	cfg := limitConfig(t)
	g := serverGate(t, cfg)
	p := cfg.Policy(config.DefaultAgent)
	session := &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var logged strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(context.Background(), g, p, session, inR, outW, log.New(&logged, "", 0))
		inR.CloseWithError(errors.New("served"))
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer := func() string {
		t.Helper()
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"notes/stdio.md","content":"hi"}}}`)
	if a := answer(); !strings.Contains(a, `"id":2`) || strings.Contains(a, `"isError":true`) {
		t.Fatalf("write: %s", a)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.Vault, "notes/stdio.md")); string(b) != "hi" {
		t.Fatalf("stdio.md: %q", b)
	}
	go io.Copy(io.Discard, out) // nothing more is answered; keep the pipe open

	const huge = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go io.Copy(inW, writeCall("notes/huge.md", huge))
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end")
	}
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), fmt.Sprint(testMaxBody)) {
		t.Errorf("session ended with %v", err)
	}
	if !strings.Contains(logged.String(), "max_body") {
		t.Errorf("log: %q", logged.String())
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*testMaxBody {
		t.Errorf("a %d MiB line allocated %d bytes; want under %d (4× max_body)", huge>>20, grew, 4*testMaxBody)
	}
	if _, err := os.Stat(filepath.Join(cfg.Vault, "notes/huge.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("huge.md: %v", err)
	}
}
