package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// stdioServer is one MCP server over stdio, driven by one mcp-go client,
// and the call that reads the 4 KB note from it.
type stdioServer struct {
	name  string
	c     *client.Client
	req   mcp.CallToolRequest
	times []time.Duration
}

func startStdio(b *testing.B, name string, env []string, command string, args ...string) *stdioServer {
	b.Helper()
	c, err := client.NewStdioMCPClient(command, env, args...)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	b.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		b.Fatalf("%s: initialize: %v", name, err)
	}
	return &stdioServer{name: name, c: c}
}

func (s *stdioServer) read(b *testing.B, want string) {
	start := time.Now()
	res, err := s.c.CallTool(context.Background(), s.req)
	s.times = append(s.times, time.Since(start))
	if err != nil {
		b.Fatalf("%s: %v", s.name, err)
	}
	if res.IsError || len(res.Content) == 0 || !strings.HasPrefix(mcp.GetTextFromContent(res.Content[0]), want) {
		b.Fatalf("%s: read: %+v", s.name, res)
	}
}

// BenchmarkStdioRead4K reads a 4 KB note over stdio, one mcp-go client
// for each server, the servers taking turns call by call so that a busy
// machine slows each alike: vaultgate serve (zones, rules, the audit line
// on disk; history keeps nothing for a read), the floor (interop/readfloor:
// mcp-go and a file read, nothing else), and the MCP reference filesystem
// server (node, from interop/ts) where it is installed, starting each round
// with the next one. Reported: each one's median in µs, and vaultgate's
// and the reference server's ratio to
// the floor, of the medians.
//
//	go test ./interop -run '^$' -bench StdioRead4K -benchtime 2000x -count 3
func BenchmarkStdioRead4K(b *testing.B) {
	dir, cfg, _ := vault(b)
	note := strings.Repeat("0123456789abcde\n", 256)
	if err := os.WriteFile(filepath.Join(dir, "notes/4k.md"), []byte(note), 0o644); err != nil {
		b.Fatal(err)
	}
	floorBin := filepath.Join(b.TempDir(), "readfloor")
	if out, err := exec.Command("go", "build", "-o", floorBin, "./readfloor").CombinedOutput(); err != nil {
		b.Fatalf("go build readfloor: %v\n%s", err, out)
	}
	env := serverEnv(b)
	vg := startStdio(b, "vaultgate", env, binary(b), "serve", "--config", cfg)
	vg.req.Params.Name = "read"
	vg.req.Params.Arguments = map[string]any{"path": "notes/4k.md"}
	floor := startStdio(b, "floor", env, floorBin, dir)
	floor.req = vg.req
	servers := []*stdioServer{vg, floor}
	ref := filepath.Join("ts", "node_modules", ".bin", "mcp-server-filesystem")
	if _, err := os.Stat(ref); err == nil {
		abs, _ := filepath.Abs(ref)
		fsrv := startStdio(b, "reference", env, abs, dir)
		fsrv.req.Params.Name = "read_text_file"
		fsrv.req.Params.Arguments = map[string]any{"path": filepath.Join(dir, "notes/4k.md")}
		servers = append(servers, fsrv)
	} else {
		b.Logf("the reference filesystem server is not installed (npm ci --prefix interop/ts): %v", err)
	}
	for _, s := range servers { // a first call each, outside the timing
		s.read(b, note)
		s.times = nil
	}
	// The order turns each round: a server's call is slowed by whatever
	// the one before it leaves running (node's collector, say), so each
	// follows each of the others equally often.
	for round := 0; b.Loop(); round++ {
		for i := range servers {
			servers[(round+i)%len(servers)].read(b, note)
		}
	}
	med := func(s *stdioServer) float64 {
		t := slices.Clone(s.times)
		slices.Sort(t)
		return float64(t[len(t)/2].Nanoseconds()) / 1e3
	}
	for _, s := range servers {
		b.ReportMetric(med(s), s.name+"-us")
	}
	b.ReportMetric(med(vg)/med(floor), "vaultgate/floor")
	if len(servers) == 3 {
		b.ReportMetric(med(servers[2])/med(floor), "reference/floor")
	}
}
