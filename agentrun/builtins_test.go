//go:build linux

package agentrun

import (
	"bufio"
	"context"
	"encoding/json"
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

// TestHookReportsAttempts: the run --claude hook's report of a refused
// built-in is one audit line of the run (via run, its id as run and
// session), written once though PreToolUse and PostToolBatch both report
// it, and its content kept only as a size and hash; a name that is not
// such a built-in — a vault tool's above all — writes nothing and runs
// nothing; a wrong token is turned away.
func TestHookReportsAttempts(t *testing.T) {
	root := t.TempDir()
	vault := filepath.Join(root, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	cfgPath := filepath.Join(root, "c.toml")
	if err := os.WriteFile(cfgPath, []byte("vault = \"vault\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nwrite = [\".\"]\n"), 0o644); err != nil {
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
	dir := t.TempDir()
	sock, tokenFile := filepath.Join(dir, "sock"), filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("tok\n"), 0o600)
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

	write := Attempt{Tool: "Write", Input: map[string]any{"file_path": "/x/Welcome.md", "content": "secret body"}, ToolUseID: "toolu_1"}
	if err := Report(sock, tokenFile, []Attempt{write, {Tool: "Bash", Input: map[string]any{"command": "ls"}, ToolUseID: "toolu_2"}}); err != nil {
		t.Fatal(err)
	}
	if err := Report(sock, tokenFile, []Attempt{write}); err != nil { // PostToolBatch after PreToolUse
		t.Fatal(err)
	}
	for _, a := range []Attempt{{Tool: "write", Input: map[string]any{"path": "Welcome.md", "content": "x"}}, {Tool: "TodoWrite"}} {
		if err := Report(sock, tokenFile, []Attempt{a}); err == nil {
			t.Errorf("a report of %s was taken", a.Tool)
		}
	}
	os.WriteFile(tokenFile, []byte("nope\n"), 0o600)
	if err := Report(sock, tokenFile, []Attempt{{Tool: "Read", ToolUseID: "toolu_3"}}); err == nil || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("a wrong token: %v", err)
	}

	var lines []map[string]any
	f, err := os.Open(cfg.AuditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2 (Write once, Bash): %v", len(lines), lines)
	}
	for i, tool := range []string{"Write", "Bash"} {
		l := lines[i]
		reason, _ := l["reason"].(string)
		if l["tool"] != tool || l["via"] != "run" || l["run"] != "r1" || l["session"] != "r1" || l["decision"] != "deny" || !strings.Contains(reason, "vaultgate run") {
			t.Errorf("line %d: %v", i, l)
		}
	}
	if b, _ := json.Marshal(lines[0]); strings.Contains(string(b), "secret body") {
		t.Errorf("the Write's content is in the log: %s", b)
	}
	want, _ := os.ReadFile("../testdata/vault/Welcome.md")
	if got, err := os.ReadFile(filepath.Join(vault, "Welcome.md")); err != nil || string(got) != string(want) {
		t.Errorf("a report of the vault's write changed Welcome.md: %q %v", got, err)
	}
}
