package server

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/vaultgate/vaultgate/claude"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
)

// hookConfig is a real copy of the sample vault, with a hidden note, and
// its config (extra at the end), the audit log and state folder beside it.
func hookConfig(t testing.TB, extra string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	auditPath := filepath.Join(dir, "state", "audit.jsonl")
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+auditPath+`"
[zones]
write     = ["мета/бобер"]
create    = ["💬 чаты"]
edit      = ["."]
protected = [".obsidian", "мета"]
hidden    = ["notes/private", "notes/секреты"]
`+extra)
	os.MkdirAll(filepath.Join(vault, "notes/private"), 0o755)
	os.WriteFile(filepath.Join(vault, "notes/private/diary.md"), []byte("dear diary\n"), 0o644)
	os.MkdirAll(filepath.Join(vault, "notes/секреты"), 0o755)
	os.WriteFile(filepath.Join(vault, "notes/секреты/пароли.md"), []byte("hunter2\n"), 0o644)
	return cfg
}

// hookGate serves hookConfig's vault to the hook, as a hook process of
// the default agent opens it (OpenCall).
func hookGate(t testing.TB, extra string) (*Gate, *config.Policy, string, string) {
	t.Helper()
	cfg := hookConfig(t, extra)
	g := callGate(t, cfg, config.DefaultAgent)
	return g, cfg.Policy(config.DefaultAgent), cfg.Vault, cfg.AuditPath
}

func hookCall(t *testing.T, g *Gate, p *config.Policy, session, cwd, tool string, input map[string]any) string {
	t.Helper()
	return hookAnswer(t, g, p, session, cwd, tool, input).Deny
}

// testExec is the vaultgate binary the hook's rewrites name in these
// tests, which never run them (cmd/vaultgate's do).
const testExec = "/opt/vault gate/vaultgate"

func hookAnswer(t *testing.T, g *Gate, p *config.Policy, session, cwd, tool string, input map[string]any) claude.HookAnswer {
	t.Helper()
	in := &claude.HookInput{SessionID: session, Cwd: cwd, HookEventName: "PreToolUse", ToolName: tool, ToolInput: input}
	a, err := g.HookWith(context.Background(), p, in, HookOptions{Exec: testExec})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return a
}

