package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vaultgate/vaultgate/admin"
)

// serveClient starts the built binary over stdio on cfg, initialized.
func serveClient(t *testing.T, bin, cfg string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(bin, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "history-test", Version: "1"}
	info, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info.Instructions, "undo") || !strings.Contains(info.Instructions, "deleting is still refused") {
		t.Errorf("the instructions don't tell of undo: %q", info.Instructions)
	}
	return c
}

// auditIDs are the ids of the log's allowed calls, by tool, in order.
func auditIDs(t *testing.T, auditPath string) map[string][]string {
	t.Helper()
	body, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r struct{ ID, Tool, Decision string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Decision == "allow" {
			out[r.Tool] = append(out[r.Tool], r.ID)
		}
	}
	return out
}

// TestHistoryDiffUndoBinary drives the built server over MCP, then lists,
// diffs and undoes its calls by their audit ids, as a person would.
func TestHistoryDiffUndoBinary(t *testing.T) {
	vault, cfg, auditPath := sampleVault(t)
	os.MkdirAll(filepath.Join(vault, "мета/бобер/старое/глубже"), 0o755)
	os.WriteFile(filepath.Join(vault, "мета/бобер/старое/a.md"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "мета/бобер/старое/глубже/b.bin"), []byte("\x00b"), 0o600)
	c := serveClient(t, binary(t), cfg)
	ideas, _ := os.ReadFile(filepath.Join(vault, "notes/ideas.md"))
	callTool(t, c, "read", map[string]any{"path": "notes/ideas.md"})
	if text, isErr := callTool(t, c, "write", map[string]any{"path": "notes/ideas.md", "content": "rewritten\n"}); isErr {
		t.Fatal(text)
	}
	if text, isErr := callTool(t, c, "write", map[string]any{"path": "notes/new.md", "content": "one\ntwo\n"}); isErr {
		t.Fatal(text)
	}
	if text, isErr := callTool(t, c, "delete", map[string]any{"path": "мета/бобер/старое", "recursive": true}); isErr {
		t.Fatal(text)
	}
	c.Close()
	ids := auditIDs(t, auditPath)
	writeID, newID, delID, readID := ids["write"][0], ids["write"][1], ids["delete"][0], ids["read"][0]

	out, errOut, code := runCLI(t, "history", "--config", cfg, "--json")
	if code != 0 {
		t.Fatalf("history --json: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "session", "path", "op", "time", "agent", "tool", "before", "after"} {
		if _, ok := first[k]; !ok {
			t.Errorf("history --json lacks %q: %s", k, lines[0])
		}
	}
	if first["id"] != delID || first["op"] != "delete" || first["session"] == "" {
		t.Errorf("newest first: %s", lines[0])
	}
	for _, filter := range [][]string{{"--session", first["session"].(string)}, {"--since", "1h"}} {
		got, _, code := runCLI(t, append([]string{"history", "--config", cfg, "--json"}, filter...)...)
		if code != 0 || strings.Count(got, "\n") != len(lines) {
			t.Errorf("history %v: %d, %d lines, want %d", filter, code, strings.Count(got, "\n"), len(lines))
		}
	}
	for _, filter := range [][]string{{"--session", "no-such-session"}, {"--since", "2099-01-01"}} {
		if got, _, code := runCLI(t, append([]string{"history", "--config", cfg, "--json"}, filter...)...); code != 0 || got != "" {
			t.Errorf("history %v: %d %q, want nothing", filter, code, got)
		}
	}
	if _, _, code := runCLI(t, "history", "--config", cfg, "--since", "soon"); code != exitUsage {
		t.Errorf("history --since soon: exit %d, want 2", code)
	}
	out, _, code = runCLI(t, "history", "--config", cfg, "notes/ideas.md")
	if code != 0 || !strings.Contains(out, writeID) || strings.Contains(out, newID) || !strings.Contains(out, "modify") {
		t.Errorf("history PATH: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "diff", "--config", cfg, newID)
	if code != 0 || !strings.Contains(out, "+++ b/notes/new.md") || !strings.Contains(out, "+one\n+two\n") {
		t.Errorf("diff of a new file: %d\n%s", code, out)
	}
	if _, _, code = runCLI(t, "diff", "--config", cfg, "no-such-id"); code != exitUsage {
		t.Errorf("diff of an unknown id: exit %d, want 2", code)
	}

	// the deleted tree comes back whole
	out, errOut, code = runCLI(t, "undo", "--config", cfg, delID)
	if code != 0 || !strings.Contains(out, "put back мета/бобер/старое") {
		t.Errorf("undo of the delete: %d %s %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(vault, "мета/бобер/старое/глубже/b.bin")); err != nil || string(b) != "\x00b" {
		t.Errorf("the deleted tree is not back: %q %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(vault, "мета/бобер/старое/глубже/b.bin")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the deleted file's mode is not back: %v", fi)
	}
	// a read changed nothing; an unknown id is bad usage
	if out, _, code = runCLI(t, "undo", "--config", cfg, readID); code != 0 || !strings.Contains(out, "changed nothing") {
		t.Errorf("undo of a read: %d %s", code, out)
	}
	if _, _, code = runCLI(t, "undo", "--config", cfg, "0190aaaa-0000-7000-8000-000000000000"); code != exitUsage {
		t.Errorf("undo of an unknown id: exit %d, want 2", code)
	}
	// the person changed the note since: left alone, exit 1; --force
	os.WriteFile(filepath.Join(vault, "notes/ideas.md"), []byte("the person's\n"), 0o644)
	_, errOut, code = runCLI(t, "undo", "--config", cfg, writeID)
	if code != exitFailed || !strings.Contains(errOut, "notes/ideas.md changed since") {
		t.Errorf("undo of a changed path: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "notes/ideas.md")); string(b) != "the person's\n" {
		t.Errorf("a conflicting path was touched: %q", b)
	}
	if _, errOut, code = runCLI(t, "undo", "--config", cfg, writeID, "--force"); code != 0 {
		t.Errorf("undo --force: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "notes/ideas.md")); string(b) != string(ideas) {
		t.Errorf("--force did not put the note back: %q", b)
	}
	// the undos are audit lines of their own, via cli
	var undos int
	body, _ := os.ReadFile(auditPath)
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r struct{ Tool, Via string }
		json.Unmarshal([]byte(line), &r)
		if r.Tool == "undo" && r.Via == "cli" {
			undos++
		}
	}
	if undos < 3 {
		t.Errorf("%d undo lines in the audit log", undos)
	}
	if _, _, code = runCLI(t, "undo", "--config", cfg); code != exitUsage {
		t.Errorf("undo with nothing to undo: exit %d", code)
	}
	if out, _, code = runCLI(t, "history", "--config", cfg, "--gc"); code != 0 || !strings.Contains(out, "pruned 0 calls") {
		t.Errorf("history --gc: %d %s", code, out)
	}
}

// TestHistoryHiddenFromAgent keeps the state folder inside the vault, the
// closest it can be, and checks that no tool reaches the history there:
// read, list, search, and cat in walled bash.
func TestHistoryHiddenFromAgent(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("walled bash runs as root here (CI runs it)")
	}
	vault, cfg, _ := sampleVault(t)
	body, _ := os.ReadFile(cfg)
	body = []byte(strings.Replace(string(body), `path = "state/audit.jsonl"`, `path = "vault/.vaultgate/audit.jsonl"`, 1))
	os.WriteFile(cfg, append(body, []byte("[bash]\ntimeout = \"20s\"\n")...), 0o644)
	c := serveClient(t, filepath.Join(bundle(t), "vaultgate"), cfg)
	secret := "kept-body-" + strings.Repeat("z", 8)
	os.WriteFile(filepath.Join(vault, "notes/s.md"), []byte(secret+"\n"), 0o644)
	callTool(t, c, "read", map[string]any{"path": "notes/s.md"})
	if text, isErr := callTool(t, c, "write", map[string]any{"path": "notes/s.md", "content": "gone\n"}); isErr {
		t.Fatal(text)
	}
	// The store: the log (entries and small bodies, base64 in JSON) and,
	// once sealed, packs (bodies as they are). Whatever file holds the
	// secret, in either form, is what the agent must not reach.
	marks := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret + "\n")), "vgh1", `"before"`}
	var entry, blob string
	filepath.WalkDir(filepath.Join(vault, ".vaultgate/history"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		got, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(vault, p)
		for _, m := range marks[:2] {
			if strings.Contains(string(got), m) {
				blob = rel
			}
		}
		if strings.Contains(string(got), `"before"`) {
			entry = rel
		}
		return nil
	})
	if blob == "" || entry == "" {
		t.Fatalf("the pre-image (%q) or the entries (%q) are not where the test looks", blob, entry)
	}
	for _, p := range []string{entry, blob} {
		if text, isErr := callTool(t, c, "read", map[string]any{"path": p}); !isErr || containsAny(text, marks) {
			t.Errorf("read %s: %v %q", p, isErr, text)
		}
	}
	for _, p := range []string{".", ".vaultgate", ".vaultgate/history"} {
		if text, _ := callTool(t, c, "list", map[string]any{"path": p, "depth": 5}); strings.Contains(text, "entries") || strings.Contains(text, "blobs") || (p == "." && strings.Contains(text, ".vaultgate")) {
			t.Errorf("list %s shows the history: %q", p, text)
		}
	}
	if text, _ := callTool(t, c, "search", map[string]any{"query": secret}); strings.Contains(text, secret) {
		t.Errorf("search finds the pre-image: %q", text)
	}
	if text, _ := callTool(t, c, "search", map[string]any{"query": "sha256", "path": ".vaultgate"}); strings.Contains(text, "entries") {
		t.Errorf("search finds the entries: %q", text)
	}
	for _, cmd := range []string{"cat " + blob, "cat " + entry, "ls .vaultgate/history", "cat .vaultgate/history/log .vaultgate/history/packs/*", "cd .vaultgate && ls -R", "find . -name 'log*'"} {
		if text, _ := callTool(t, c, "bash", map[string]any{"command": cmd}); containsAny(text, marks) || strings.Contains(text, "lock\nlog") {
			t.Errorf("bash %s reaches the history: %q", cmd, text)
		}
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestUndoSessionBinary is the held-out check of undo: the built server,
// walled bash among the file tools, then history, diff and undo run as
// commands with the ids and the session of the audit lines, and the vault
// on disk compared with what it was.
func TestUndoSessionBinary(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("walled bash runs as root here (CI runs it)")
	}
	vault, cfg, auditPath := sampleVault(t)
	body, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(body, []byte("[bash]\nwall = \"required\"\ntimeout = \"20s\"\n")...), 0o644)
	os.MkdirAll(filepath.Join(vault, "мета/бобер/old/deep"), 0o755)
	os.WriteFile(filepath.Join(vault, "мета/бобер/old/a.md"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "мета/бобер/old/deep/b.md"), []byte("b\n"), 0o600)
	initial := vaultTree(t, vault)
	bin := filepath.Join(bundle(t), "vaultgate")
	c := serveClient(t, bin, cfg)
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"read", map[string]any{"path": "notes/ideas.md"}},
		{"edit", map[string]any{"path": "notes/ideas.md", "old_string": "# Ideas", "new_string": "# Ideas, edited"}},
		{"write", map[string]any{"path": "notes/drafts/fresh.md", "content": "fresh\n"}},
		{"move", map[string]any{"source": "notes/big.md", "destination": "notes/projects/big.md"}},
		{"delete", map[string]any{"path": "мета/бобер/x.md"}},
		{"bash", map[string]any{"command": "sed -i 's/todo/TODO/' notes/projects/2026/plan.md && printf 'made\\n' > notes/made.md"}},
		{"bash", map[string]any{"command": "rm -r мета/бобер/old && mv notes/ideas.md notes/ideas-renamed.md"}},
	}
	for _, s := range steps {
		if text, isErr := callTool(t, c, s.tool, s.args); isErr {
			t.Fatalf("%s %v: %s", s.tool, s.args, text)
		}
	}
	c.Close()
	changed := vaultTree(t, vault)
	if len(changedPaths(initial, changed)) < 10 {
		t.Fatalf("the calls changed only %v", changedPaths(initial, changed))
	}
	var session string
	var ids []string // the changing calls' ids, in order
	lines, _ := os.ReadFile(auditPath)
	for _, line := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var r struct{ ID, Tool, Decision, Session string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Decision == "allow" && r.Tool != "read" {
			ids, session = append(ids, r.ID), r.Session
		}
	}
	if len(ids) != len(steps)-1 || session == "" {
		t.Fatalf("the audit log's changes: %v, session %q", ids, session)
	}
	command := func(args ...string) (string, string, int) {
		var out, errOut strings.Builder
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
	}

	out, errOut, code := command("history", "--config", cfg, "--session", session, "--json")
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ ID, Session, Path, Op string }
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.Session != session || e.Path == "" || e.Op == "" {
			t.Errorf("history line %q: %v", line, err)
		}
		listed[e.ID] = true
	}
	for _, id := range ids {
		if !listed[id] {
			t.Errorf("history --session lacks call %s", id)
		}
	}
	sedID, rmID := ids[4], ids[5]
	out, _, code = command("diff", "--config", cfg, sedID)
	for _, want := range []string{"+++ b/notes/projects/2026/plan.md", "-- todo: ship", "+- TODO: ship", "+++ b/notes/made.md", "+made"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("diff of the bash call lacks %q: %d\n%s", want, code, out)
		}
	}

	// one bash call back by its id: the tree and the note are back, the rest stays
	out, errOut, code = command("undo", "--config", cfg, rmID)
	if code != 0 || !strings.Contains(out, "put back") {
		t.Errorf("undo %s: %d %s %s", rmID, code, out, errOut)
	}
	now := vaultTree(t, vault)
	for _, p := range []string{"мета/бобер/old/deep/b.md", "notes/ideas.md"} {
		if _, ok := now[p]; !ok {
			t.Errorf("undo of the bash call did not put back %s", p)
		}
	}
	if _, ok := now["notes/made.md"]; !ok {
		t.Error("undo of one call took back another's change")
	}
	// then the whole session: the vault is as it was, though one of its
	// calls is undone already
	out, errOut, code = command("undo", "--config", cfg, "--session", session)
	if code != 0 || !strings.Contains(out, rmID+" is undone already") {
		t.Errorf("undo --session: %d %s %s", code, out, errOut)
	}
	if got := changedPaths(initial, vaultTree(t, vault)); len(got) != 0 {
		t.Errorf("after undo --session, these differ from before the session: %v", got)
	}
	// and that undo is undoable: the vault is again as it was just before it
	var undoID string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "undo "); ok {
			undoID, _, _ = strings.Cut(rest, " ")
		}
	}
	if _, errOut, code = command("undo", "--config", cfg, undoID); code != 0 {
		t.Errorf("undo of the undo %q: %d %s", undoID, code, errOut)
	}
	if got := changedPaths(now, vaultTree(t, vault)); len(got) != 0 {
		t.Errorf("after undoing the undo, these differ from before it: %v", got)
	}
}

