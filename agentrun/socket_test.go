//go:build linux

package agentrun

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
)

// TestRunIsOneSession: a run is one session across all its connections,
// so an agent that reconnects is counted on, not afresh: under a rule of
// at most 3 deletes a session, the fourth delete is refused though each
// came over a connection of its own.
func TestRunIsOneSession(t *testing.T) {
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	for i := range 4 {
		os.WriteFile(filepath.Join(vault, fmt.Sprintf("notes/d%d.md", i)), []byte("x\n"), 0o644)
	}
	cfgPath := filepath.Join(root, "c.toml")
	body := `vault = "vault"
[audit]
path = "state/audit.jsonl"
[zones]
write = ["notes"]
edit = ["."]
[[rules.deny]]
name = "three_deletes"
when = 'effect.op == "delete" && session.count["delete"] >= 3'
reason = "no more than 3 deletes per session"
`
	if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	gate, err := server.OpenServer(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	sock := filepath.Join(t.TempDir(), "run.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	pol := cfg.Policy(config.DefaultAgent)
	g := &gateway{ln: ln, gate: gate, policy: pol, runID: "r1", token: "tok", uid: os.Geteuid(),
		session: &policy.Session{ID: "r1", Agent: pol.Name, State: policy.NewState()},
		errLog:  log.New(io.Discard, "", 0), conns: map[net.Conn]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.serve(ctx)
	defer g.close()

	for i := range 4 {
		text, isErr := deleteOver(t, sock, fmt.Sprintf("notes/d%d.md", i))
		if i < 3 && isErr {
			t.Fatalf("delete %d over connection %d: %s", i, i+1, text)
		}
		if i == 3 && (!isErr || !strings.Contains(text, "no more than 3 deletes per session")) {
			t.Errorf("the fourth delete, on a fourth connection: error %v, %q", isErr, text)
		}
	}
	if _, err := os.Stat(filepath.Join(vault, "notes/d3.md")); err != nil {
		t.Errorf("the refused delete removed the note: %v", err)
	}
}

// deleteOver calls the delete tool over a connection of its own, as the
// agent's `vaultgate connect` does: the token, then MCP.
func deleteOver(t *testing.T, sock, path string) (text string, isErr bool) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	io.WriteString(c, "tok\n")
	if hello, err := r.ReadString('\n'); err != nil || strings.TrimSpace(hello) != helloOK {
		t.Fatalf("hello: %q %v", hello, err)
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		c.Write(append(b, '\n'))
	}
	read := func(id int) map[string]any {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["id"] == float64(id) {
				return m
			}
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	read(1)
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "delete", "arguments": map[string]any{"path": path}}})
	res, _ := read(2)["result"].(map[string]any)
	isErr, _ = res["isError"].(bool)
	if content, _ := res["content"].([]any); len(content) > 0 {
		text, _ = content[0].(map[string]any)["text"].(string)
	}
	return text, isErr
}
