package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// digest is every path under root (links not followed) with what it holds.
func digest(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = "link " + target
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			out[p] = hex.EncodeToString(h[:])
		default:
			out[p] = fi.Mode().String()
		}
		return nil
	})
	return out
}

// TestBashSoundOverMCP sends the attacks to the built binary over
// stdio with wall = "off", where the analysis alone stands between the
// agent and the disk: each must be refused, and the protected zones, the
// audit log (beside the vault, reached through notes/up/../..) and what
// lies outside must be as they were, but for the audit's own new lines.
func TestBashSoundOverMCP(t *testing.T) {
	bin := binary(t)
	vault, cfg, auditPath := sampleVault(t)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[bash]\nenabled = true\nwall = \"off\"\n")
	f.Close()
	base := filepath.Dir(vault)
	for link, target := range map[string]string{"notes/up": ".", "мета/бобер/o": "../../.obsidian"} {
		if err := os.Symlink(target, filepath.Join(vault, link)); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		"мета/бобер/--target-directory=..": "x\n", "мета/бобер/--checkpoint=1": "x\n",
		"мета/бобер/--checkpoint-action=exec=sh s.sh": "x\n", "мета/бобер/s.sh": "echo owned > ../план.md\n",
		"outside.txt": "x\n",
	} {
		p := filepath.Join(vault, name)
		if name == "outside.txt" {
			p = filepath.Join(base, name)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.NewStdioMCPClient(bin, []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bashsound-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	// a first call, so the audit log exists and its chain has a head
	callTool(t, c, "list", map[string]any{"path": "."})
	guarded := func(p string) bool {
		rel, err := filepath.Rel(vault, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			return p != auditPath && !strings.HasPrefix(p, filepath.Dir(auditPath)+"/")
		}
		return (rel == "мета" || strings.HasPrefix(rel, "мета/")) && !strings.HasPrefix(rel, "мета/бобер/") && rel != "мета/бобер" ||
			rel == ".obsidian" || strings.HasPrefix(rel, ".obsidian/")
	}
	for _, cmd := range []string{
		"ln -s ../мета/бобер notes/m; echo x > notes/m/../план.md",
		"ln -s ../мета/бобер notes/m; cd -P notes/m/.. && echo x > план.md",
		`echo '{"forged":true}' >> notes/up/../../state/audit.jsonl`,
		"cd мета/бобер && cp * ../../notes/",
		"cd мета/бобер && tar -cf ../../notes/x.tar *",
	} {
		before := digest(t, base)
		auditBefore, _ := os.ReadFile(auditPath)
		text, isErr := callTool(t, c, "bash", map[string]any{"command": cmd})
		if !isErr {
			t.Errorf("%s: allowed: %s", cmd, text)
		}
		after := digest(t, base)
		for p, v := range after {
			if before[p] != v && guarded(p) {
				t.Errorf("%s: changed %s", cmd, p)
			}
		}
		auditAfter, _ := os.ReadFile(auditPath)
		if !strings.HasPrefix(string(auditAfter), string(auditBefore)) || strings.Contains(string(auditAfter), `{"forged":true}`) {
			t.Errorf("%s: the audit log was written to by the command", cmd)
		}
		// undo what an allowed part made, so the next attack starts clean
		os.Remove(filepath.Join(vault, "notes/m"))
	}
}