// twoSessions drives two MCP sessions through the built server: the
// first reads and rewrites notes/ideas.md, writes notes/new.md and
// deletes мета/бобер/x.md; the second writes notes/b-only.md. It returns
// the sessions and the ids of the first's three changes, in order.
func twoSessions(t *testing.T, cfg, auditPath string) (a, b string, aIDs []string) {
	t.Helper()
	c := serveClient(t, binary(t), cfg)
	callTool(t, c, "read", map[string]any{"path": "notes/ideas.md"})
	for _, s := range []struct {
		tool string
		args map[string]any
	}{
		{"write", map[string]any{"path": "notes/ideas.md", "content": "rewritten\n"}},
		{"write", map[string]any{"path": "notes/new.md", "content": "one\ntwo\n"}},
		{"delete", map[string]any{"path": "мета/бобер/x.md"}},
	} {
		if text, isErr := callTool(t, c, s.tool, s.args); isErr {
			t.Fatal(text)
		}
	}
	c.Close()
	c = serveClient(t, binary(t), cfg)
	if text, isErr := callTool(t, c, "write", map[string]any{"path": "notes/b-only.md", "content": "b only\n"}); isErr {
		t.Fatal(text)
	}
	c.Close()
	body, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		var r struct{ ID, Tool, Session string }
		json.Unmarshal([]byte(line), &r)
		switch {
		case a == "":
			a = r.Session
		case r.Session != a && b == "":
			b = r.Session
		}
		if r.Session == a && r.Tool != "read" {
			aIDs = append(aIDs, r.ID)
		}
	}
	if a == "" || b == "" || a == b || len(aIDs) != 3 {
		t.Fatalf("sessions %q and %q, the first's changes %v", a, b, aIDs)
	}
	return a, b, aIDs
}

