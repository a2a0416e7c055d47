package transport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vaultgate/vaultgate/audit"
)

// TestHTTPOrigin: a request with an Origin is served only when it is the
// server's own (its Host) or listed in [http] origins; every other is 403
// before the token is looked at, and never reaches the gate: no file, no
// audit line. Each allowed case makes a real MCP call (the positive control).
func TestHTTPOrigin(t *testing.T) {
	t.Setenv("VAULTGATE_TOKEN", defaultToken)
	cfg := loadConfig(t, `vault = "../testdata/vault"
[http]
origins = ["http://localhost:6274", "https://app.example", "http://[::1]:6274"]
`)
	tokens, err := Tokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(serverGate(t, cfg), tokens))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	own := u.Host // 127.0.0.1:PORT
	port, _ := strconv.Atoi(u.Port())
	p := func(format string) string { return fmt.Sprintf(format, port) }

	cases := []struct {
		name    string
		host    string   // the Host the client names; "" is the server's address
		origins []string // the Origin headers; nil is none
		want    int
	}{
		{"no Origin", "", nil, http.StatusOK},
		{"same origin", "", []string{"http://" + own}, http.StatusOK},
		{"same origin, default port in Host only", "localhost:80", []string{"http://localhost"}, http.StatusOK},
		{"same origin, default port in Origin only", "localhost", []string{"http://localhost:80"}, http.StatusOK},
		{"same origin, no port either side", "localhost", []string{"http://localhost"}, http.StatusOK},
		{"same origin, another case", p("LocalHost:%d"), []string{p("HTTP://localHOST:%d")}, http.StatusOK},
		{"listed", "", []string{"http://localhost:6274"}, http.StatusOK},
		{"listed, default port written", "", []string{"https://app.example:443"}, http.StatusOK},
		{"listed, another case", "", []string{"https://APP.example"}, http.StatusOK},
		{"IPv6 same origin", p("[::1]:%d"), []string{p("http://[::1]:%d")}, http.StatusOK},
		{"IPv6 same origin, another spelling", p("[0:0:0:0:0:0:0:1]:%d"), []string{p("http://[::1]:%d")}, http.StatusOK},
		{"IPv6 listed", "", []string{"http://[::1]:6274"}, http.StatusOK},

		{"foreign", "", []string{"http://evil.example"}, http.StatusForbidden},
		{"foreign, the server's port", "", []string{p("http://evil.example:%d")}, http.StatusForbidden},
		{"foreign, own as a prefix", "", []string{p("http://127.0.0.1.evil.example:%d")}, http.StatusForbidden},
		{"foreign, own as user info", "", []string{p("http://evil@127.0.0.1:%d")}, http.StatusForbidden},
		{"null", "", []string{"null"}, http.StatusForbidden},
		{"different port", "", []string{fmt.Sprintf("http://127.0.0.1:%d", port+1)}, http.StatusForbidden},
		{"different scheme", "", []string{"https://" + own}, http.StatusForbidden},
		{"listed host, another port", "", []string{"http://localhost:6275"}, http.StatusForbidden},
		{"listed, another scheme", "", []string{"http://app.example"}, http.StatusForbidden},
		{"listed, another scheme's default port", "", []string{"https://app.example:80"}, http.StatusForbidden},
		{"IPv6, another address", p("[::1]:%d"), []string{p("http://[::2]:%d")}, http.StatusForbidden},
		{"IPv6 Host, IPv4 Origin", p("[::1]:%d"), []string{p("http://127.0.0.1:%d")}, http.StatusForbidden},
		{"IPv6 without brackets", "", []string{p("http://::1:%d")}, http.StatusForbidden},
		{"own with a path", "", []string{"http://" + own + "/"}, http.StatusForbidden},
		{"empty Origin", "", []string{""}, http.StatusForbidden},
		{"two Origins, both own", "", []string{"http://" + own, "http://" + own}, http.StatusForbidden},
	}
	allowed := 0
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A raw call of a tool that would write a note: its status.
			note := fmt.Sprintf("notes/origin-%d.md", i)
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write","arguments":{"path":%q,"content":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"origin-test","version":"1"}}}}`, note, mcp.LATEST_PROTOCOL_VERSION)
			status, text, ctype := originPost(t, srv.URL+Endpoint, c.host, c.origins, "Bearer "+defaultToken, body)
			if status != c.want && !(c.want == http.StatusOK && status < 300) {
				t.Fatalf("status %d, want %d: %s", status, c.want, text)
			}
			if c.want == http.StatusForbidden {
				if text != originRefused+"\n" || !strings.HasPrefix(ctype, "text/plain") {
					t.Errorf("answer %q (%s)", text, ctype)
				}
				if _, err := os.Stat(filepath.Join(cfg.Vault, note)); err == nil {
					t.Errorf("%s was written", note)
				}
				// The path and the token are not looked at: the same 403.
				if s, txt, _ := originPost(t, srv.URL+"/other", c.host, c.origins, "", body); s != http.StatusForbidden || txt != text {
					t.Errorf("another path, no token: %d %q", s, txt)
				}
				if len(c.origins) == 1 {
					if mc, err := originClient(c.host, c.origins, srv.URL); err == nil {
						mc.Close()
						t.Errorf("an MCP client initialized")
					}
				}
				return
			}
			// Allowed: the raw call wrote its note, the token still
			// decides, and an MCP client's call works.
			allowed++
			if b, err := os.ReadFile(filepath.Join(cfg.Vault, note)); err != nil || string(b) != "x" {
				t.Errorf("%s: %q %v", note, b, err)
			}
			if s, txt, _ := originPost(t, srv.URL+Endpoint, c.host, c.origins, "Bearer not-the-token-0123456789", body); s != http.StatusUnauthorized {
				t.Errorf("wrong token: %d %q", s, txt)
			}
			mc, err := originClient(c.host, c.origins, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer mc.Close()
			if text, isErr := httpCall(t, mc, "read", map[string]any{"path": "Welcome.md"}); isErr || !strings.Contains(text, "Welcome") {
				t.Errorf("read: %v %q", isErr, text)
			}
		})
	}
	// The allowed raw writes and reads are lines; no refused call is.
	recs := 0
	audit.Read(cfg.AuditPath, func(r audit.Record) error {
		recs++
		if r.Via != "http" || r.Agent != "default" || (r.Tool != "write" && r.Tool != "read") {
			t.Errorf("record %+v", r)
		}
		return nil
	})
	if recs != 2*allowed {
		t.Errorf("%d audit records, want %d (a write and a read for each of %d allowed)", recs, 2*allowed, allowed)
	}
}

// originPost posts body to url naming host as the Host (when not "") and
// carrying each of origins as an Origin header and auth as Authorization.
func originPost(t *testing.T, url, host string, origins []string, auth, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.LATEST_PROTOCOL_VERSION)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, "write")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for _, o := range origins {
		req.Header.Add("Origin", o)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Content-Type")
}

// originClient is an initialized MCP client of the default agent that names
// host as the Host (when not "") and sends the one of origins, if any.
func originClient(host string, origins []string, url string) (*client.Client, error) {
	headers := map[string]string{"Authorization": "Bearer " + defaultToken}
	if len(origins) == 1 {
		headers["Origin"] = origins[0]
	}
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(headers)}
	if host != "" {
		opts = append(opts, transport.WithStreamableHTTPHost(host))
	}
	c, err := client.NewStreamableHttpClient(url+Endpoint, opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "origin-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
