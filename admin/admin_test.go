package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

const testToken = "correct-horse-battery-staple"

// testLog writes records to a fresh log and returns its path and writer.
func testLog(t *testing.T, recs ...audit.Record) (string, *audit.Writer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return path, w
}

func sampleRecords() []audit.Record {
	eff := func(op, p, z string) []audit.Effect { return []audit.Effect{{Op: op, Path: p, Zone: z}} }
	return []audit.Record{
		{Session: "s1", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok", Effects: eff("read", "notes/a.md", "edit")},
		{Session: "s1", Via: "stdio", Tool: "delete", Decision: "deny", Rule: "zones", Reason: "no", Effects: eff("delete", "мета/x.md", "protected")},
		{Session: "s2", Via: "hook", Tool: "Write", Decision: "deny", Rule: "read_before_write", Reason: "unread", Effects: eff("modify", "notes/b.md", "edit")},
		{Session: "s2", Via: "stdio", Tool: "nope", Decision: "error", Error: "unknown tool"},
	}
}

func newPanel(t *testing.T, log string) *httptest.Server {
	t.Helper()
	p, err := New(Options{Log: log, Token: testToken, Heartbeat: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestNewRefusesWithoutToken(t *testing.T) {
	for _, tok := range []string{"", "short", " padded-token-of-length "} {
		if _, err := New(Options{Log: "x", Token: tok}); err == nil {
			t.Errorf("New with token %q started", tok)
		}
	}
	if _, err := New(Options{Token: testToken}); err == nil {
		t.Error("New without a log started")
	}
}

func TestAPINeedsToken(t *testing.T) {
	log, _ := testLog(t, sampleRecords()...)
	srv := newPanel(t, log)
	for _, path := range []string{"/api/records", "/api/stats", "/api/events", "/api/other", "/api/records?decision=deny"} {
		for _, auth := range []string{"", "Bearer wrong-token-but-long-enough", "Bearer " + testToken + "x", "Basic " + testToken, testToken, "Bearer"} {
			req, _ := http.NewRequest("GET", srv.URL+path, nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "мета") || strings.Contains(string(b), "s1") {
				t.Errorf("%s with %q: %d %s", path, auth, res.StatusCode, b)
			}
			if res.Header.Get("Content-Security-Policy") != CSP {
				t.Errorf("%s: a 401 without the CSP", path)
			}
		}
	}
	// The token in the query string is not a token.
	if res, _ := get(t, srv.URL+"/api/records?token="+testToken, ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("token in the query: %d", res.StatusCode)
	}
}

func TestHeadersAndReadOnly(t *testing.T) {
	log, _ := testLog(t, sampleRecords()...)
	srv := newPanel(t, log)
	for _, path := range []string{"/", "/app.js", "/app.css", "/favicon.svg", "/nope", "/api/records"} {
		res, _ := get(t, srv.URL+path, testToken)
		h := res.Header
		if h.Get("Content-Security-Policy") != CSP || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
		"connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("CSP lacks %s", want)
		}
	}
	if res, body := get(t, srv.URL+"/", ""); res.StatusCode != 200 || !strings.Contains(body, `<script src="app.js"`) {
		t.Errorf("page: %d", res.StatusCode)
	}
	if res, _ := get(t, srv.URL+"/app.js", ""); !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("app.js type %q", res.Header.Get("Content-Type"))
	}
	req, _ := http.NewRequest("HEAD", srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	client := &http.Client{Timeout: 5 * time.Second}
	if res, err := client.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("HEAD of the stream: %v", err)
	} else {
		res.Body.Close()
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		req, _ := http.NewRequest(m, srv.URL+"/api/records", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+testToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, res.StatusCode)
		}
	}
}

// TestPageInsertsNoMarkup keeps the script honest: no API that parses
// HTML, no inline script or style in the page, nothing fetched from
// elsewhere.
func TestPageInsertsNoMarkup(t *testing.T) {
	js, _ := webFiles.ReadFile("web/app.js")
	html, _ := webFiles.ReadFile("web/index.html")
	css, _ := webFiles.ReadFile("web/app.css")
	code := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAll(js, nil)
	for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "DOMParser", "createContextualFragment", "srcdoc"} {
		if strings.Contains(string(code), bad) {
			t.Errorf("app.js uses %s", bad)
		}
	}
	if regexp.MustCompile(`<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=`).Match(html) {
		t.Error("index.html has inline script, style or a handler")
	}
	for name, b := range map[string][]byte{"app.js": js, "index.html": html, "app.css": css} {
		if regexp.MustCompile(`https?://(?:[^w]|w[^w]|ww[^w])`).Match(regexp.MustCompile(`http://www\.w3\.org/2000/svg`).ReplaceAll(b, nil)) {
			t.Errorf("%s refers to another site", name)
		}
	}
}

