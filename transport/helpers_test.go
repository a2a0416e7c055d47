package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
)

type env struct {
	t      testing.TB
	cfg    *config.Config
	fs     afero.Fs // the vault's files as the test reads and writes them, beside the gate
	gate   *server.Gate
	client *client.Client
	audit  string
}

// newEnv serves the sample vault's policy (testdata/vault.toml) over a
// copy of the sample vault to an in-process client; rules are a library
// user's, after the config's.
func newEnv(t testing.TB, rules ...policy.Rule) *env {
	t.Helper()
	return newEnvWith(t, sampleConfig(t), rules...)
}

// newEnvWith serves cfg's vault to an in-process client, on a gate opened
// as `vaultgate serve` opens it (server.OpenServer: the vault's real files
// through the production file system, the config's audit log, history
// and rules).
func newEnvWith(t testing.TB, cfg *config.Config, rules ...policy.Rule) *env {
	t.Helper()
	g := serverGate(t, cfg)
	g.AddRules(rules...)
	p := cfg.Policy(config.DefaultAgent)
	session := &policy.Session{ID: "test-session", Agent: p.Name, State: policy.NewState()}
	s := MCP(g, p, func(context.Context) (server.Caller, error) {
		return server.Caller{Via: "stdio", Session: session, Policy: p}, nil
	})
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &env{t: t, cfg: cfg, fs: afero.NewBasePathFs(afero.NewOsFs(), cfg.Vault), gate: g, client: c, audit: cfg.AuditPath}
}

// serverGate opens cfg's vault as `vaultgate serve` does, and closes it
// when the test ends.
func serverGate(t testing.TB, cfg *config.Config) *server.Gate {
	t.Helper()
	g, err := server.OpenServer(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// call calls a tool and returns its text and whether it was an error.
func (e *env) call(tool string, args map[string]any) (string, bool) {
	e.t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := e.client.CallTool(ctx, req)
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(mcp.GetTextFromContent(c))
	}
	return b.String(), res.IsError
}

func (e *env) mustOK(tool string, args map[string]any) string {
	e.t.Helper()
	text, isErr := e.call(tool, args)
	if isErr {
		e.t.Fatalf("%s %v: error %s", tool, args, text)
	}
	return text
}

func (e *env) mustFail(tool string, args map[string]any, want string) string {
	e.t.Helper()
	text, isErr := e.call(tool, args)
	if !isErr || !strings.Contains(text, want) {
		e.t.Fatalf("%s %v: got %q (error=%v), want an error containing %q", tool, args, text, isErr, want)
	}
	return text
}

func (e *env) file(p string) string {
	e.t.Helper()
	b, err := afero.ReadFile(e.fs, p)
	if err != nil {
		e.t.Fatalf("reading %s: %v", p, err)
	}
	return string(b)
}

func (e *env) exists(p string) bool {
	_, err := e.fs.Stat(p)
	return err == nil
}

// records reads the audit log back as raw JSON objects.
func (e *env) records() []map[string]any {
	e.t.Helper()
	f, err := os.Open(e.audit)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			e.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func (e *env) lastRecord() map[string]any {
	e.t.Helper()
	r := e.records()
	if len(r) == 0 {
		e.t.Fatal("no audit records")
	}
	return r[len(r)-1]
}

// sampleConfig is the sample vault's own config (testdata/vault.toml),
// written beside a copy of the sample vault as it lies in testdata: the
// audit log and state folder in the temp folder's .state.
func sampleConfig(t testing.TB) *config.Config {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "testdata")
	vaulttest.CopyDir(t, "../testdata/vault", filepath.Join(dir, "vault"))
	body, err := os.ReadFile("../testdata/vault.toml")
	if err != nil {
		t.Fatal(err)
	}
	return writeConfig(t, filepath.Join(dir, "vault.toml"), string(body))
}

// loadConfig writes body as a config file in a temp folder and loads it.
// "../testdata/vault" in body is a copy of the sample vault in that
// folder; a body without an [audit] table gets one, with the log in the
// folder's state/ (never the person's own state folder).
func loadConfig(t testing.TB, body string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	if strings.Contains(body, `"../testdata/vault"`) {
		vault := filepath.Join(dir, "vault")
		vaulttest.CopyDir(t, "../testdata/vault", vault)
		body = strings.Replace(body, `"../testdata/vault"`, `"`+vault+`"`, 1)
	}
	if !strings.Contains(body, "[audit]") {
		body += "\n[audit]\npath = \"" + filepath.Join(dir, "state", "audit.jsonl") + "\"\n"
	}
	return writeConfig(t, filepath.Join(dir, "vaultgate.toml"), body)
}

func writeConfig(t testing.TB, path, body string) *config.Config {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