// TestDiffBySessionAndSince: diff --session prints every call of that
// session, oldest first, each under a line naming it, and none of
// another's; diff --since every call since then, of every session.
func TestDiffBySessionAndSince(t *testing.T) {
	_, cfg, auditPath := sampleVault(t)
	a, b, aIDs := twoSessions(t, cfg, auditPath)

	out, errOut, code := runCLI(t, "diff", "--config", cfg, "--session", a)
	if code != exitOK {
		t.Fatalf("diff --session: %d %s", code, errOut)
	}
	at := func(s string) int { return strings.Index(out, s) }
	heads := []int{at("call " + aIDs[0] + ": write at "), at("call " + aIDs[1] + ": write at "), at("call " + aIDs[2] + ": delete at ")}
	if heads[0] < 0 || heads[1] <= heads[0] || heads[2] <= heads[1] {
		t.Errorf("diff --session: the calls' lines are not there, oldest first (%v):\n%s", heads, out)
	}
	// each call's diff under its own line
	for i, want := range []string{"+rewritten\n", "+++ b/notes/new.md\n@@ -0,0 +1,2 @@\n+one\n+two\n", "--- a/мета/бобер/x.md\n"} {
		if p := at(want); p < heads[i] || (i+1 < len(heads) && p > heads[i+1]) {
			t.Errorf("diff --session: %q is not under call %s:\n%s", want, aIDs[i], out)
		}
	}
	if strings.Contains(out, "b-only.md") {
		t.Errorf("diff --session %s shows the other session's change:\n%s", a, out)
	}
	if !strings.Contains(out, " by default\n") {
		t.Errorf("diff --session: the call's line does not name its agent:\n%s", out)
	}

	out, _, code = runCLI(t, "diff", "--config", cfg, "--since", "1h")
	if code != exitOK || !strings.Contains(out, "+++ b/notes/b-only.md") || !strings.Contains(out, "+rewritten") ||
		strings.Index(out, "notes/b-only.md") < strings.Index(out, "notes/new.md") {
		t.Errorf("diff --since 1h: %d, want both sessions, oldest first:\n%s", code, out)
	}
	if out, _, code = runCLI(t, "diff", "--config", cfg, "--session", b); code != exitOK || strings.Contains(out, "ideas.md") || !strings.Contains(out, "+b only") {
		t.Errorf("diff --session %s: %d\n%s", b, code, out)
	}
	if out, _, code = runCLI(t, "diff", "--config", cfg, "--since", "2099-01-01"); code != exitOK || out != "no change since 2099-01-01 in this vault\n" {
		t.Errorf("diff --since in the future: %d %q", code, out)
	}
	if out, _, code = runCLI(t, "diff", "--config", cfg, "--session", "no-such"); code != exitOK || !strings.Contains(out, "no change of session no-such") {
		t.Errorf("diff --session no-such: %d %q", code, out)
	}
	for _, args := range [][]string{{aIDs[0], "--session", a}, {"--since", "soon"}, {}} {
		if _, _, code := runCLI(t, append([]string{"diff", "--config", cfg}, args...)...); code != exitUsage {
			t.Errorf("diff %v: exit %d, want 2", args, code)
		}
	}
}

