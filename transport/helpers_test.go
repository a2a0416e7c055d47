package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
)

// memVault copies the sample vault into a MemMapFs.
func memVault(t testing.TB) afero.Fs {
	t.Helper()
	mem := afero.NewMemMapFs()
	root := "../testdata/vault"
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			return mem.MkdirAll(filepath.ToSlash(rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return afero.WriteFile(mem, filepath.ToSlash(rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return mem
}

type env struct {
	t      testing.TB
	cfg    *config.Config
	fs     afero.Fs
	gate   *server.Gate
	client *client.Client
	audit  string
}

// newEnv serves the sample vault's policy over fsys to an in-process client.
func newEnv(t testing.TB, fsys afero.Fs, opt server.Options) *env {
	t.Helper()
	cfg, err := config.Load("../testdata/vault.toml")
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, cfg, fsys, opt)
}

func newEnvWith(t testing.TB, cfg *config.Config, fsys afero.Fs, opt server.Options) *env {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(logPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	opt.Audit = w
	g := server.NewGate(cfg, &tools.Vault{Root: cfg.Vault, Fs: fsys}, opt)
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
	return &env{t: t, cfg: cfg, fs: fsys, gate: g, client: c, audit: logPath}
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

func loadConfig(t testing.TB, body string) *config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.toml")
	abs, _ := filepath.Abs("../testdata/vault")
	body = strings.Replace(body, `"../testdata/vault"`, `"`+abs+`"`, 1)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
