package interop

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goContent is what runScenario writes to notes/new.md.
const goContent = "из Go SDK, 💬\n"

// TestGoSDK drives the built binary with the official Go SDK client: over
// stdio with the SDK's own newest protocol and with the older initialize
// handshake pinned, and over Streamable HTTP; each on a vault of its own,
// checked on disk afterwards.
func TestGoSDK(t *testing.T) {
	bin := binary(t)
	for _, tc := range []struct {
		name, version string
		http          bool
	}{
		{name: "stdio"},
		{name: "stdio-2025-11-25", version: "2025-11-25"},
		{name: "http", http: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, cfg, auditPath := vault(t)
			var transport mcp.Transport
			via := "stdio"
			if tc.http {
				via = "http"
				transport = &mcp.StreamableClientTransport{
					Endpoint:   serveHTTP(t, cfg),
					HTTPClient: &http.Client{Transport: bearerTransport{token}},
					MaxRetries: -1,
				}
			} else {
				cmd := exec.Command(bin, "serve", "--config", cfg)
				cmd.Env = serverEnv(t)
				cmd.Stderr = os.Stderr
				transport = &mcp.CommandTransport{Command: cmd}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "vaultgate-interop-go", Version: "1"}, nil)
			session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer session.Close()
			init := session.InitializeResult()
			offered := tc.version
			if offered == "" {
				offered = mcp.SupportedProtocolVersions()[0]
			}
			t.Logf("go-sdk %s: offered %s, negotiated %s", tc.name, offered, init.ProtocolVersion)
			if tc.version != "" && init.ProtocolVersion != tc.version {
				t.Errorf("negotiated %s, want %s", init.ProtocolVersion, tc.version)
			}
			if init.ServerInfo == nil || init.ServerInfo.Name != "vaultgate" || !strings.Contains(init.Instructions, "мета/бобер: write") {
				t.Errorf("initialize: %+v", init)
			}
			runScenario(t, ctx, session, dir)
			session.Close()
			checkScenario(t, dir, auditPath, via, goContent)
		})
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// runScenario is interop/ts/interop.test.mjs's scenario, call for call.
func runScenario(t *testing.T, ctx context.Context, s *mcp.ClientSession, dir string) {
	t.Helper()
	disk := func(p string) string {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
		return string(b)
	}
	exists := func(p string) bool {
		_, err := os.Lstat(filepath.Join(dir, p))
		return err == nil
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res.IsError
	}
	mustOK := func(name string, args map[string]any) string {
		t.Helper()
		text, isErr := call(name, args)
		if isErr {
			t.Errorf("%s %v refused: %s", name, args, text)
		}
		return text
	}

	list, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s: no annotations", tool.Name)
			continue
		}
		readOnly := tool.Name == "read" || tool.Name == "list" || tool.Name == "search"
		destructive := a.DestructiveHint != nil && *a.DestructiveHint
		if a.ReadOnlyHint != readOnly || destructive == readOnly {
			t.Errorf("%s: readOnlyHint %v, destructiveHint %v", tool.Name, a.ReadOnlyHint, destructive)
		}
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "bash,delete,edit,list,move,read,search,write" {
		t.Errorf("tools: %v", names)
	}

	if text := mustOK("read", map[string]any{"path": "Welcome.md"}); text != disk("Welcome.md") {
		t.Errorf("read Welcome.md = %q", text)
	}
	if text := mustOK("read", map[string]any{"path": "мета/x.md"}); text != "protected note\n" {
		t.Errorf("read мета/x.md = %q", text)
	}
	mustOK("write", map[string]any{"path": "notes/new.md", "content": goContent})
	if got := disk("notes/new.md"); got != goContent {
		t.Errorf("after write: %q", got)
	}
	mustOK("edit", map[string]any{"path": "Welcome.md", "old_string": "todo: read the README", "new_string": "done: read the README"})
	if got := disk("Welcome.md"); !strings.HasSuffix(got, "- [ ] done: read the README\n") {
		t.Errorf("after edit: %q", got)
	}
	if text, isErr := call("edit", map[string]any{"path": "notes/ideas.md", "old_string": "Ideas", "new_string": "Thoughts"}); !isErr {
		t.Errorf("edit of an unread file allowed: %s", text)
	}
	mustOK("move", map[string]any{"source": "notes/new.md", "destination": "notes/moved.md"})
	if exists("notes/new.md") || disk("notes/moved.md") != goContent {
		t.Errorf("after move: new.md there %v, moved.md %q", exists("notes/new.md"), disk("notes/moved.md"))
	}
	mustOK("delete", map[string]any{"path": "мета/бобер/x.md"})
	if exists("мета/бобер/x.md") {
		t.Errorf("мета/бобер/x.md still there")
	}
	text := mustOK("list", map[string]any{})
	for _, want := range []string{"Welcome.md", "notes", "мета", "💬 чаты", "[protected]", "[create]", "[edit"} {
		if !strings.Contains(text, want) {
			t.Errorf("list lacks %q:\n%s", want, text)
		}
	}
	if text := mustOK("list", map[string]any{"path": "мета"}); !strings.Contains(text, "бобер") || !strings.Contains(text, "[write") {
		t.Errorf("list мета:\n%s", text)
	}
	if text := mustOK("search", map[string]any{"query": "ship vaultgate"}); !strings.Contains(text, "notes/projects/2026/plan.md") {
		t.Errorf("search: %s", text)
	}
	if text := mustOK("search", map[string]any{"query": "no such words anywhere 4242"}); strings.Contains(text, ".md:") {
		t.Errorf("search for nothing: %s", text)
	}
	if text := mustOK("bash", map[string]any{"command": "echo hi > notes/x.md && cat notes/x.md"}); !strings.Contains(text, "hi") {
		t.Errorf("bash: %q", text)
	}
	if got := disk("notes/x.md"); got != "hi\n" {
		t.Errorf("after bash: %q", got)
	}

	text, isErr := call("delete", map[string]any{"path": "мета/x.md"})
	if !isErr || !strings.Contains(text, "zone protected") || !strings.Contains(text, "Deleting is allowed in: мета/бобер") {
		t.Errorf("delete мета/x.md: %v %q", isErr, text)
	}
	if disk("мета/x.md") != "protected note\n" {
		t.Errorf("the protected file changed")
	}
	if text, isErr := call("bash", map[string]any{"command": "rm мета/план.md"}); !isErr || !strings.Contains(text, "protected") {
		t.Errorf("bash rm мета/план.md: %v %q", isErr, text)
	}
	if !exists("мета/план.md") {
		t.Errorf("мета/план.md is gone")
	}
	// A malformed call: the SDK may refuse it itself or pass on the
	// server's refusal; either way it must not succeed.
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "Welcome.md", "nope": 1}}); err == nil && !res.IsError {
		t.Errorf("a call with an unknown argument succeeded")
	}
}
