package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/admin"
	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
)

// joinT0 is when the calls of joinedLog were made.
var joinT0 = time.Now().Add(-time.Hour).Truncate(time.Second)

// joinedLog writes a log as Claude Code, the hook, exec and a server
// leave it: a Bash judged, run by exec and seen after; another session's
// call in between; a Bash denied; one whose run failed; an exec run by
// hand and one whose hook line is gone; a Write whose after line says it
// failed; a Bash allowed that never ran. Eight calls in thirteen lines.
func joinedLog(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	code := func(n int) *int { return &n }
	hook := func(id, use, command, decision string) audit.Record {
		return audit.Record{ID: id, Session: "cc-1", Agent: "claude", Via: "hook", ToolUseID: use, Tool: "Bash",
			Args: map[string]any{"command": command}, Effects: []audit.Effect{{Op: "exec", Path: strings.Fields(command)[0]}}, Decision: audit.Decision(decision), Outcome: "ok"}
	}
	run := func(id, session, continues, command string, exit int, real ...audit.RealEffect) audit.Record {
		outcome := "ok"
		if exit != 0 {
			outcome = "failed"
		}
		return audit.Record{ID: id, Session: session, Agent: "claude", Via: "exec", Continues: continues, Tool: "bash",
			Args: map[string]any{"command": command}, Decision: "allow", Outcome: audit.Outcome(outcome), ExitCode: code(exit), Real: real, Wall: []string{"landlock"}}
	}
	after := func(id, use, tool, outcome, errText string) audit.Record {
		return audit.Record{ID: id, Session: "cc-1", Agent: "claude", Via: "hook", Event: audit.EventAfter, ToolUseID: use, Tool: tool,
			Decision: "allow", Outcome: audit.Outcome(outcome), Error: errText}
	}
	denied := hook("h2", "toolu_2", "curl https://example.org", "deny")
	denied.Outcome, denied.Rule, denied.Reason = "", "bash", "curl reaches the network"
	recs := []audit.Record{
		hook("h1", "toolu_1", "make notes", "allow"),
		{ID: "m1", Session: "s-mcp", Agent: "default", Via: "stdio", Tool: "read", Args: map[string]any{"path": "notes/a.md"},
			Effects: []audit.Effect{{Op: "read", Path: "notes/a.md", Zone: "edit"}}, Decision: "allow", Outcome: "ok"},
		run("e1", "cc-1", "h1", "make notes", 0, audit.RealEffect{Op: "create", Path: "notes/made.md", Zone: "edit"}),
		after("a1", "toolu_1", "Bash", "ok", ""),
		denied,
		hook("h3", "toolu_3", "make broken", "allow"),
		run("e3", "cc-1", "h3", "make broken", 2),
		after("a3", "toolu_3", "Bash", "ok", ""),
		run("e4", "exec-by-hand", "", "ls", 0),
		run("e5", "cc-1", "rotated-away", "make again", 1),
		{ID: "w6", Session: "cc-1", Agent: "claude", Via: "hook", ToolUseID: "toolu_6", Tool: "Write", Args: map[string]any{"file_path": "/v/notes/w.md"},
			Effects: []audit.Effect{{Op: "create", Path: "notes/w.md", Zone: "edit"}}, Decision: "allow", Outcome: "ok"},
		after("a6", "toolu_6", "Write", "failed", "write failed"),
		hook("h7", "toolu_7", "make never", "allow"),
	}
	for i := range recs {
		recs[i].Time = joinT0.Add(time.Duration(i) * time.Second)
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// vg runs the built binary.
func vg(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runBin(t, binary(t), args...)
}

// TestAuditTailJoinsCalls: tail shows one call per agent call, its run
// indented under the hook's line; --json nests the lines; --lines shows
// them as written.
func TestAuditTailJoinsCalls(t *testing.T) {
	log := joinedLog(t)
	out, errOut, code := vg(t, "audit", "tail", "--audit", log)
	if code != 0 {
		t.Fatalf("tail: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := [][]string{
		{"hook  cc-1  Bash    allow  $ make notes"},
		{"  ↳ run  exec   exit 0  real: create notes/made.md edit"},
		{"stdio s-mcp  read    allow"},
		{"Bash    DENY   $ curl https://example.org", "[bash] curl reaches the network"},
		{"Bash    allow  $ make broken"},
		{"  ↳ run  exec   FAILED: exit code 2"},
		{"exec  exec-by-hand  bash    allow  $ ls"},
		{"exec  cc-1  bash    allow  $ make again", "FAILED: exit code 1"},
		{"hook  cc-1  Write   allow"},
		{"  ↳ after  hook   FAILED: write failed"},
		{"hook  cc-1  Bash    allow  $ make never"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, ws := range want {
		for _, w := range ws {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d lacks %q:\n%s", i+1, w, lines[i])
			}
		}
	}
	if strings.Contains(out, "(after)") || strings.Contains(out, " of ") {
		t.Errorf("a joined line shown on its own:\n%s", out)
	}
	// -n counts calls: the last two are the Write (with its after line)
	// and the Bash that never ran.
	if out, _, _ := vg(t, "audit", "tail", "--audit", log, "-n", "2"); strings.Count(out, "\n") != 3 || !strings.Contains(out, "Write") {
		t.Errorf("-n 2:\n%s", out)
	}
	// Filters take whole calls: the Bash whose run failed is failed.
	out, _, _ = vg(t, "audit", "tail", "--audit", log, "--decision", "failed")
	if got := strings.Count(out, "\n"); got != 5 || !strings.Contains(out, "make broken") || strings.Contains(out, "make notes") {
		t.Errorf("--decision failed: %d lines\n%s", got, out)
	}
	out, _, _ = vg(t, "audit", "tail", "--audit", log, "--path", "notes/made.md")
	if !strings.HasPrefix(strings.SplitN(out, "\n", 2)[0][19:], "  hook") || strings.Count(out, "\n") != 2 {
		t.Errorf("--path of what exec really changed finds the hook's call:\n%s", out)
	}

	out, _, code = vg(t, "audit", "tail", "--audit", log, "--json")
	var calls []audit.Call
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var c audit.Call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("not JSON: %v: %s", err, sc.Text())
		}
		calls = append(calls, c)
	}
	if code != 0 || len(calls) != 8 {
		t.Fatalf("--json: exit %d, %d calls", code, len(calls))
	}
	if c := calls[0]; c.ID != "h1" || c.Exec == nil || c.Exec.ID != "e1" || c.Exec.Continues != "h1" || c.After == nil || c.After.ID != "a1" ||
		len(c.Exec.Real) != 1 || c.Exec.Seq != 3 {
		t.Errorf("the joined call as JSON: %+v", c)
	}
	for _, c := range calls {
		if c.ID == "e1" || c.ID == "a1" {
			t.Errorf("a line of a call printed as a call: %s", c.ID)
		}
	}

	out, _, _ = vg(t, "audit", "tail", "--audit", log, "--lines")
	if strings.Count(out, "\n") != 13 || !strings.Contains(out, "Bash (after) allow") || strings.Contains(out, "↳") {
		t.Errorf("--lines:\n%s", out)
	}
	out, _, _ = vg(t, "audit", "tail", "--audit", log, "--lines", "--json", "-n", "3")
	var r audit.Record
	if first, _, _ := strings.Cut(out, "\n"); json.Unmarshal([]byte(first), &r) != nil || r.ID != "w6" || strings.Count(out, "\n") != 3 {
		t.Errorf("--lines --json:\n%s", out)
	}
}

// TestAuditStatsAgreesWithPanel: audit stats and the panel's API count
// the same calls on a log with joined pairs, execs on their own, a deny
// and after lines, filtered or not.
func TestAuditStatsAgreesWithPanel(t *testing.T) {
	log := joinedLog(t)
	p, err := admin.New(admin.Options{Log: log, Token: "correct-horse-battery-staple"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	api := func(path string, v any) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer correct-horse-battery-staple")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(b, v); err != nil || res.StatusCode != 200 {
			t.Fatalf("%s: %d %v %s", path, res.StatusCode, err, b)
		}
	}
	for _, c := range []struct {
		cli, query string
		calls      int
	}{
		{"", "", 8},
		{"--tool bash", "tool=bash", 6},
		{"--decision failed", "decision=failed", 3},
		{"--decision deny", "decision=deny", 1},
		{"--session cc-1", "session=cc-1", 6},
		{"--path notes/made.md", "path=notes/made.md", 1},
	} {
		out, errOut, code := vg(t, append([]string{"audit", "stats", "--json", "--audit", log}, strings.Fields(c.cli)...)...)
		var cli audit.Stats
		if err := json.Unmarshal([]byte(out), &cli); err != nil || code != 0 {
			t.Fatalf("stats %s: %d %v %s", c.cli, code, err, errOut)
		}
		var st admin.StatsPage
		var day admin.DayPage
		var recs admin.RecordsPage
		api("/api/stats?"+c.query, &st)
		api("/api/day?"+c.query, &day)
		api("/api/records?"+c.query, &recs)
		if cli.Calls != c.calls {
			t.Errorf("%q: audit stats counts %d calls, want %d", c.cli, cli.Calls, c.calls)
		}
		if st.Count != cli.Count || !reflect.DeepEqual(st.ByTool, cli.ByTool) || !reflect.DeepEqual(st.BySession, cli.BySession) ||
			!reflect.DeepEqual(st.ByAgent, cli.ByAgent) || !reflect.DeepEqual(st.ByRule, cli.ByRule) || !reflect.DeepEqual(st.ByDecision, cli.ByDecision) {
			t.Errorf("%q: the panel's /api/stats %+v %v, audit stats %+v %v", c.cli, st.Count, st.ByTool, cli.Count, cli.ByTool)
		}
		if day.Calls != cli.Calls || day.Denies != cli.Denies || day.Failed != cli.Failed || day.Errors != cli.Errors || recs.Matched != cli.Calls {
			t.Errorf("%q: the panel's day %+v and %d rows, audit stats %+v", c.cli, day.Counts, recs.Matched, cli.Count)
		}
	}
	// One joined call is one row, whose exec and after lines are in it.
	var recs admin.RecordsPage
	api("/api/records?order=first&limit=1", &recs)
	if r := recs.Records; len(r) != 1 || r[0].ID != "h1" || r[0].Exec == nil || r[0].Exec.ID != "e1" || r[0].After == nil || r[0].Changes != 1 {
		t.Errorf("the first row: %+v", r)
	}
}

// TestAuditTailFollowJoins follows the log with the built binary: a run
// is printed when its line comes, under its call when nothing came in
// between, else naming it; with --decision failed, a Bash whose run fails
// is printed whole when the run's line comes.
func TestAuditTailFollowJoins(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(log, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(rs ...audit.Record) {
		t.Helper()
		for i := range rs {
			if err := w.Write(&rs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	at := time.Date(2026, 5, 1, 9, 30, 12, 0, time.Local)
	hook := func(id, command string) audit.Record {
		return audit.Record{Time: at, ID: id, Session: "cc-f", Via: "hook", ToolUseID: "toolu_" + id, Tool: "Bash",
			Args: map[string]any{"command": command}, Decision: "allow", Outcome: "ok"}
	}
	run := func(id, continues string, exit int) audit.Record {
		r := audit.Record{Time: at, ID: id, Session: "cc-f", Via: "exec", Continues: continues, Tool: "bash", Decision: "allow",
			Outcome: "ok", ExitCode: &exit}
		if exit != 0 {
			r.Outcome = "failed"
		}
		return r
	}
	write(audit.Record{Session: "s0", Via: "stdio", Tool: "list", Decision: "allow", Outcome: "ok"})

	follow := func(args ...string) (next func() string, stop func()) {
		cmd := exec.Command(binary(t), append([]string{"audit", "tail", "-f", "-n", "0", "--audit", log}, args...)...)
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		time.Sleep(500 * time.Millisecond) // let it reach the end of the log
		return func() string {
				t.Helper()
				select {
				case l := <-lines:
					return l
				case <-time.After(10 * time.Second):
					t.Fatal("tail -f printed nothing in 10s")
				}
				return ""
			}, func() {
				cmd.Process.Kill()
				cmd.Wait()
			}
	}

	next, stop := follow()
	defer stop()
	write(hook("f1", "make one"), audit.Record{Session: "s0", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok"})
	if l := next(); !strings.Contains(l, "Bash    allow  $ make one") {
		t.Errorf("the hook's line: %q", l)
	}
	if l := next(); !strings.Contains(l, "s0  read") {
		t.Errorf("the read: %q", l)
	}
	write(run("r1", "f1", 0))
	if l, want := next(), "  ↳ run of Bash 09:30:12 cc-f  exec   exit 0"; l != want {
		t.Errorf("a run after another call:\n got %q\nwant %q", l, want)
	}
	write(hook("f2", "make two"), run("r2", "f2", 0))
	if l := next(); !strings.Contains(l, "$ make two") {
		t.Errorf("the second hook line: %q", l)
	}
	if l, want := next(), "  ↳ run  exec   exit 0"; l != want {
		t.Errorf("a run right under its call:\n got %q\nwant %q", l, want)
	}
	stop()

	next, stop = follow("--decision", "failed")
	defer stop()
	write(hook("f3", "make three"), audit.Record{Session: "s0", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok"}, run("r3", "f3", 2))
	if l := next(); !strings.Contains(l, "$ make three") {
		t.Errorf("the failed call, when its run came: %q", l)
	}
	if l, want := next(), "  ↳ run  exec   FAILED: exit code 2"; l != want {
		t.Errorf("its run:\n got %q\nwant %q", l, want)
	}
}

// TestHistoryShowsTheHookCall: a change an exec made, continuing the
// hook's Bash, is listed with the hook's call: its tool_use_id in the
// table, continues and tool_use_id in --json; another change is not.
func TestHistoryShowsTheHookCall(t *testing.T) {
	_, cfgPath, auditPath := sampleVault(t)
	w, err := audit.Open(auditPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(&audit.Record{ID: "hook-hist", Session: "cc-h", Agent: "default", Via: "hook", ToolUseID: "toolu_hist", Tool: "Bash",
		Args: map[string]any{"command": "echo x > notes/from-exec.md"}, Decision: "allow", Outcome: "ok"})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	g, err := server.OpenServer(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy(config.DefaultAgent)
	session := &policy.Session{ID: "cc-h", Agent: p.Name, State: policy.NewState()}
	for _, c := range []struct {
		caller server.Caller
		path   string
	}{
		{server.Caller{Via: server.ViaExec, Continues: "hook-hist", Policy: p, Session: session}, "from-exec.md"},
		{server.Caller{Via: server.ViaStdio, Policy: p, Session: session}, "from-mcp.md"},
	} {
		o := g.Call(context.Background(), c.caller, "write", map[string]any{"path": c.path, "content": "x\n"}, server.Serve)
		if o.Decision != server.Allow || o.Err != nil {
			t.Fatalf("write %s: %s %v", c.path, o.Decision, o.Err)
		}
	}
	g.Close()

	out, errOut, code := vg(t, "history", "--config", cfgPath)
	if code != 0 {
		t.Fatalf("history: %d %s", code, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, "from-exec.md") && !strings.Contains(l, "write (Bash toolu_hist)"):
			t.Errorf("the exec's change without its hook call: %s", l)
		case strings.Contains(l, "from-mcp.md") && strings.Contains(l, "(Bash"):
			t.Errorf("an MCP change with a hook call: %s", l)
		}
	}
	if !strings.Contains(out, "from-exec.md") || !strings.Contains(out, "from-mcp.md") {
		t.Fatalf("history:\n%s", out)
	}
	out, _, _ = vg(t, "history", "--config", cfgPath, "--json")
	n := 0
	for l := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		var e struct{ Path, Continues, ToolUseID, Via string }
		var raw map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil || json.Unmarshal([]byte(l), &raw) != nil {
			t.Fatalf("not JSON: %s", l)
		}
		e.ToolUseID, _ = raw["tool_use_id"].(string)
		switch e.Path {
		case "from-exec.md":
			n++
			if e.Continues != "hook-hist" || e.ToolUseID != "toolu_hist" || e.Via != "exec" {
				t.Errorf("the exec's entry: %s", l)
			}
		case "from-mcp.md":
			n++
			if e.Continues != "" || e.ToolUseID != "" {
				t.Errorf("the MCP entry: %s", l)
			}
		}
	}
	if n != 2 {
		t.Errorf("history --json:\n%s", out)
	}
}
