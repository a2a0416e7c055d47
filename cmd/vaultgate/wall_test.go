package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestWallBinary drives the built binary's bash tool with the wall on, as
// the held-out checks do: a program of unknown effect (python3) runs, may
// create in an edit zone, and can't touch a protected file; the audit line
// records the layers that were up.
func TestWallBinary(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the end-to-end wall test runs as root (CI runs it)")
	}
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("wall: %s is missing (apt-get install python3): the wall binds only system folders", python)
	}
	for _, mode := range []string{"required", "best-effort"} {
		t.Run(mode, func(t *testing.T) {
			vault, cfg, auditPath := sampleVault(t)
			body, _ := os.ReadFile(cfg)
			os.WriteFile(cfg, append(body, []byte("[bash]\nwall = \""+mode+"\"\ntimeout = \"20s\"\n")...), 0o644)
			c, err := client.NewStdioMCPClient(binary(t), []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, "serve", "--config", cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			init.Params.ClientInfo = mcp.Implementation{Name: "wall-test", Version: "1"}
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatal(err)
			}
			protected, _ := os.ReadFile(filepath.Join(vault, "мета/план.md"))
			script := `import os
open("notes/from-python.md", "w").write("made inside the wall\n")
try:
    open("мета/план.md", "w").write("overwritten")
    print("PROTECTED-WRITTEN")
except OSError as e:
    print("protected refused:", e.strerror)
try:
    os.remove("notes/ideas.md")
    print("EDIT-DELETED")
except OSError as e:
    print("delete refused:", e.strerror)
`
			os.WriteFile(filepath.Join(vault, "notes/t.py"), []byte(script), 0o644)
			text, isErr := callTool(t, c, "bash", map[string]any{"command": python + " notes/t.py"})
			if isErr || strings.Contains(text, "PROTECTED-WRITTEN") || strings.Contains(text, "EDIT-DELETED") || !strings.Contains(text, "protected refused") {
				t.Fatalf("python under the wall: error=%v\n%s", isErr, text)
			}
			if b, err := os.ReadFile(filepath.Join(vault, "notes/from-python.md")); err != nil || string(b) != "made inside the wall\n" {
				t.Errorf("create in an edit zone: %q %v", b, err)
			}
			if b, _ := os.ReadFile(filepath.Join(vault, "мета/план.md")); string(b) != string(protected) {
				t.Errorf("the protected file changed: %q", b)
			}
			if _, err := os.Stat(filepath.Join(vault, "notes/ideas.md")); err != nil {
				t.Errorf("a file in the edit zone was deleted: %v", err)
			}
			c.Close()
			f, err := os.Open(auditPath)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var wall []string
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				var r struct {
					Tool string
					Wall []string
				}
				json.Unmarshal(sc.Bytes(), &r)
				if r.Tool == "bash" {
					wall = r.Wall
				}
			}
			layers := strings.Join(wall, " ")
			for _, want := range []string{"pidns", "mountns", "netns", "landlock", "nonewprivs", "caps-dropped"} {
				if !strings.Contains(layers, want) {
					t.Errorf("audit wall %q lacks %s", layers, want)
				}
			}
		})
	}
}
