package transport

import (
	"context"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vaultgate/vaultgate/audit"
)

const (
	defaultToken = "default-token-0123456789abcdef"
	botToken     = "bot-token-fedcba9876543210xyz"
)

func httpServer(t *testing.T) (*httptest.Server, string, string) {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	t.Setenv("VAULTGATE_TOKEN", defaultToken)
	tokFile := filepath.Join(dir, "bot.token")
	os.WriteFile(tokFile, []byte(botToken+"\n"), 0o600)
	auditPath := filepath.Join(dir, "state", "audit.jsonl")
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+auditPath+`"
[zones]
write = ["мета/бобер"]
edit = ["."]
protected = ["мета"]
[agents.bot]
token_file = "`+tokFile+`"
lang = "ru"
[agents.bot.zones]
protected = ["."]
`)
	g := serverGate(t, cfg)
	tokens, err := Tokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(g, tokens))
	t.Cleanup(srv.Close)
	return srv, vault, auditPath
}

func httpClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url+Endpoint, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "http-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func httpCall(t *testing.T, c *client.Client, tool string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		b.WriteString(mcp.GetTextFromContent(ct))
	}
	return b.String(), res.IsError
}

func TestHTTPAuth(t *testing.T) {
	srv, _, _ := httpServer(t)
	for name, header := range map[string]string{
		"no token":      "",
		"wrong token":   "Bearer not-the-token-0123456789",
		"prefix":        "Bearer " + defaultToken[:10],
		"longer":        "Bearer " + defaultToken + "x",
		"basic":         "Basic " + defaultToken,
		"empty bearer":  "Bearer ",
		"token no type": defaultToken,
	} {
		req, _ := http.NewRequest("POST", srv.URL+Endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" || strings.Contains(string(body), "read") {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}
	resp, _ := http.Get(srv.URL + "/other")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/other: %d", resp.StatusCode)
	}
}

func TestHTTPAgents(t *testing.T) {
	srv, vault, auditPath := httpServer(t)
	def := httpClient(t, srv.URL, defaultToken)
	bot := httpClient(t, srv.URL, botToken)
	if text, isErr := httpCall(t, def, "write", map[string]any{"path": "notes/from-http.md", "content": "hi"}); isErr {
		t.Fatalf("default write: %s", text)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "notes/from-http.md")); string(b) != "hi" {
		t.Errorf("file: %q", b)
	}
	// the bot's own zones (everything protected) and language
	text, isErr := httpCall(t, bot, "write", map[string]any{"path": "notes/bot.md", "content": "x"})
	if !isErr || !strings.Contains(text, "нельзя") {
		t.Errorf("bot write: %q", text)
	}
	// state is per agent: the default agent's read does not count for the bot,
	// and a reconnecting client of the same agent keeps it
	httpCall(t, def, "read", map[string]any{"path": "Welcome.md"})
	again := httpClient(t, srv.URL, defaultToken)
	if text, isErr := httpCall(t, again, "edit", map[string]any{"path": "Welcome.md", "old_string": "Welcome", "new_string": "Hello"}); isErr {
		t.Errorf("edit by the same agent on a new connection: %s", text)
	}
	recs := 0
	audit.Read(auditPath, func(r audit.Record) error {
		recs++
		if r.Via != "http" || (r.Agent != "default" && r.Agent != "bot") || r.Session != "http-"+r.Agent {
			t.Errorf("record %+v", r)
		}
		return nil
	})
	if recs != 4 {
		t.Errorf("%d records, want 4", recs)
	}
}

func TestTokens(t *testing.T) {
	cfg := loadConfig(t, `vault = "../testdata/vault"`)
	t.Setenv("VAULTGATE_TOKEN", "")
	if _, err := Tokens(cfg); err == nil || !strings.Contains(err.Error(), "no bearer token") {
		t.Errorf("no token: %v", err)
	}
	t.Setenv("VAULTGATE_TOKEN", "short")
	if _, err := Tokens(cfg); err == nil || !strings.Contains(err.Error(), "at least") {
		t.Errorf("short token: %v", err)
	}
	t.Setenv("VAULTGATE_TOKEN", defaultToken)
	if tok, err := Tokens(cfg); err != nil || tok["default"] != defaultToken {
		t.Errorf("token: %v %v", tok, err)
	}
	t.Setenv("BOT", defaultToken)
	cfg = loadConfig(t, "vault = \"../testdata/vault\"\n[agents.bot]\ntoken_env = \"BOT\"\n")
	if _, err := Tokens(cfg); err == nil || !strings.Contains(err.Error(), "same token") {
		t.Errorf("shared token: %v", err)
	}
}
