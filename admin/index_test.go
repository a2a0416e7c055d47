package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// lookRecords is a day of calls that need a look, and some that don't,
// as the writer writes them.
func lookRecords() []audit.Record {
	code := func(n int) *int { return &n }
	eff := func(op, p, z string) audit.Effect { return audit.Effect{Op: op, Path: p, Zone: z} }
	many := []audit.Effect{}
	for i := range ManyFiles {
		many = append(many, eff("create", fmt.Sprintf("notes/n%d.md", i), "edit"))
	}
	return []audit.Record{
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok",
			Args: map[string]any{"path": "notes/Plan.md"}, Effects: []audit.Effect{eff("read", "notes/Plan.md", "edit")}},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "write", Decision: "allow", Outcome: "ok",
			Args: map[string]any{"path": "notes/Plan.md", "content": audit.Body("x")}, Effects: []audit.Effect{eff("modify", "notes/Plan.md", "edit")}},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "delete", Decision: "deny", Rule: "zones", Reason: `delete "мета/план.md": zone protected`,
			Args: map[string]any{"path": "мета/план.md"}, Effects: []audit.Effect{eff("delete", "мета/план.md", "protected")}},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "bash", Decision: "allow", Outcome: "failed", ExitCode: code(124), TimedOut: true,
			Args: map[string]any{"command": "sleep 60 # \"quoted\" \x1b[2J"}, Effects: []audit.Effect{{Op: "exec", Path: "sleep"}}},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "bash", Decision: "allow", Outcome: "ok", ExitCode: code(0),
			Args: map[string]any{"command": "python3 tidy.py"}, Effects: []audit.Effect{{Op: "exec", Path: "python3"}},
			Real: []audit.RealEffect{{Op: "create", Path: "notes/tidy.md", Zone: "edit", Unpredicted: true, After: &audit.FileState{Mode: "-rw-r--r--", Size: 3, SHA256: "ab"}}}},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "bash", Decision: "allow", Outcome: "ok", ExitCode: code(0),
			Args: map[string]any{"command": "touch notes/n{0..4}.md"}, Effects: many},
		{Session: "cc-2", Agent: "claude", Via: "hook", Tool: "Bash", Decision: "deny", Rule: "bash", Reason: "curl reaches the network",
			Args: map[string]any{"command": "curl https://example.org", "description": "fetch"}, Effects: []audit.Effect{{Op: "exec", Path: "curl"}}},
		{Session: "cc-2", Agent: "claude", Via: "hook", ToolUseID: "toolu_07", Tool: "Write", Decision: "allow", Outcome: "ok",
			Args: map[string]any{"file_path": "/v/notes/<img src=x onerror=alert(1)>.md", "content": audit.Body("y")}, Effects: []audit.Effect{eff("create", "notes/<img src=x onerror=alert(1)>.md", "edit")}},
		{Session: "cc-2", Agent: "claude", Via: "hook", Event: audit.EventAfter, ToolUseID: "toolu_07", Tool: "Write", Decision: "allow", Outcome: "ok",
			Args: map[string]any{"file_path": "/v/notes/<img src=x onerror=alert(1)>.md", "content": audit.Body("y")}, Effects: []audit.Effect{eff("create", "notes/<img src=x onerror=alert(1)>.md", "edit")}},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "frob", Decision: "error", Error: "unknown tool \"frob\""},
		{Session: "s1", Agent: "default", Via: "stdio", Tool: "bash", Decision: "allow", Outcome: "failed", ExitCode: code(0), Rule: "zones",
			Error: "none of its changes were applied", Args: map[string]any{"command": "python3 fix.py"}, Effects: []audit.Effect{{Op: "exec", Path: "python3"}},
			Real: []audit.RealEffect{{Op: "modify", Path: "мета/план.md", Zone: "protected", Unpredicted: true, Refused: true}}},
	}
}

