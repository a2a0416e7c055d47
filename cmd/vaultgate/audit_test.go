package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
)

const (
	ansiName = "\x1b[32mallow\x1b[0m.md"
	htmlName = "<img src=x onerror=alert(1)>.md"
)

// gateCalls makes calls through the real gate over the sample vault, which
// holds two hostile file names in the protected zone, and returns the
// audit log they went to.
func gateCalls(t *testing.T, session string, calls ...[2]any) (cfgPath, logPath string) {
	t.Helper()
	return gateCallsWith(t, "", session, calls...)
}

// gateCallsWith is gateCalls with extra lines at the end of the config.
func gateCallsWith(t *testing.T, extra, session string, calls ...[2]any) (cfgPath, logPath string) {
	t.Helper()
	vault, cfgPath, logPath := sampleVault(t)
	if extra != "" {
		f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(extra)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{ansiName, htmlName} {
		if err := os.WriteFile(filepath.Join(vault, "мета", name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	g, err := server.OpenServer(cfg, io.Discard) // as serve opens it
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	p := cfg.Policy(config.DefaultAgent)
	c := server.Caller{Via: server.ViaStdio, Policy: p, Session: &policy.Session{ID: session, Agent: p.Name, State: policy.NewState()}}
	for _, call := range calls {
		g.Call(context.Background(), c, call[0].(string), call[1], server.Serve)
	}
	return cfgPath, logPath
}

func hostileCalls(t *testing.T) (cfgPath, logPath string) {
	return gateCalls(t, "sess-\x1b[2Jwipe",
		[2]any{"delete", map[string]any{"path": "мета/" + ansiName}},
		[2]any{"read", map[string]any{"path": "мета/" + htmlName}},
		[2]any{"delete", map[string]any{"path": "мета/" + htmlName}},
		[2]any{"list", map[string]any{"path": "notes"}},
		[2]any{"frobnicate\x1b[32m", map[string]any{}},
	)
}

func TestAuditTailEscapesAgentNames(t *testing.T) {
	cfg, logPath := hostileCalls(t)
	for _, src := range [][]string{{"--audit", logPath}, {"--config", cfg}} {
		out, errOut, code := runCLI(t, append([]string{"audit", "tail"}, src...)...)
		if code != exitOK {
			t.Fatalf("tail %v: exit %d: %s", src, code, errOut)
		}
		if strings.ContainsRune(out, 0x1b) {
			t.Errorf("tail printed a raw escape:\n%q", out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 5 {
			t.Fatalf("want 5 lines, got %d:\n%s", len(lines), out)
		}
		want := []string{
			`stdio sess-\x1b[2Jwipe  delete  DENY   delete мета/\x1b[32mallow\x1b[0m.md protected  [zones] delete "мета/\x1b[32mallow\x1b[0m.md": zone protected`,
			`read    allow  read мета/<img src=x onerror=alert(1)>.md protected`,
			`delete  DENY   delete мета/<img src=x onerror=alert(1)>.md protected  [zones]`,
			`list    allow  read notes edit`,
			`frobnicate\x1b[32m ERROR`,
		}
		for i, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d:\n got %s\nwant …%s…", i+1, lines[i], w)
			}
		}
	}
}

// TestAuditTailShowsTheAfterLine: the hook's line after Claude Code ran a
// tool is told apart from the decision before it.
func TestAuditTailShowsTheAfterLine(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(logPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"", audit.EventAfter} {
		if err := w.Write(&audit.Record{Via: "hook", Session: "s", Tool: "Write", Event: ev, Decision: "allow", Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	out, errOut, code := runCLI(t, "audit", "tail", "--audit", logPath)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "(after)") || !strings.Contains(lines[1], "Write (after) allow") {
		t.Fatalf("tail:\n%s", out)
	}
}

// A walled bash call's line shows what it really changed, marking what the
// analysis did not predict (*) and what the rules refused (!).
func TestAuditTailShowsRealEffects(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(logPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(&audit.Record{Via: "stdio", Session: "s", Tool: "bash", Decision: "allow", Outcome: "failed",
		Effects: []audit.Effect{{Op: "exec", Path: "python3"}},
		Real: []audit.RealEffect{{Op: "create", Path: "notes/n.md", Zone: "edit", Unpredicted: true},
			{Op: "modify", Path: "chats/old.md", Zone: "create", Unpredicted: true, Refused: true}}})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	out, errOut, code := runCLI(t, "audit", "tail", "--audit", logPath)
	if code != exitOK || !strings.Contains(out, "real: create notes/n.md edit*, modify chats/old.md create*!") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
}

func TestAuditTailFiltersAndJSON(t *testing.T) {
	_, logPath := hostileCalls(t)
	count := func(args ...string) int {
		t.Helper()
		out, errOut, code := runCLI(t, append([]string{"audit", "tail", "--audit", logPath}, args...)...)
		if code != exitOK {
			t.Fatalf("tail %v: exit %d: %s", args, code, errOut)
		}
		return strings.Count(out, "\n")
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{nil, 5},
		{[]string{"--decision", "deny"}, 2},
		{[]string{"--decision", "allow"}, 2},
		{[]string{"--tool", "delete"}, 2},
		{[]string{"--path", "<img"}, 2},
		{[]string{"--path", "notes"}, 1},
		{[]string{"--session", "sess-\x1b[2Jwipe"}, 5},
		{[]string{"--session", "other"}, 0},
		{[]string{"--since", "1h"}, 5},
		{[]string{"--since", time.Now().Add(time.Hour).Format(time.RFC3339)}, 0},
		{[]string{"-n", "2"}, 2},
		{[]string{"-n", "0"}, 0},
		{[]string{"--decision", "deny", "--tool", "delete", "--path", "allow"}, 1},
	} {
		if got := count(c.args...); got != c.want {
			t.Errorf("tail %q: %d lines, want %d", c.args, got, c.want)
		}
	}

	out, _, code := runCLI(t, "audit", "tail", "--audit", logPath, "--json", "--decision", "deny")
	if code != exitOK || strings.ContainsRune(out, 0x1b) {
		t.Fatalf("json: exit %d, %q", code, out)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	n := 0
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not JSON: %v: %s", err, sc.Text())
		}
		if r.Decision != "deny" || r.Rule != "zones" || r.Seq == 0 || r.Session != "sess-\x1b[2Jwipe" {
			t.Errorf("record %+v", r)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d JSON lines, want 2", n)
	}

	for _, bad := range [][]string{
		{"--decision", "maybe"}, {"--since", "yesterday"}, {"-n", "-1"}, {"--colour", "pink"}, {"extra"},
	} {
		if _, _, code := runCLI(t, append([]string{"audit", "tail", "--audit", logPath}, bad...)...); code != exitUsage {
			t.Errorf("tail %q: exit %d, want %d", bad, code, exitUsage)
		}
	}
}

func TestAuditTailColour(t *testing.T) {
	_, logPath := hostileCalls(t)
	out, _, _ := runCLI(t, "audit", "tail", "--audit", logPath, "--colour", "always")
	lines := strings.Split(out, "\n")
	// The deny is painted by us, and the agent's own escape is still
	// shown as text, not as a second colour.
	if !strings.Contains(lines[0], "\x1b[1;31mDENY \x1b[0m") || !strings.Contains(lines[0], `\x1b[32mallow`) {
		t.Errorf("colour line: %q", lines[0])
	}
	if strings.Contains(lines[0], "\x1b[32mallow") {
		t.Errorf("the file name's escape reached the terminal: %q", lines[0])
	}
}

func TestAuditStats(t *testing.T) {
	_, logPath := hostileCalls(t)
	out, errOut, code := runCLI(t, "audit", "stats", "--audit", logPath)
	if code != exitOK {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"calls:   5 (allow 2, deny 2, error 1;",
		"  zones                         2\n",
		"  delete                        2      2      0      0\n",
		`  sess-\x1b[2Jwipe              5      2      1      0`,
		`  frobnicate\x1b[32m            1      0      1      0`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("stats printed a raw escape: %q", out)
	}
	out, _, code = runCLI(t, "audit", "stats", "--audit", logPath, "--json", "--tool", "delete")
	var s audit.Stats
	if err := json.Unmarshal([]byte(out), &s); err != nil || code != exitOK {
		t.Fatalf("stats --json: %v %d %s", err, code, out)
	}
	if s.Calls != 2 || s.Denies != 2 || s.ByRule["zones"] != 2 || s.ByTool["delete"].Calls != 2 {
		t.Errorf("stats --json: %+v", s)
	}
}

func TestAuditVerify(t *testing.T) {
	_, logPath := hostileCalls(t)
	out, _, code := runCLI(t, "audit", "verify", "--audit", logPath)
	if code != exitOK || !strings.HasPrefix(out, "ok: 5 lines") {
		t.Errorf("verify clean: %d %q", code, out)
	}
	b, _ := os.ReadFile(logPath)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = strings.Replace(lines[2], `"decision":"deny"`, `"decision":"allow"`, 1)
	if err := os.WriteFile(logPath, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code = runCLI(t, "audit", "verify", "--audit", logPath)
	if code != exitDeny || !strings.Contains(out, "broken at line 3 ") {
		t.Errorf("verify edited: %d %q", code, out)
	}
	out, _, code = runCLI(t, "audit", "verify", "--audit", logPath, "--json")
	var rep audit.VerifyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitDeny || rep.OK || rep.FirstBad != 3 {
		t.Errorf("verify --json: %d %v %+v", code, err, rep)
	}
	if _, _, code := runCLI(t, "audit", "verify", "--audit", filepath.Join(t.TempDir(), "none.jsonl")); code != exitUsage {
		t.Errorf("verify missing log: exit %d, want 2", code)
	}
	if _, _, code := runCLI(t, "audit", "verify"); code != exitUsage {
		t.Errorf("verify without a log: exit %d, want 2", code)
	}
	if _, _, code := runCLI(t, "audit", "verify", "--audit", logPath, "--config", "x.toml"); code != exitUsage {
		t.Errorf("verify with both: exit %d, want 2", code)
	}
}

func TestAuditHelpAndUsage(t *testing.T) {
	for _, sub := range []string{"tail", "stats", "verify"} {
		out, _, code := runCLI(t, "audit", sub, "--help")
		if code != exitOK || !strings.HasPrefix(out, "usage: vaultgate audit "+sub) || !strings.Contains(out, "-audit") {
			t.Errorf("%s --help: %d\n%s", sub, code, out)
		}
		if sub == "verify" && strings.Contains(out, "-follow") {
			t.Errorf("verify --help lists tail's flags:\n%s", out)
		}
	}
	if out, _, code := runCLI(t, "audit", "--help"); code != exitOK || !strings.Contains(out, "tail ") {
		t.Errorf("audit --help: %d %s", code, out)
	}
	for _, args := range [][]string{{"audit"}, {"audit", "nope"}, {"audit", "verify", "--follow", "--audit", "x"}, {"audit", "stats", "-n", "3", "--audit", "x"}} {
		if _, _, code := runCLI(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}

// TestAuditTailFollow runs the built binary with -f and sees a call that
// is made after it started.
func TestAuditTailFollow(t *testing.T) {
	bin := binary(t)
	_, logPath := hostileCalls(t)
	cmd := exec.Command(bin, "audit", "tail", "-f", "-n", "1", "--decision", "deny", "--audit", logPath)
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdoutPipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("tail -f printed nothing in 10s")
		}
		return ""
	}
	if l := next(); !strings.Contains(l, "<img src=x") || !strings.Contains(l, "DENY") {
		t.Errorf("first line: %q", l)
	}
	w, err := audit.Open(logPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, d := range []string{"allow", "deny"} {
		r := &audit.Record{Session: "late", Via: "stdio", Tool: "delete", Decision: audit.Decision(d), Rule: "zones", Reason: "late\x1b[0m",
			Effects: []audit.Effect{{Op: "delete", Path: "мета/late.md", Zone: "protected"}}}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	l := next()
	if !strings.Contains(l, "late  delete  DENY   delete мета/late.md protected  [zones] late\\x1b[0m") {
		t.Errorf("followed line: %q", l)
	}
}

// TestAuditTailSaysWhyBashFailed runs failing bash commands through the
// real gate (a timeout, a non-zero exit) and reads tail's line for each:
// the command and why it failed are on the call's own line.
func TestAuditTailSaysWhyBashFailed(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep(1)")
	}
	_, logPath := gateCallsWith(t, "[bash]\nwall = \"off\"\n", "s-bash",
		[2]any{"bash", map[string]any{"command": "sleep 5", "timeout": 1}},
		[2]any{"bash", map[string]any{"command": "ls no-such-note.md"}},
		[2]any{"bash", map[string]any{"command": "echo fine"}},
	)
	out, errOut, code := runCLI(t, "audit", "tail", "--audit", logPath)
	if code != exitOK {
		t.Fatalf("tail: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got %d:\n%s", len(lines), out)
	}
	for i, want := range [][]string{
		{"bash    allow  $ sleep 5", "FAILED: timed out, exit code 124"},
		{"$ ls no-such-note.md", "FAILED: exit code 2"},
		{"$ echo fine"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d lacks %q:\n%s", i+1, w, lines[i])
			}
		}
	}
	if strings.Contains(lines[2], "FAILED") {
		t.Errorf("a command that exited 0 shows as failed: %s", lines[2])
	}
	// The record keeps the head of the output, and why it ended.
	recs, err := readRecords(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; !r.TimedOut || r.ExitCode == nil || *r.ExitCode != 124 {
		t.Errorf("the timeout's record: timed_out %v exit %v", r.TimedOut, r.ExitCode)
	}
	if r := recs[1]; !strings.Contains(r.Stderr, "no-such-note.md") {
		t.Errorf("the failed ls's stderr excerpt: %q", r.Stderr)
	}
	if r := recs[2]; r.Stdout != "fine\n" {
		t.Errorf("echo's stdout excerpt: %q", r.Stdout)
	}
}

func readRecords(path string) ([]audit.Record, error) {
	var recs []audit.Record
	err := audit.Read(path, func(r audit.Record) error { recs = append(recs, r); return nil })
	return recs, err
}

// TestAuditBeforeTheFirstCall: a vault whose log its first call has not
// made yet has no calls, which is not a mistake: tail, stats and verify
// say so and exit 0; a log --audit names that is not there is one.
func TestAuditBeforeTheFirstCall(t *testing.T) {
	_, cfg, auditPath := sampleVault(t)
	for _, sub := range []string{"tail", "stats", "verify"} {
		_, errOut, code := runCLI(t, "audit", sub, "--config", cfg)
		if code != exitOK || !strings.Contains(errOut, "no calls yet") {
			t.Errorf("audit %s before the first call: exit %d, %q", sub, code, errOut)
		}
		if _, errOut, code := runCLI(t, "audit", sub, "--audit", auditPath); code != exitUsage || !strings.Contains(errOut, "does not exist") {
			t.Errorf("audit %s --audit of a missing file: exit %d, %q", sub, code, errOut)
		}
	}
	out, _, _ := runCLI(t, "audit", "stats", "--config", cfg, "--json")
	if !strings.Contains(out, `"calls": 0`) {
		t.Errorf("stats --json before the first call: %s", out)
	}
}
