package admin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// TestScanLineReadsTheJoin: the index's reader reads what the join needs
// (id, continues, tool_use_id) as encoding/json does, on its fast path and
// on its fallback.
func TestScanLineReadsTheJoin(t *testing.T) {
	log, _ := testLog(t, joinRecords()...)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var full audit.Record
		var slim slimLine
		if err := json.Unmarshal(line, &full); err != nil || json.Unmarshal(line, &slim) != nil {
			t.Fatal(err)
		}
		fast, err := scanLine(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []audit.Record{fast, slim.record()} {
			if r.ID != full.ID || r.Continues != full.Continues || r.ToolUseID != full.ToolUseID || r.Session != full.Session || r.ID == "" {
				t.Errorf("line %d: read id %q continues %q tool_use_id %q, want %q %q %q", i+1, r.ID, r.Continues, r.ToolUseID, full.ID, full.Continues, full.ToolUseID)
			}
		}
	}
}

// TestIndexJoinsCalls: a call's exec and after lines are parts of its
// row; its summary is the whole call's; search finds it by any line.
func TestIndexJoinsCalls(t *testing.T) {
	code := 2
	recs := append(joinRecords(),
		// exec run by hand, and one whose hook line is not in the log
		audit.Record{ID: "e8", Session: "exec-x", Via: "exec", Tool: "bash", Args: map[string]any{"command": "ls"}, Decision: "allow", Outcome: "ok"},
		audit.Record{ID: "e9", Session: "cc-9", Via: "exec", Continues: "gone", Tool: "bash", Args: map[string]any{"command": "make gone"},
			Decision: "allow", Outcome: "failed", ExitCode: &code},
	)
	log, w := testLog(t, recs...)
	srv := newPanel(t, log)
	page := func(q string) RecordsPage {
		t.Helper()
		_, body := get(t, srv.URL+"/api/records?order=first&"+q, testToken)
		var p RecordsPage
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("%s: %v %s", q, err, body)
		}
		return p
	}
	ids := func(q string) string {
		t.Helper()
		var s []string
		for _, r := range page(q).Records {
			id := r.ID
			if r.Exec != nil {
				id += "+" + r.Exec.ID
			}
			if r.After != nil {
				id += "+" + r.After.ID
			}
			s = append(s, id)
		}
		return strings.Join(s, ",")
	}
	for q, want := range map[string]string{
		"":                    "h1+e1+a1,m1,h2,e8,e9",
		"q=notes/made.md":     "h1+e1+a1", // what exec really changed, found from the hook's call
		"q=landlock":          "",         // the wall is no search text
		"look=unpredicted":    "h1+e1+a1",
		"decision=failed":     "e9",
		"tool=bash":           "h1+e1+a1,h2,e8,e9",
		"via=exec":            "e8,e9", // a joined call is its judgement's: via hook
		"session=cc-9&q=make": "h1+e1+a1,e9",
	} {
		if got := ids(q); got != want {
			t.Errorf("%q: %s, want %s", q, got, want)
		}
	}
	r := page("").Records[0]
	if r.Changes != 1 || r.FailedWhy != "" || strings.Join(r.Look, ",") != "unpredicted" || r.Exec.Wall[0] != "landlock" || r.Exec.Stdout != "made\n" {
		t.Errorf("the joined row: %+v", r)
	}

	// A run that fails makes its call failed; its row stays one.
	w.Write(&audit.Record{ID: "h5", Session: "cc-9", Via: "hook", ToolUseID: "toolu_5", Tool: "Bash", Args: map[string]any{"command": "make five"}, Decision: "allow"})
	if got := ids("decision=failed"); got != "e9" {
		t.Errorf("before its run: failed %s", got)
	}
	w.Write(&audit.Record{ID: "e5", Session: "cc-9", Via: "exec", Continues: "h5", Tool: "bash", Decision: "allow", Outcome: "failed", ExitCode: &code})
	if got := ids("decision=failed"); got != "e9,h5+e5" {
		t.Errorf("after its run: failed %s", got)
	}
	if p := page("q=make+five"); p.Matched != 1 || p.Records[0].FailedWhy != "exit code 2" {
		t.Errorf("the failed call: %+v", p)
	}
}