func TestRecordsFilters(t *testing.T) {
	log, _ := testLog(t, sampleRecords()...)
	srv := newPanel(t, log)
	for q, want := range map[string]int{
		"":                               4,
		"?decision=deny":                 2,
		"?session=s2":                    2,
		"?tool=delete":                   1,
		"?path=%D0%BC%D0%B5%D1%82%D0%B0": 1,
		"?since=1h":                      4,
		"?since=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339): 0,
		"?limit=1":                  1,
		"?decision=deny&session=s1": 1,
	} {
		res, body := get(t, srv.URL+"/api/records"+q, testToken)
		var page RecordsPage
		if err := json.Unmarshal([]byte(body), &page); err != nil || res.StatusCode != 200 {
			t.Fatalf("%q: %d %v %s", q, res.StatusCode, err, body)
		}
		if len(page.Records) != want || page.LastSeq != 4 {
			t.Errorf("%q: %d records (last seq %d), want %d", q, len(page.Records), page.LastSeq, want)
		}
	}
	for _, q := range []string{"?decision=maybe", "?since=soon", "?limit=-1", "?limit=99999"} {
		if res, _ := get(t, srv.URL+"/api/records"+q, testToken); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %d, want 400", q, res.StatusCode)
		}
	}
	// A log not written yet is empty, not an error.
	empty := newPanel(t, filepath.Join(t.TempDir(), "none.jsonl"))
	if res, body := get(t, empty.URL+"/api/records", testToken); res.StatusCode != 200 || !strings.Contains(body, `"records":[]`) {
		t.Errorf("no log: %d %s", res.StatusCode, body)
	}
}

func TestStats(t *testing.T) {
	log, _ := testLog(t, sampleRecords()...)
	srv := newPanel(t, log)
	_, body := get(t, srv.URL+"/api/stats", testToken)
	var s StatsPage
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	if s.Calls != 4 || s.Denies != 2 || s.Errors != 1 || s.ByRule["zones"] != 1 || s.ByRule["read_before_write"] != 1 ||
		s.ByTool["delete"].Denies != 1 || s.BySession["s2"].Calls != 2 {
		t.Errorf("stats: %s", body)
	}
	calls, denies := 0, 0
	for _, b := range s.Series {
		calls += b.Calls
		denies += b.Denies
	}
	if calls != 4 || denies != 2 || s.BucketSeconds != 60 || len(s.Series) == 0 || len(s.Series) > maxBuckets {
		t.Errorf("series: %+v (bucket %ds)", s.Series, s.BucketSeconds)
	}
	_, body = get(t, srv.URL+"/api/stats?decision=deny", testToken)
	s = StatsPage{}
	json.Unmarshal([]byte(body), &s)
	if s.Calls != 2 || s.Denies != 2 {
		t.Errorf("stats deny: %s", body)
	}
}

func TestStatsBucketsSpanDays(t *testing.T) {
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var recs []audit.Record
	for i := range 10 {
		recs = append(recs, audit.Record{Time: base.Add(time.Duration(i) * 12 * time.Hour), Tool: "read", Decision: "allow"})
	}
	log, _ := testLog(t, recs...)
	srv := newPanel(t, log)
	_, body := get(t, srv.URL+"/api/stats", testToken)
	var s StatsPage
	json.Unmarshal([]byte(body), &s)
	if s.BucketSeconds != 6*3600 || len(s.Series) > maxBuckets || s.Series[0].Calls != 1 {
		t.Errorf("bucket %ds, %d buckets, first %+v", s.BucketSeconds, len(s.Series), s.Series[0])
	}
}

// TestEventsStream reads the stream the way the page does and sees records
// written after it started, filtered, with their seqs as ids.
func TestEventsStream(t *testing.T) {
	log, w := testLog(t, sampleRecords()...)
	srv := newPanel(t, log)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events?decision=deny&from=3", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	events := make(chan audit.Record)
	pings := make(chan struct{}, 100)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var id string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == ": ping":
				pings <- struct{}{}
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				var r audit.Record
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &r); err != nil {
					t.Errorf("data: %v", err)
				}
				if id == "" || id != strconvI(r.Seq) {
					t.Errorf("id %q for seq %d", id, r.Seq)
				}
				events <- r
			}
		}
		close(events)
	}()
	next := func() audit.Record {
		t.Helper()
		select {
		case r := <-events:
			return r
		case <-ctx.Done():
			t.Fatal("no event")
		}
		return audit.Record{}
	}
	if r := next(); r.Seq != 3 || r.Tool != "Write" {
		t.Errorf("caught up: %+v", r)
	}
	w.Write(&audit.Record{Tool: "read", Decision: "allow"})
	w.Write(&audit.Record{Tool: "move", Decision: "deny", Rule: "zones", Effects: []audit.Effect{{Op: "move-out", Path: "мета/a", Zone: "protected"}}})
	if r := next(); r.Seq != 6 || r.Tool != "move" || r.Effects[0].Zone != "protected" {
		t.Errorf("live: %+v", r)
	}
	select {
	case <-pings:
	case <-time.After(2 * time.Second):
		t.Error("no heartbeat")
	}
}

func strconvI(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestEmbeddedFilesExist(t *testing.T) {
	for _, f := range []string{"web/index.html", "web/app.js", "web/app.css", "web/favicon.svg"} {
		if _, err := webFiles.Open(f); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat("web/index.html"); err != nil {
		t.Error(err)
	}
}