// TestScanLineAgreesWithJSON: the index's own reader and encoding/json
// derive the same from every line the writer writes.
func TestScanLineAgreesWithJSON(t *testing.T) {
	log, _ := testLog(t, lookRecords()...)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		fast, err := scanLine(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		var full audit.Record
		if err := json.Unmarshal(line, &full); err != nil {
			t.Fatal(err)
		}
		if f, w := derive(&fast), derive(&full); !reflect.DeepEqual(f, w) {
			t.Errorf("line %d:\nfast %+v\nfull %+v", i+1, f, w)
		}
		if fast.ToolUseID != full.ToolUseID || fast.Event != full.Event {
			t.Errorf("line %d: fast reads tool_use_id %q event %q, full %q %q", i+1, fast.ToolUseID, fast.Event, full.ToolUseID, full.Event)
		}
		// The lexer refuses what is not JSON, and then encoding/json says why.
		if _, err := scanLine(line[:len(line)-1]); err == nil {
			t.Errorf("line %d cut short was read", i+1)
		}
	}
}

func TestLookAndFilters(t *testing.T) {
	log, _ := testLog(t, lookRecords()...)
	srv := newPanel(t, log)
	page := func(q string) RecordsPage {
		t.Helper()
		res, body := get(t, srv.URL+"/api/records"+q, testToken)
		var p RecordsPage
		if err := json.Unmarshal([]byte(body), &p); err != nil || res.StatusCode != 200 {
			t.Fatalf("%q: %d %v %s", q, res.StatusCode, err, body)
		}
		return p
	}
	seqs := func(q string) string {
		t.Helper()
		var s []string
		for _, r := range page(q).Records {
			s = append(s, fmt.Sprint(r.Seq))
		}
		return strings.Join(s, ",")
	}
	for q, want := range map[string]string{
		"?look=deny":                "3,7",
		"?look=failed":              "4,10,11",
		"?look=unpredicted":         "5,11",
		"?look=many":                "6",
		"?look=delete":              "3",
		"?look=rule":                "11",
		"?look=any":                 "3,4,5,6,7,10,11",
		"?look=unpredicted,many":    "5,6,11",
		"?decision=failed":          "4,11",
		"?decision=error":           "10",
		"?tool=bash":                "4,5,6,7,11",
		"?tool=BASH&via=hook":       "7",
		"?agent=claude":             "7,8", // the Write's after line is part of its call
		"?q=план":                   "3,11",
		"?q=ПЛАН":                   "3,11",
		"?q=plan.md":                "1,2",
		"?q=curl+network":           "7",
		"?q=%3Cimg":                 "8",
		"?q=sleep":                  "4",
		"?q=frob":                   "10",
		"?path=notes/plan.md":       "1,2",
		"?session=cc-2&order=first": "7,8",
		"?session=nobody":           "",
		"?since=today":              "1,2,3,4,5,6,7,8,10,11",
		"?until=today":              "",
	} {
		if got := seqs(q); got != want {
			t.Errorf("%s: seqs %s, want %s", q, got, want)
		}
	}
	p := page("?decision=failed")
	if r := p.Records[0]; r.FailedWhy != "timed out, exit code 124" || strings.Join(r.Look, ",") != "failed" || p.Matched != 2 {
		t.Errorf("the timeout's row: %+v", r)
	}
	if r := p.Records[1]; strings.Join(r.Look, ",") != "failed,unpredicted,rule" || r.FailedWhy != "exit code 0, none of its changes were applied" {
		t.Errorf("the refused bash call's row: %+v", r)
	}
	if p := page("?limit=2"); p.Matched != 10 || len(p.Records) != 2 || p.Records[1].Seq != 11 {
		t.Errorf("limit 2: matched %d, %d records", p.Matched, len(p.Records))
	}
	for _, q := range []string{"?look=bad", "?decision=maybe", "?until=soon", "?order=random"} {
		if res, _ := get(t, srv.URL+"/api/records"+q, testToken); res.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", q, res.StatusCode)
		}
	}
}