func TestHookBuiltins(t *testing.T) {
	// wall = "off": what the analysis alone allows, wherever the test runs
	g, p, v, auditPath := hookGate(t, "[bash]\nwall = \"off\"\n")
	abs := func(rel string) string { return filepath.Join(v, rel) }
	cases := []struct {
		tool  string
		input map[string]any
		deny  string // "" = allowed
	}{
		{"Read", map[string]any{"file_path": abs("notes/ideas.md")}, ""},
		{"Read", map[string]any{"file_path": abs("notes/private/diary.md")}, "zone hidden"},
		{"Read", map[string]any{"file_path": "/etc/passwd"}, "outside the vault"},
		{"Write", map[string]any{"file_path": abs("notes/new.md"), "content": "x"}, ""},
		{"Write", map[string]any{"file_path": abs("мета/new.md"), "content": "x"}, "zone protected"},
		{"Write", map[string]any{"file_path": abs(".claude/settings.json"), "content": "{}"}, "zone protected"},
		{"Edit", map[string]any{"file_path": abs("notes/ideas.md"), "old_string": "a", "new_string": "b"}, ""}, // read above
		{"Edit", map[string]any{"file_path": abs("Welcome.md"), "old_string": "a", "new_string": "b"}, "Read it"},
		{"MultiEdit", map[string]any{"file_path": abs("мета/план.md"), "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}, "zone protected"},
		{"NotebookEdit", map[string]any{"notebook_path": abs("💬 чаты/n.ipynb"), "new_source": "x"}, ""},
		{"Glob", map[string]any{"pattern": "**/*.md", "path": abs("notes/projects")}, ""},
		{"Glob", map[string]any{"pattern": "**/*.md"}, "some paths inside it are hidden from you"},
		{"Glob", map[string]any{"pattern": "../../*", "path": abs("notes")}, "outside the vault"},
		{"Grep", map[string]any{"pattern": "todo", "path": abs("notes")}, "hidden from you"},
		{"Grep", map[string]any{"pattern": "todo", "path": abs("мета")}, ""},
		// Glob and Grep read as ripgrep reads their globs, from the
		// session's folder (notes, which holds the hidden секреты)
		{"Glob", map[string]any{"pattern": `секрет\ы/*`}, "hidden"},
		{"Glob", map[string]any{"pattern": `секрет[ы]/*`}, "hidden"},
		{"Glob", map[string]any{"pattern": `{projects,секреты}/*`}, "hidden"},
		{"Glob", map[string]any{"pattern": `notes/секреты/*`}, "hidden"}, // Claude Code drops the repeated notes/
		{"Glob", map[string]any{"pattern": `!projects/**`}, "hidden"},    // excludes only: all the rest is listed
		{"Glob", map[string]any{"pattern": abs(`notes/секрет\ы`) + "/*"}, "hidden"},
		{"Glob", map[string]any{"pattern": `projects/**`}, ""},
		{"Glob", map[string]any{"pattern": `projects/2026/*.md`}, ""},
		{"Glob", map[string]any{"pattern": abs("notes/projects") + "/**/*.md"}, ""},
		{"Grep", map[string]any{"pattern": "todo", "glob": `секрет\ы/*`}, "hidden"},
		{"Grep", map[string]any{"pattern": "todo", "glob": "projects/** секреты/*"}, "hidden"},
		{"Grep", map[string]any{"pattern": "todo", "glob": "*.md"}, "hidden"},
		{"Grep", map[string]any{"pattern": "todo", "file_path": abs("notes/секреты")}, "hidden"}, // Claude Code reads it as path
		{"Grep", map[string]any{"pattern": "todo", "glob": "projects/**,ideas.md"}, "hidden"},    // ideas.md: a name at any depth
		{"Grep", map[string]any{"pattern": "todo", "glob": "projects/**,/ideas.md"}, ""},
		{"Grep", map[string]any{"pattern": "todo", "path": "projects", "glob": "*.md"}, ""},
		// a subagent in a worktree reads every tracked file, hidden too
		{"Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "worktree"}, "Agent is not allowed here: with isolation"},
		{"Task", map[string]any{"description": "d", "prompt": "p", "isolation": "worktree"}, "Task is not allowed here: with isolation"},
		{"Agent", map[string]any{"description": "d", "prompt": "p", "isolation": "remote"}, "Agent is not allowed here: with isolation"},
		{"Agent", map[string]any{"description": "d", "prompt": "p", "subagent_type": "general-purpose"}, ""},
		{"Bash", map[string]any{"command": "grep -rn todo projects", "description": "find todos"}, ""},
		{"Bash", map[string]any{"command": "rm ideas.md"}, "bash may remove or rename files only in write zones"},
		{"Bash", map[string]any{"command": "python3 -c 'print(1)'"}, `run "python3"`},
		{"Bash", map[string]any{"command": "rm ../мета/бобер/x.md"}, ""},
		{"mcp__vault__delete", map[string]any{"path": "мета/x.md"}, ""}, // the server judges its own tools
		{"WebFetch", map[string]any{"url": "https://example.com"}, "is not allowed here"},
		{"Task", map[string]any{}, ""}, // touches no file: passes (hook_builtins_test.go)
		{"Read", map[string]any{}, `"file_path" is required`},
	}
	for _, c := range cases {
		got := hookCall(t, g, p, "sess-1", filepath.Join(v, "notes"), c.tool, c.input)
		switch {
		case c.deny == "" && got != "":
			t.Errorf("%s %v: denied: %s", c.tool, c.input, got)
		case c.deny != "" && !strings.Contains(got, c.deny):
			t.Errorf("%s %v: %q, want a deny containing %q", c.tool, c.input, got, c.deny)
		}
	}
	// every decision is an audit line with via hook, and no body in it;
	// the one passed on to the vault server is that server's to record
	data, _ := os.ReadFile(auditPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(cases)-1 {
		t.Errorf("%d audit lines for %d calls, one of them forwarded", len(lines), len(cases))
	}
	for _, l := range lines {
		var r struct{ Via, Session, Tool, Rule, Event string }
		json.Unmarshal([]byte(l), &r)
		if r.Via != "hook" || r.Session != "sess-1" || r.Event != "" || strings.HasPrefix(r.Tool, "mcp__vault__") {
			t.Errorf("audit line %s", l)
		}
		if r.Tool == "WebFetch" && r.Rule != "hook_scope" {
			t.Errorf("a foreign tool is not the hook_scope rule's: %s", l)
		}
	}
	if strings.Contains(string(data), "dear diary") {
		t.Error("a body reached the audit")
	}
}

func TestHookAllowList(t *testing.T) {
	g, p, v, _ := hookGate(t, "[hook]\nserver_name = \"notes\"\nallow = [\"WebSearch\", \"mcp__github__*\"]\n")
	for tool, want := range map[string]bool{
		"WebSearch": true, "mcp__github__list": true, "mcp__notes__read": true,
		"mcp__vault__read": false, "WebFetch": false, "mcp__githubx": false,
	} {
		got := hookCall(t, g, p, "s", v, tool, map[string]any{}) == ""
		if got != want {
			t.Errorf("%s: allowed=%v, want %v", tool, got, want)
		}
	}
}

func TestHookSessionState(t *testing.T) {
	g, p, v, _ := hookGate(t, "")
	f := filepath.Join(v, "notes/ideas.md")
	edit := map[string]any{"file_path": f, "old_string": "a", "new_string": "b"}
	if d := hookCall(t, g, p, "A", v, "Edit", edit); !strings.Contains(d, "Read it") {
		t.Fatalf("unread edit: %q", d)
	}
	if d := hookCall(t, g, p, "A", v, "Read", map[string]any{"file_path": f}); d != "" {
		t.Fatal(d)
	}
	// a new process, the same session: the read is remembered
	if d := hookCall(t, g, p, "A", v, "Edit", edit); d != "" {
		t.Errorf("edit after read in the same session: %q", d)
	}
	// another session has not read it
	if d := hookCall(t, g, p, "B", v, "Edit", edit); d == "" {
		t.Error("a read in session A counted for session B")
	}
	// Claude Code edits the file; PostToolUse records it, so a second edit needs no read
	os.WriteFile(f, []byte("edited by Claude Code\n"), 0o644)
	if _, err := g.Hook(context.Background(), p, &claude.HookInput{SessionID: "A", HookEventName: "PostToolUse", ToolName: "Edit", ToolInput: edit}); err != nil {
		t.Fatal(err)
	}
	if d := hookCall(t, g, p, "A", v, "Edit", edit); d != "" {
		t.Errorf("edit after the session's own edit: %q", d)
	}
	// someone else changes it: read again
	os.WriteFile(f, []byte("changed by a person, longer\n"), 0o644)
	if d := hookCall(t, g, p, "A", v, "Edit", edit); !strings.Contains(d, "Read it") {
		t.Errorf("edit after an outside change: %q", d)
	}
}

func TestHookConcurrentSessions(t *testing.T) {
	g, p, v, auditPath := hookGate(t, "")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				hookCall(t, g, p, "shared", v, "Read", map[string]any{"file_path": filepath.Join(v, "Welcome.md")})
				hookCall(t, g, p, "shared", v, "Write", map[string]any{"file_path": filepath.Join(v, "notes/n.md"), "content": "x"})
			}
			_ = i
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(auditPath)
	if n := strings.Count(string(data), "\n"); n != 160 {
		t.Errorf("%d audit lines, want 160", n)
	}
	if r, err := audit.Verify(auditPath); err != nil || !r.OK {
		t.Errorf("verify: %+v %v", r, err)
	}
}

func TestParseHookInput(t *testing.T) {
	for _, bad := range []string{"", "  \n", "not json", `{"tool_input":{}}`, `[1,2]`} {
		if _, err := claude.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	in, err := claude.ParseHookInput([]byte(`{"session_id":"x","tool_name":"Read"}`))
	if err != nil || in.ToolInput == nil {
		t.Errorf("%+v %v", in, err)
	}
	var out map[string]map[string]string
	json.Unmarshal(claude.HookAnswer{Deny: "no"}.JSON(), &out)
	h := out["hookSpecificOutput"]
	if h["hookEventName"] != "PreToolUse" || h["permissionDecision"] != "deny" || h["permissionDecisionReason"] != "no" {
		t.Errorf("deny JSON: %v", out)
	}
}

// TestHookDeniesWhatItCantRecord: an allowed call whose audit line can't be
// written is not let through (the hook then exits 2). A call forwarded to
// the vault server is the server's to record (TestHookForwarded).
func TestHookDeniesWhatItCantRecord(t *testing.T) {
	g, p, v, _ := hookGate(t, "[hook]\nallow = [\"TodoWrite\"]\n")
	g.log.Close() // every later Write fails
	for tool, input := range map[string]map[string]any{
		"Read":      {"file_path": filepath.Join(v, "Welcome.md")},
		"TodoWrite": {"todos": []any{}},
	} {
		in := &claude.HookInput{SessionID: "s", Cwd: v, HookEventName: "PreToolUse", ToolName: tool, ToolInput: input}
		if a, err := g.Hook(context.Background(), p, in); err == nil && a.Deny == "" {
			t.Errorf("%s was let through unrecorded", tool)
		}
	}
}

// TestHookAllowNeverSwitchesOffChecks: [hook] allow is only for tools the
// hook does not judge; Claude Code's Bash and Write are judged the same
// whatever it matches.
func TestHookAllowNeverSwitchesOffChecks(t *testing.T) {
	calls := []struct {
		tool  string
		input func(v string) map[string]any
	}{
		{"Bash", func(string) map[string]any { return map[string]any{"command": "rm -rf notes"} }},
		{"Write", func(v string) map[string]any {
			return map[string]any{"file_path": filepath.Join(v, "мета/x.md"), "content": "x"}
		}},
		{"Edit", func(v string) map[string]any {
			return map[string]any{"file_path": filepath.Join(v, "Welcome.md"), "old_string": "a", "new_string": "b"}
		}},
	}
	g, p, v, _ := hookGate(t, "")
	var want []string
	for _, c := range calls {
		d := hookCall(t, g, p, "s", v, c.tool, c.input(v))
		if d == "" {
			t.Fatalf("%s is allowed without [hook] allow", c.tool)
		}
		want = append(want, d)
	}
	for _, allow := range []string{`["*"]`, `["Bash"]`, `["B*"]`, `["Write", "Edit"]`} {
		g, p, v, auditPath := hookGate(t, "[hook]\nallow = "+allow+"\n")
		for i, c := range calls {
			if got := hookCall(t, g, p, "s", v, c.tool, c.input(v)); got != want[i] {
				t.Errorf("allow = %s: %s: %q, want %q", allow, c.tool, got, want[i])
			}
		}
		data, _ := os.ReadFile(auditPath)
		if n := strings.Count(string(data), `"decision":"deny"`); n != len(calls) {
			t.Errorf("allow = %s: %d deny lines, want %d", allow, n, len(calls))
		}
	}
	// what allow is for: a tool the hook does not judge
	g, p, v, _ = hookGate(t, "[hook]\nallow = [\"*\"]\n")
	if d := hookCall(t, g, p, "s", v, "TodoWrite", map[string]any{"todos": []any{}}); d != "" {
		t.Errorf("TodoWrite with allow = [\"*\"]: %q", d)
	}
}

// TestHookScopeIsARule: the chain decides the hook's foreign tools, so a
// library user's rule sees those calls too, and a deny of a forwarded call
// is recorded.
func TestHookScopeIsARule(t *testing.T) {
	g, p, v, auditPath := hookGate(t, "[hook]\nallow = [\"TodoWrite\"]\n")
	var seen []string
	g.rules = []policy.Rule{{Name: "no_deletes", Check: func(c *policy.ToolCall) *policy.Deny {
		seen = append(seen, c.Tool)
		if strings.HasSuffix(c.Tool, "__delete") {
			return &policy.Deny{Reason: "not from Claude Code"}
		}
		return nil
	}}}
	if d := hookCall(t, g, p, "s", v, "TodoWrite", map[string]any{}); d != "" {
		t.Errorf("TodoWrite: %q", d)
	}
	if d := hookCall(t, g, p, "s", v, "mcp__vault__delete", map[string]any{"path": "x"}); d != "not from Claude Code" {
		t.Errorf("mcp__vault__delete: %q", d)
	}
	if d := hookCall(t, g, p, "s", v, "WebFetch", map[string]any{}); !strings.Contains(d, "not allowed here") {
		t.Errorf("WebFetch: %q", d)
	}
	if strings.Join(seen, ",") != "TodoWrite,mcp__vault__delete" {
		t.Errorf("the library rule saw %v", seen)
	}
	data, _ := os.ReadFile(auditPath)
	if !strings.Contains(string(data), `"tool":"mcp__vault__delete"`) || !strings.Contains(string(data), `"rule":"no_deletes"`) {
		t.Errorf("the denied forwarded call is not in the log:\n%s", data)
	}
}

// TestHookForwarded: a call passed on to the vault server leaves no line of
// the hook's; the session's state file keeps what joins it with the
// server's line, and keeps only the newest.
func TestHookForwarded(t *testing.T) {
	g, p, v, auditPath := hookGate(t, "")
	in := &claude.HookInput{SessionID: "join-me", Cwd: v, HookEventName: "PreToolUse", ToolName: "mcp__vault__read",
		ToolInput: map[string]any{"path": "Welcome.md"}, ToolUseID: "toolu_01"}
	before := time.Now().Add(-time.Second)
	for i := range maxForwarded + 3 {
		in.ToolUseID = fmt.Sprintf("toolu_%03d", i)
		if a, err := g.Hook(context.Background(), p, in); err != nil || a.Deny != "" {
			t.Fatalf("%+v %v", a, err)
		}
	}
	if data, _ := os.ReadFile(auditPath); len(data) != 0 {
		t.Errorf("forwarded calls wrote lines:\n%s", data)
	}
	store, err := holdSession(g.cfg.StateDir, "join-me")
	if err != nil {
		t.Fatal(err)
	}
	defer store.close()
	f := store.file
	if f.SessionID != "join-me" || len(f.Forwarded) != maxForwarded {
		t.Fatalf("state: session %q, %d forwarded calls", f.SessionID, len(f.Forwarded))
	}
	last := f.Forwarded[len(f.Forwarded)-1]
	if f.Forwarded[0].ToolUseID != "toolu_003" || last.ToolUseID != fmt.Sprintf("toolu_%03d", maxForwarded+2) ||
		last.Tool != "mcp__vault__read" || last.Time.Before(before) {
		t.Errorf("forwarded calls: first %+v, last %+v", f.Forwarded[0], last)
	}
}

// TestHookPostToolUse: after Claude Code ran a tool, the hook plans and
// judges what it records (a stamp of the file as it is now), runs that,
// and writes an after line.
func TestHookPostToolUse(t *testing.T) {
	g, p, v, auditPath := hookGate(t, "")
	after := func(tool string, input map[string]any) {
		t.Helper()
		in := &claude.HookInput{SessionID: "A", Cwd: filepath.Join(v, "notes"), HookEventName: "PostToolUse", ToolName: tool, ToolInput: input}
		if a, err := g.Hook(context.Background(), p, in); err != nil || a.Deny != "" {
			t.Fatalf("%s: %+v %v", tool, a, err)
		}
	}
	notes := filepath.Join(v, "notes/ideas.md")
	diary := filepath.Join(v, "notes/private/diary.md")
	edit := func(f string) map[string]any {
		return map[string]any{"file_path": f, "old_string": "a", "new_string": "b"}
	}
	after("Write", map[string]any{"file_path": "ideas.md", "content": "x"}) // relative to the cwd
	after("Edit", edit(notes))
	after("Bash", map[string]any{"command": "ls"})
	after("Edit", edit(diary))
	if d := hookCall(t, g, p, "A", v, "Edit", edit(notes)); d != "" {
		t.Errorf("edit after the session's own edit: %q", d)
	}
	store, err := holdSession(g.cfg.StateDir, "A")
	if err != nil {
		t.Fatal(err)
	}
	_, stamped := store.file.State.Read["notes/private/diary.md"]
	store.close()
	if stamped {
		t.Error("a hidden file was stamped")
	}
	var recs []audit.Record
	audit.Read(auditPath, func(r audit.Record) error { recs = append(recs, r); return nil })
	if len(recs) != 5 {
		t.Fatalf("%d lines, want 4 after and 1 before", len(recs))
	}
	for i, want := range []struct{ tool, decision, effect string }{
		{"Write", "allow", "read notes/ideas.md"}, {"Edit", "allow", "read notes/ideas.md"},
		{"Bash", "allow", ""}, {"Edit", "deny", "read notes/private/diary.md"},
	} {
		r := recs[i]
		effect := ""
		if len(r.Effects) > 0 {
			effect = r.Effects[0].Op + " " + r.Effects[0].Path
		}
		if r.Event != audit.EventAfter || r.Via != "hook" || r.Tool != want.tool || r.Decision != audit.Decision(want.decision) || effect != want.effect {
			t.Errorf("line %d: %+v, want %+v", i+1, r, want)
		}
	}
	if recs[4].Event != "" {
		t.Errorf("a PreToolUse line is marked %q", recs[4].Event)
	}
	if r, err := audit.Verify(auditPath); err != nil || !r.OK {
		t.Errorf("verify: %+v %v", r, err)
	}
}

// A Bash call whose input names no working directory is refused: taking the
// vault root for it would judge every relative path from the wrong folder.
func TestHookBashWithoutCwd(t *testing.T) {
	g, p, v, _ := hookGate(t, "")
	for _, cwd := range []string{"", "notes"} {
		if got := hookCall(t, g, p, "sess-1", cwd, "Bash", map[string]any{"command": "cat ideas.md"}); !strings.Contains(got, `no absolute "cwd"`) {
			t.Errorf("cwd %q: %q, want a deny for the missing cwd", cwd, got)
		}
	}
	if got := hookCall(t, g, p, "sess-1", filepath.Join(v, "notes"), "Bash", map[string]any{"command": "cat ideas.md"}); got != "" {
		t.Errorf("with a cwd: denied: %s", got)
	}
}

// A path of Claude Code's tools starting with ~ is in Claude Code's home,
// the hook's HOME, as Claude Code expands it; ~user is a folder of that
// name below the session's folder, as Claude Code takes it; with no home
// known, ~ is refused rather than guessed.
func TestHookHome(t *testing.T) {
	g, p, v, _ := hookGate(t, "")
	for _, c := range []struct {
		home  string
		tool  string
		input map[string]any
		deny  string // "" = allowed
	}{
		{v, "Read", map[string]any{"file_path": "~/notes/ideas.md"}, ""},
		{v, "Read", map[string]any{"file_path": "~/notes/private/diary.md"}, "zone hidden"},
		{v, "Read", map[string]any{"file_path": " ~/notes/секреты/пароли.md\n"}, "zone hidden"}, // trimmed as Claude Code trims it
		{v, "Write", map[string]any{"file_path": "~/мета/x.md", "content": "x"}, "zone protected"},
		{v, "Glob", map[string]any{"pattern": "*.md", "path": "~/notes/projects"}, ""},
		{v, "Glob", map[string]any{"pattern": "*.md", "path": "~/notes"}, "hidden"},
		{v, "Grep", map[string]any{"pattern": "x", "path": "~"}, "hidden"},
		{"/home/claude", "Read", map[string]any{"file_path": "~/notes/ideas.md"}, "outside the vault"},
		{"", "Read", map[string]any{"file_path": "~/notes/ideas.md"}, "starts with ~"},
		{"notes", "Glob", map[string]any{"pattern": "*", "path": "~"}, "starts with ~"},
		// ~root is no one's home to Claude Code: a folder below notes
		{"", "Write", map[string]any{"file_path": "~root/x.md", "content": "x"}, ""},
		{"", "Read", map[string]any{"file_path": "~root/../private/diary.md"}, "zone hidden"},
		{"", "Glob", map[string]any{"pattern": "*", "path": "~root"}, ""},
	} {
		in := &claude.HookInput{SessionID: "s", Cwd: filepath.Join(v, "notes"), HookEventName: "PreToolUse", ToolName: c.tool, ToolInput: c.input}
		a, err := g.HookWith(context.Background(), p, in, HookOptions{Exec: testExec, Home: c.home})
		switch {
		case err != nil:
			t.Errorf("home %q, %s %v: %v", c.home, c.tool, c.input, err)
		case c.deny == "" && a.Deny != "":
			t.Errorf("home %q, %s %v: denied: %s", c.home, c.tool, c.input, a.Deny)
		case c.deny != "" && !strings.Contains(a.Deny, c.deny):
			t.Errorf("home %q, %s %v: %q, want a deny containing %q", c.home, c.tool, c.input, a.Deny, c.deny)
		}
	}
}
