package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkHTTPReadRoundTrip is one `read` of a 4 KB note by an mcp-go
// client from the built binary's `serve --http` on loopback: HTTP, bearer
// check, JSON-RPC, plan, judge, run, the audit line on disk, and back.
func BenchmarkHTTPReadRoundTrip(b *testing.B) {
	dir, cfg, _ := vault(b)
	note := strings.Repeat("0123456789abcde\n", 256)
	if err := os.WriteFile(filepath.Join(dir, "notes/4k.md"), []byte(note), 0o644); err != nil {
		b.Fatal(err)
	}
	url := serveHTTP(b, cfg)
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("mcp-go client: negotiated %s", res.ProtocolVersion)
	req := mcp.CallToolRequest{}
	req.Params.Name = "read"
	req.Params.Arguments = map[string]any{"path": "notes/4k.md"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 || mcp.GetTextFromContent(res.Content[0]) != note {
			b.Fatalf("read: %+v", res)
		}
	}
}
