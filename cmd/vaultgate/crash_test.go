package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vaultgate/vaultgate/history"
)

// TestKillInTheMiddleOfWrites kills (SIGKILL) a serving vaultgate while
// writes, new files and replacements, are in flight, several times. Every
// note is then whole, old or new; and once a server has started again no
// temporary name is left in the vault.
func TestKillInTheMiddleOfWrites(t *testing.T) {
	bin := binary(t)
	vault, cfg, auditPath := sampleVault(t)
	body, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(body, []byte("[rules]\nread_before_write = false\n")...), 0o644)
	valid := map[string]bool{"": true}
	for round := range 4 {
		for i := range 300 {
			valid[content(round, i)] = true
		}
		cmd, in, replies, send := startServe(t, bin, cfg)
		go func() {
			for i := range 300 {
				// even notes are made anew each round, odd ones replaced
				send(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{
					"name": "write", "arguments": map[string]any{"path": notePath(round, i), "content": content(round, i)}}})
			}
		}()
		// kill once some writes are done and more are coming
		for range 40 + round*30 {
			if _, err := replies.ReadBytes('\n'); err != nil {
				t.Fatal(err)
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		go io.Copy(io.Discard, replies)
		cmd.Wait()
		in.Close()
		checkWhole(t, vault, valid)
		t.Logf("round %d: %d temporary names right after the kill", round, len(leftovers(t, vault)))
	}
	// a server starting sweeps what the kills left
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("serve: %v %s", err, out)
	}
	if left := leftovers(t, vault); len(left) > 0 {
		t.Errorf("left in the vault after a restart: %v", left)
	}
	checkWhole(t, vault, valid)
	// every write the log calls done had its pre-image kept first
	body, _ = os.ReadFile(auditPath)
	kept, err := history.OpenReadOnly(filepath.Join(filepath.Dir(auditPath), "history"))
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r struct{ ID, Tool, Outcome string }
		json.Unmarshal([]byte(line), &r)
		if r.Tool != "write" || r.Outcome != "ok" {
			continue
		}
		done++
		es, err := kept.Call(r.ID)
		if err != nil || len(es) == 0 || es[0].State != history.Applied {
			t.Errorf("write %s: its history entry: %v %+v", r.ID, err, es)
		}
	}
	if done == 0 {
		t.Error("no write was done before the kills")
	}
}

func notePath(round, i int) string {
	if i%2 == 0 {
		return fmt.Sprintf("crash/r%d/new-%d.md", round, i)
	}
	return fmt.Sprintf("crash/same-%d.md", i%20)
}

func content(round, i int) string {
	return fmt.Sprintf("round %d note %d\n%s\n", round, i, strings.Repeat("x", 4096))
}

// checkWhole: every note the test wrote holds one of the bodies it wrote.
func checkWhole(t *testing.T, vault string, valid map[string]bool) {
	t.Helper()
	filepath.WalkDir(filepath.Join(vault, "crash"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".vaultgate-tmp-") {
			return nil
		}
		if b, _ := os.ReadFile(p); !valid[string(b)] {
			t.Errorf("%s is torn: %d bytes", p, len(b))
		}
		return nil
	})
}

func leftovers(t *testing.T, vault string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(vault, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".vaultgate-tmp-") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// startServe starts `vaultgate serve` over stdio, as a client to be killed
// would: it has sent initialize and read the answer, so the next line sent
// is a call. send writes one JSON-RPC message; replies reads the answers.
func startServe(t *testing.T, bin, cfg string) (cmd *exec.Cmd, in io.WriteCloser, replies *bufio.Reader, send func(any)) {
	t.Helper()
	cmd = exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	in, _ = cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	replies = bufio.NewReader(out)
	send = func(v any) {
		b, _ := json.Marshal(v)
		in.Write(append(b, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "crash", "version": "1"}}})
	if _, err := replies.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return cmd, in, replies, send
}