// TestIndexKeptJoinsOn: a panel started on a kept index still joins an
// exec line to a hook line it indexed before the restart.
func TestIndexKeptJoinsOn(t *testing.T) {
	recs := joinRecords()
	log, w := testLog(t, recs...)
	w.Write(&audit.Record{ID: "h4", Session: "cc-9", Via: "hook", ToolUseID: "toolu_4", Tool: "Bash", Args: map[string]any{"command": "make four"}, Decision: "allow"})
	file := filepath.Join(t.TempDir(), "state", "panel", "index")
	p := startPanel(t, log, file)
	p.Close()
	w.Write(&audit.Record{ID: "e4", Session: "cc-9", Via: "exec", Continues: "h4", Tool: "bash", Decision: "allow", Outcome: "ok",
		Real: []audit.RealEffect{{Op: "modify", Path: "notes/four.md", Zone: "edit"}}})
	w.Write(&audit.Record{ID: "a4", Session: "cc-9", Via: "hook", Event: audit.EventAfter, ToolUseID: "toolu_4", Tool: "Bash", Decision: "allow", Outcome: "ok"})
	q := startPanel(t, log, file)
	defer q.Close()
	if q.ix.loadErr != nil || q.ix.scanned >= size(t, log) {
		t.Fatalf("the kept index was not taken: %v (read %d)", q.ix.loadErr, q.ix.scanned)
	}
	got, want := answers(t, q), fresh(t, log)
	sameAnswers(t, "a restart, then exec's line", got, want)
	var page RecordsPage
	json.Unmarshal([]byte(got[2]), &page)
	if n := len(page.Records); n != 4 || page.Records[n-1].ID != "h4" || page.Records[n-1].Exec == nil || page.Records[n-1].After == nil || page.Records[n-1].Changes != 1 {
		t.Errorf("after a restart: %d rows, the last %+v", n, page.Records[n-1])
	}
	// The entries, links and all, are a fresh index's.
	f := startPanel(t, log, "")
	defer f.Close()
	if !reflect.DeepEqual(q.ix.entries, f.ix.entries) {
		t.Error("the restarted index's entries differ from a fresh one's")
	}
}

// TestEventsJoin: the stream sends a call when its line comes, and again,
// whole, when a line joins it: the event's id is the line's seq, the
// data's seq the call's.
func TestEventsJoin(t *testing.T) {
	log, w := testLog(t, joinRecords()...)
	srv := newPanel(t, log)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events?session=cc-9&from=2", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	type event struct {
		id  string
		row Row
	}
	events := make(chan event)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var id string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				var r Row
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r); err != nil {
					t.Errorf("data: %v", err)
				}
				events <- event{id, r}
			}
		}
		close(events)
	}()
	next := func() event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return event{}
	}
	// From line 2 on: exec's line (3) and the after line (4) send the
	// call of line 1 again, as it stands; then the deny (5). The read (2)
	// is another session's.
	for _, want := range []string{"3 1 h1+e1+a1", "4 1 h1+e1+a1", "5 5 h2"} {
		e := next()
		got := e.id + " " + strconvI(e.row.Seq) + " " + e.row.ID
		if e.row.Exec != nil {
			got += "+" + e.row.Exec.ID
		}
		if e.row.After != nil {
			got += "+" + e.row.After.ID
		}
		if got != want {
			t.Errorf("event %q, want %q", got, want)
		}
	}
	code := 1
	w.Write(&audit.Record{ID: "h6", Session: "cc-9", Via: "hook", ToolUseID: "toolu_6", Tool: "Bash", Decision: "allow"})
	if e := next(); e.id != "6" || e.row.ID != "h6" || e.row.Exec != nil {
		t.Errorf("the live hook line: %s %+v", e.id, e.row)
	}
	w.Write(&audit.Record{ID: "e6", Session: "cc-9", Via: "exec", Continues: "h6", Tool: "bash", Decision: "allow", Outcome: "failed", ExitCode: &code})
	if e := next(); e.id != "7" || e.row.Seq != 6 || e.row.Exec == nil || e.row.FailedWhy != "exit code 1" {
		t.Errorf("the live run: %s %+v", e.id, e.row)
	}
}