func TestDay(t *testing.T) {
	log, w := testLog(t, lookRecords()...)
	srv := newPanel(t, log)
	day := func(q string) DayPage {
		t.Helper()
		_, body := get(t, srv.URL+"/api/day"+q, testToken)
		var d DayPage
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := day("?since=today")
	// Nine calls: the hook's after line is part of its call.
	if d.Calls != 10 || d.Denies != 2 || d.Failed != 2 || d.Errors != 1 || d.Changes != 4 || d.Look != 7 {
		t.Errorf("day counts: %+v", d.Counts)
	}
	if len(d.Agents) != 2 || d.Agents[0].Agent != "default" || d.Agents[0].Calls != 8 || d.Agents[1].Calls != 2 {
		t.Errorf("agents: %+v", d.Agents)
	}
	if len(d.Sessions) != 2 {
		t.Fatalf("sessions: %+v", d.Sessions)
	}
	// Newest first: cc-2 started after s1.
	cc, s1 := d.Sessions[0], d.Sessions[1]
	if cc.ID != "cc-2" || cc.Agent != "claude" || strings.Join(cc.Via, ",") != "hook" || cc.Calls != 2 || cc.Denies != 1 ||
		strings.Join(cc.Changed, ",") != "notes/<img src=x onerror=alert(1)>.md" {
		t.Errorf("session cc-2: %+v", cc)
	}
	if s1.ID != "s1" || s1.Calls != 8 || s1.Changes != 3 || s1.ChangedPaths != 3 ||
		strings.Join(s1.Changed, ",") != "notes/Plan.md,notes/tidy.md,notes/n0.md" || s1.End.Before(s1.Start) {
		t.Errorf("session s1: %+v", s1)
	}
	// The index follows the log: a new call shows on the next request.
	w.Write(&audit.Record{Session: "s3", Agent: "default", Via: "http", Tool: "read", Decision: "allow", Outcome: "ok"})
	if d := day(""); d.Calls != 11 || len(d.Sessions) != 3 || d.Sessions[0].ID != "s3" || d.LastSeq != 12 {
		t.Errorf("after one more call: %d calls, sessions %+v", d.Calls, d.Sessions)
	}
	if d := day("?until=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)); d.Calls != 0 || len(d.Sessions) != 0 {
		t.Errorf("an hour ago: %+v", d)
	}
}

// TestIndexAcrossRotations writes a log that rotates while the panel
// reads it: every record is indexed once, in order, and reads back.
func TestIndexAcrossRotations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, audit.Options{MaxSize: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ix := newIndex(path)
	n := 0
	write := func(k int) {
		for range k {
			n++
			if err := w.Write(&audit.Record{Session: "s", Tool: "read", Decision: "allow", Args: map[string]any{"path": fmt.Sprintf("notes/%d.md", n)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func() {
		t.Helper()
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if err := ix.refresh(); err != nil {
			t.Fatal(err)
		}
		if len(ix.entries) != n || ix.damaged != nil {
			t.Fatalf("indexed %d of %d (damaged %v)", len(ix.entries), n, ix.damaged)
		}
		for i := range ix.entries {
			e := &ix.entries[i]
			r, err := ix.record(e)
			if err != nil || e.seq != int64(i+1) || r.Seq != e.seq || r.Args["path"] != fmt.Sprintf("notes/%d.md", i+1) {
				t.Fatalf("entry %d: seq %d, record %+v, %v", i, e.seq, r, err)
			}
		}
	}
	write(3)
	check()
	write(20) // several rotations between two looks
	check()
	write(1)
	check()
	if files, _ := audit.Files(path); len(files) < 3 {
		t.Fatalf("the log did not rotate: %v", files)
	}
}

// TestIndexReportsADamagedLine: a line that is not a record is named, and
// the records around it are still there.
func TestIndexReportsADamagedLine(t *testing.T) {
	log, w := testLog(t, sampleRecords()[:2]...)
	w.Close()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.SplitAfter(b, []byte("\n"))[0]
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("{\"time\": not json\n"))
	f.Write(first)
	f.Write([]byte(`{"time":"2026-05-01T09:00:00Z","tool":"half`)) // being written: not yet a line
	f.Close()
	srv := newPanel(t, log)
	_, body := get(t, srv.URL+"/api/records", testToken)
	var p RecordsPage
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	if p.Matched != 3 || !strings.Contains(p.Damaged, log+":3:") {
		t.Errorf("matched %d, damaged %q", p.Matched, p.Damaged)
	}
}