// TestUndoDryRunAndRemoved: undo --dry-run prints the plan, path by path,
// and changes nothing (no file, no audit line, no history); the undo then
// does what it said, in the same words, and names what it removes
// "removed X". --since leaves the person's own undos out, says so, and
// --include-undos takes them too.
func TestUndoDryRunAndRemoved(t *testing.T) {
	vault, cfg, auditPath := sampleVault(t)
	initial := vaultTree(t, vault)
	a, _, aIDs := twoSessions(t, cfg, auditPath)
	changed := vaultTree(t, vault)
	logBefore, _ := os.ReadFile(auditPath)
	histBefore, _, _ := runCLI(t, "history", "--config", cfg, "--json")

	plan, errOut, code := runCLI(t, "undo", "--config", cfg, "--session", a, "--dry-run")
	want := "would put back notes/ideas.md\nwould remove notes/new.md\nwould put back мета/бобер/x.md\n"
	if code != exitOK || plan != want || errOut != "" {
		t.Errorf("undo --dry-run: %d\n%s%s\nwant\n%s", code, plan, errOut, want)
	}
	if got := changedPaths(changed, vaultTree(t, vault)); len(got) != 0 {
		t.Errorf("undo --dry-run changed %v", got)
	}
	if logNow, _ := os.ReadFile(auditPath); !bytes.Equal(logNow, logBefore) {
		t.Error("undo --dry-run wrote an audit line")
	}
	if histNow, _, _ := runCLI(t, "history", "--config", cfg, "--json"); histNow != histBefore {
		t.Error("undo --dry-run kept history")
	}
	// The panel's preview, through the undo `vaultgate admin --config`
	// wires (personUndo), is the same plan in the same words.
	undoFn, err := (&logSource{config: cfg}).personUndo()
	if err != nil {
		t.Fatal(err)
	}
	panel, err := admin.New(admin.Options{Log: auditPath, Token: "a-token-of-sixteen-or-more", Undo: undoFn})
	if err != nil {
		t.Fatal(err)
	}
	defer panel.Close()
	req := httptest.NewRequest(http.MethodPost, "/api/undo", strings.NewReader(`{"session":"`+a+`","dry_run":true}`))
	req.Header.Set("Authorization", "Bearer a-token-of-sixteen-or-more")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	panel.ServeHTTP(rec, req)
	var preview admin.UndoAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &preview); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("the panel's preview: %d %s", rec.Code, rec.Body)
	}
	var said strings.Builder
	for _, l := range preview.Lines {
		said.WriteString(l.Text + "\n")
	}
	if said.String() != plan {
		t.Errorf("the panel previews\n%s\nundo --dry-run prints\n%s", said.String(), plan)
	}
	if changedPaths(changed, vaultTree(t, vault)) != nil {
		t.Error("the panel's preview changed the vault")
	}
	if logNow, _ := os.ReadFile(auditPath); !bytes.Equal(logNow, logBefore) {
		t.Error("the panel's preview wrote an audit line")
	}

	// The undo does what the plan said, in the same words.
	out, errOut, code := runCLI(t, "undo", "--config", cfg, "--session", a)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 4 || strings.Join(lines[:3], "\n")+"\n" != "put back notes/ideas.md\nremoved notes/new.md\nput back мета/бобер/x.md\n" ||
		!strings.HasPrefix(lines[3], "undo ") {
		t.Errorf("undo --session: %d\n%s%s", code, out, errOut)
	}
	undoA := strings.Fields(lines[len(lines)-1])[1]
	now := vaultTree(t, vault)
	for _, p := range []string{"notes/ideas.md", "мета/бобер/x.md"} {
		if now[p] != initial[p] {
			t.Errorf("%s is not back: %q", p, now[p])
		}
	}
	if _, ok := now["notes/new.md"]; ok {
		t.Error("the note the session made is still there")
	}

	// --since leaves that undo out: the other session's note goes, the
	// first session's calls are undone already, the undo stays.
	out, _, code = runCLI(t, "undo", "--config", cfg, "--since", "1h", "--dry-run")
	for _, w := range []string{"would remove notes/b-only.md\n", aIDs[0] + " is undone already", "left out 1 undo(s) of your own made in that time (--include-undos takes them back too)\n"} {
		if code != exitOK || !strings.Contains(out, w) {
			t.Errorf("undo --since 1h --dry-run lacks %q: %d\n%s", w, code, out)
		}
	}
	if strings.Contains(out, "notes/new.md") {
		t.Errorf("undo --since 1h would take back the person's undo:\n%s", out)
	}
	// --include-undos takes it too: its paths are in the plan again.
	out, _, code = runCLI(t, "undo", "--config", cfg, "--since", "1h", "--dry-run", "--include-undos")
	if code != exitOK || strings.Contains(out, "left out") || !strings.Contains(out, "notes/new.md") {
		t.Errorf("undo --since 1h --include-undos --dry-run: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "undo", "--config", cfg, "--since", "1h")
	if code != exitOK || !strings.Contains(out, "removed notes/b-only.md") || strings.Contains(out, "notes/new.md") {
		t.Errorf("undo --since 1h: %d\n%s", code, out)
	}
	if got := changedPaths(initial, vaultTree(t, vault)); len(got) != 0 {
		t.Errorf("after both undos, these differ from before the sessions: %v", got)
	}
	hist, _, _ := runCLI(t, "history", "--config", cfg, "--json")
	for _, line := range strings.Split(strings.TrimSpace(hist), "\n") {
		var e struct{ ID, Undoes string }
		json.Unmarshal([]byte(line), &e)
		if e.ID != undoA && strings.Contains(e.Undoes, undoA) {
			t.Errorf("undo --since took back the person's undo %s: %s", undoA, line)
		}
	}
	if _, _, code := runCLI(t, "undo", "--config", cfg, "--session", a, "--include-undos"); code != exitUsage {
		t.Errorf("--include-undos without --since: exit %d, want 2", code)
	}
}
