package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/vaultfs"
)

// testHistory is a vault and a history store in a state folder beside it.
type testHistory struct {
	vault string
	store *history.Store
}

func newTestHistory(t *testing.T) *testHistory {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	if err := os.MkdirAll(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	fsys, err := vaultfs.Open(vault)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	s, err := history.Open(history.Dir(filepath.Join(dir, "state")), fsys, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &testHistory{vault: vault, store: s}
}

// change records call id writing body to rel (before: what rel held, or
// absent when before is nil), as the file tools do.
func (h *testHistory) change(t *testing.T, id, rel string, before *string, body string) {
	t.Helper()
	p := filepath.Join(h.vault, rel)
	op := "create"
	if before != nil {
		op = "modify"
		if err := os.WriteFile(p, []byte(*before), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := h.store.Begin(id, history.Meta{Session: "s1", Tool: "write"}, []history.Target{{Op: history.Op(op), Path: rel}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
}

func changesPanel(t *testing.T, h *testHistory, config string) *httptest.Server {
	t.Helper()
	log, _ := testLog(t)
	p, err := New(Options{Log: log, Token: testToken, History: h.store.Dir(), Config: config})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv
}

func getChanges(t *testing.T, srv *httptest.Server, id string) ChangesPage {
	t.Helper()
	res, body := get(t, srv.URL+"/api/changes/"+id, testToken)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("changes %s: %d %s", id, res.StatusCode, body)
	}
	var page ChangesPage
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	return page
}

func TestChangesOfAWrite(t *testing.T) {
	h := newTestHistory(t)
	old := "# Plan\n- buy milk\n"
	h.change(t, "call-1", "plan.md", &old, "# Plan\n- buy oat milk\n")
	srv := changesPanel(t, h, "/etc/vault gate/policy.toml")

	page := getChanges(t, srv, "call-1")
	if len(page.Changes) != 1 {
		t.Fatalf("changes: %+v", page.Changes)
	}
	c := page.Changes[0]
	if c.Path != "plan.md" || c.Op != "modify" || c.Before.Size != int64(len(old)) || c.After.Size != 22 || !c.After.Exists {
		t.Errorf("change: %+v", c)
	}
	for _, line := range []string{"--- a/plan.md\n", "+++ b/plan.md\n", "-- buy milk\n", "+- buy oat milk\n"} {
		if !strings.Contains(c.Diff, line) {
			t.Errorf("diff lacks %q:\n%s", line, c.Diff)
		}
	}
	if want := "vaultgate undo --config '/etc/vault gate/policy.toml' call-1"; page.Undo != want {
		t.Errorf("undo line %q, want %q", page.Undo, want)
	}
	if page.Cut {
		t.Error("a short diff was cut")
	}
}

func TestChangesUndoLineWithoutConfig(t *testing.T) {
	h := newTestHistory(t)
	h.change(t, "call-1", "n.md", nil, "new\n")
	page := getChanges(t, changesPanel(t, h, ""), "call-1")
	if page.Undo != "vaultgate undo call-1" {
		t.Errorf("undo line %q", page.Undo)
	}
	if c := page.Changes[0]; c.Op != "create" || c.Before.Exists || !strings.Contains(c.Diff, "--- /dev/null\n") {
		t.Errorf("create: %+v", c)
	}
}

func TestChangesOfABinaryFile(t *testing.T) {
	h := newTestHistory(t)
	old := "\x00\x01\x02"
	h.change(t, "bin", "pic.png", &old, "\x00\x01\x02\x03")
	c := getChanges(t, changesPanel(t, h, ""), "bin").Changes[0]
	if c.Diff != "Binary file pic.png changed (3 bytes -> 4 bytes)\n" {
		t.Errorf("binary diff %q", c.Diff)
	}
}

func TestChangesHostileContentStaysText(t *testing.T) {
	h := newTestHistory(t)
	hostile := "<img src=x onerror=alert(1)></pre><script>alert(2)</script>\n"
	h.change(t, "evil", "n.md", nil, hostile)
	srv := changesPanel(t, h, "")
	res, body := get(t, srv.URL+"/api/changes/evil", testToken)
	if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if strings.ContainsAny(body, "<>") {
		t.Errorf("the answer carries raw markup: %s", body)
	}
	if c := getChanges(t, srv, "evil").Changes[0]; !strings.Contains(c.Diff, "+"+hostile) {
		t.Errorf("the hostile line is not in the diff as text: %q", c.Diff)
	}
}

func TestChangesCutsLongDiffs(t *testing.T) {
	h := newTestHistory(t)
	long := strings.Repeat("a line of a long note\n", 2*maxDiffText/20)
	h.change(t, "long", "long.md", nil, long)
	page := getChanges(t, changesPanel(t, h, ""), "long")
	d := page.Changes[0].Diff
	if !page.Cut || len(d) > maxDiffText+200 || !strings.HasSuffix(d, "vaultgate diff shows it whole\n") {
		t.Errorf("cut %v, %d bytes, ends %q", page.Cut, len(d), d[max(0, len(d)-120):])
	}
	for _, line := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
		if line != "+a line of a long note" && !strings.HasPrefix(line, "--- ") && !strings.HasPrefix(line, "+++ ") &&
			!strings.HasPrefix(line, "@@ ") && !strings.HasPrefix(line, "… cut") {
			t.Fatalf("a line cut in the middle: %q", line)
		}
	}
	var rest string
	rest, _ = cutText("more\n", 0, &page.Cut)
	if rest != "… not shown: the diff was cut above\n" {
		t.Errorf("a path past the budget: %q", rest)
	}
}

func TestChangesRefusals(t *testing.T) {
	h := newTestHistory(t)
	h.change(t, "call-1", "n.md", nil, "x\n")
	srv := changesPanel(t, h, "")
	for _, c := range []struct {
		name, path, token string
		code              int
	}{
		{"no token", "/api/changes/call-1", "", http.StatusUnauthorized},
		{"wrong token", "/api/changes/call-1", "wrong-token-of-some-length", http.StatusUnauthorized},
		{"unknown id", "/api/changes/no-such-call", testToken, http.StatusNotFound},
		{"dot dot", "/api/changes/..%2Fentries", testToken, http.StatusNotFound},
	} {
		res, body := get(t, srv.URL+c.path, c.token)
		if res.StatusCode != c.code {
			t.Errorf("%s: %d %s, want %d", c.name, res.StatusCode, body, c.code)
		}
		if c.code == http.StatusUnauthorized && strings.Contains(body, "x\\n") {
			t.Errorf("%s: the diff leaked: %s", c.name, body)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/api/changes/call-1", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", res.StatusCode)
	}
}

func TestChangesWithoutAStore(t *testing.T) {
	log, _ := testLog(t)
	for _, dir := range []string{"", filepath.Join(t.TempDir(), "history")} {
		p, err := New(Options{Log: log, Token: testToken, History: dir})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(p)
		res, body := get(t, srv.URL+"/api/changes/call-1", testToken)
		srv.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("history %q: %d %s", dir, res.StatusCode, body)
		}
		if _, err := os.Stat(dir); dir != "" && err == nil {
			t.Errorf("the panel created %s", dir)
		}
	}
}
