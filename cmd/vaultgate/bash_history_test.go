package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/vaultgate/vaultgate/history"
)

// walledVault is the sample vault with bash walled on the overlay.
func walledVault(t *testing.T, extra string) (vault, cfg, auditPath string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("wall: the overlay needs a root server (CI runs as root)")
	}
	vault, cfg, auditPath = sampleVault(t)
	body, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(body, []byte("[bash]\nwall = \"required\"\ntimeout = \"60s\"\n"+extra)...), 0o644)
	return vault, cfg, auditPath
}

// TestWallBinaryBashUndo: the changes a walled bash call commits (an
// edit by sed -i, a delete in a write zone, a move) are in the history
// under the call's audit id: diff shows them and undo puts them back.
func TestWallBinaryBashUndo(t *testing.T) {
	vault, cfg, auditPath := walledVault(t, "")
	before := vaultTree(t, vault)
	c, err := client.NewStdioMCPClient(binary(t), []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"sed -i 's/e/E/g' notes/ideas.md", "rm 'мета/бобер/x.md'", "mv Welcome.md notes/Welcome.md"} {
		if text, isErr := callTool(t, c, "bash", map[string]any{"command": command}); isErr || !strings.Contains(text, "exit code: 0") {
			t.Fatalf("%s: %s", command, text)
		}
	}
	c.Close()
	ids := bashIDs(t, auditPath)
	if len(ids) != 3 {
		t.Fatalf("bash calls in the audit: %v", ids)
	}
	out, errOut, code := runCLI(t, "diff", "--config", cfg, ids[0])
	if code != 0 || !strings.Contains(out, "notes/ideas.md") || !strings.Contains(out, "+") {
		t.Errorf("diff of the sed call: %d %s %s", code, out, errOut)
	}
	if got := changedPaths(before, vaultTree(t, vault)); len(got) == 0 {
		t.Fatal("the calls changed nothing")
	}
	out, errOut, code = runCLI(t, "undo", "--config", cfg, ids[0], ids[1], ids[2])
	if code != 0 {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	if got := changedPaths(before, vaultTree(t, vault)); len(got) > 0 {
		t.Errorf("after undo these differ from before the calls: %v", got)
	}
}

// bashIDs are the audit ids of the bash calls, oldest first.
func bashIDs(t *testing.T, auditPath string) []string {
	t.Helper()
	body, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r struct{ ID, Tool string }
		json.Unmarshal([]byte(line), &r)
		if r.Tool == "bash" {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// TestWallKillInTheMiddleOfBashCommit kills (SIGKILL) a serving vaultgate
// once a bash call's commit is journalled, then starts one again: the
// commit is finished whole (Sweep), no temporary name is left in the
// vault, and the call's history is settled, so that undo takes it back.
func TestWallKillInTheMiddleOfBashCommit(t *testing.T) {
	vault, cfg, _ := walledVault(t, "max_changed_files = 5000\n")
	const files = 1500
	src := filepath.Join(vault, "notes", "many")
	os.MkdirAll(src, 0o755)
	for i := range files {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("%d.md", i)), []byte(strings.Repeat(fmt.Sprint(i), 500)), 0o644)
	}
	before := vaultTree(t, vault)
	state := filepath.Join(filepath.Dir(vault), "state")
	cmd, in, replies, send := startServe(t, binary(t), cfg)
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "bash", "arguments": map[string]any{"command": "cp -r notes/many notes/copy"}}})
	replied := make(chan struct{})
	go func() { replies.ReadBytes('\n'); close(replied) }()
	// kill as soon as the commit is journalled, its pre-images kept (or,
	// if it was quicker than the look, once the call is over: the restart
	// must hold then too)
	journalled, over := false, false
	for !journalled && !over {
		select {
		case <-replied:
			over = true
		default:
			m, _ := filepath.Glob(filepath.Join(state, "*", "txn", "*", "journal.json"))
			journalled = len(m) > 0
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait() // the reader above ends at the pipe's close; it alone reads replies
	<-replied
	in.Close()
	_, err := os.Lstat(filepath.Join(vault, "notes", "copy"))
	t.Logf("killed with the commit begun: %v, the copy begun: %v", journalled, err == nil)
	restart := exec.Command(binary(t), "serve", "--config", cfg)
	restart.Env = cmd.Env
	restart.Stdin = strings.NewReader("")
	if out, err := restart.CombinedOutput(); err != nil {
		t.Fatalf("serve: %v %s", err, out)
	}
	if left := leftovers(t, vault); len(left) > 0 {
		t.Errorf("left in the vault after a restart: %v", left)
	}
	if m, _ := filepath.Glob(filepath.Join(state, "*", "txn", "*")); len(m) > 0 {
		t.Errorf("layers left after a restart: %v", m)
	}
	after := vaultTree(t, vault)
	if _, ok := after["notes/copy"]; !ok {
		// cut before the commit's journal: none of it is applied
		if journalled {
			t.Fatal("a journalled commit was not finished by the restart")
		}
		if got := changedPaths(before, after); len(got) > 0 {
			t.Fatalf("changed though the commit had not begun: %.10v", got)
		}
		return
	}
	for i := range files {
		name := fmt.Sprintf("notes/copy/%d.md", i)
		if after[name] != before[fmt.Sprintf("notes/many/%d.md", i)] {
			t.Fatalf("%s is %q after the restart: the commit was not finished whole", name, after[name])
		}
	}
	kept, err := history.OpenReadOnly(history.Dir(state))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := kept.Calls()
	if err != nil || len(ids) != 1 {
		t.Fatalf("history calls: %v %v", ids, err)
	}
	id := ids[0]
	if es, err := kept.Call(id); err != nil || len(es) == 0 || es[0].State == history.Pending {
		t.Errorf("the call's history is still pending after the restart: %+v %v", es, err)
	}
	if out, errOut, code := runCLI(t, "undo", "--config", cfg, id); code != 0 {
		t.Fatalf("undo: %d %s %s", code, out, errOut)
	}
	if got := changedPaths(before, vaultTree(t, vault)); len(got) > 0 {
		t.Errorf("after undo these differ from before the call: %.10v", got)
	}
}
