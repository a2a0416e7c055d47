package admin

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/vaultid"
)

// twoVaults is a state folder that vault a and, once added, vault b
// share, as configs written by an older init share one: one audit log, one
// history.
type twoVaults struct {
	state, a, b string
	idA         string
}

func newTwoVaults(t *testing.T) *twoVaults {
	t.Helper()
	dir := t.TempDir()
	v := &twoVaults{state: filepath.Join(dir, "state"), a: filepath.Join(dir, "a"), b: filepath.Join(dir, "b")}
	for _, p := range []string{v.a, v.b} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if v.idA, err = vaultid.Open(v.state, v.a); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *twoVaults) addB(t *testing.T) string {
	t.Helper()
	id, err := vaultid.Open(v.state, v.b)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (v *twoVaults) scope() func() (vaultid.Scope, error) {
	return func() (vaultid.Scope, error) { return vaultid.ScopeOf(v.state, v.idA) }
}

func vaultRecords(idA, idB string) []audit.Record {
	eff := func(op, p string) []audit.Effect { return []audit.Effect{{Op: op, Path: p, Zone: "write"}} }
	return []audit.Record{
		{ID: "call-a", Vault: idA, Session: "sess-a", Agent: "agent-a", Via: "stdio", Tool: "write", Decision: "allow", Outcome: "ok", Effects: eff("create", "notes/a-own.md")},
		{ID: "call-b", Vault: idB, Session: "sess-b", Agent: "agent-b", Via: "stdio", Tool: "delete", Decision: "allow", Outcome: "ok", Effects: eff("delete", "notes/b-secret.md")},
		{ID: "call-old", Session: "sess-old", Agent: "agent-old", Via: "stdio", Tool: "write", Decision: "deny", Rule: "zones", Effects: eff("modify", "notes/old.md")},
	}
}

func ask(t *testing.T, p http.Handler, u string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// shows checks that every answer of the page holds what it must and none
// of what it must not.
func shows(t *testing.T, what string, p http.Handler, want, not []string) {
	t.Helper()
	for _, u := range []string{"/api/records", "/api/records?order=first", "/api/day", "/api/stats", "/api/records?q=notes"} {
		code, body := ask(t, p, u)
		if code != http.StatusOK {
			t.Fatalf("%s: %s: %d %s", what, u, code, body)
		}
		for _, w := range want {
			if u != "/api/stats" && !strings.Contains(body, w) {
				t.Errorf("%s: %s does not show %q: %s", what, u, w, body)
			}
		}
		for _, n := range not {
			if strings.Contains(body, n) {
				t.Errorf("%s: %s shows %q: %s", what, u, n, body)
			}
		}
	}
}

// TestPanelShowsItsVaultAlone: with a scope, the panel shows the lines of
// its vault; another vault's never; lines that name no vault while the
// state folder serves this vault alone, and no longer once it serves two,
// asked again at each request. Kept and reloaded, the index still knows
// each line's vault.
func TestPanelShowsItsVaultAlone(t *testing.T) {
	v := newTwoVaults(t)
	idB := "fedcba9876543210" // not yet in the registry
	log, _ := testLog(t, vaultRecords(v.idA, idB)...)
	indexFile := filepath.Join(v.state, "panel", "index")
	p, err := New(Options{Log: log, Token: testToken, Index: indexFile, Scope: v.scope()})
	if err != nil {
		t.Fatal(err)
	}
	shows(t, "one vault", p, []string{"sess-a", "sess-old"}, []string{"sess-b", "b-secret", "agent-b"})
	code, body := ask(t, p, "/api/stats")
	var st StatsPage
	if err := json.Unmarshal([]byte(body), &st); code != http.StatusOK || err != nil || st.Calls != 2 {
		t.Fatalf("stats, one vault: %d %s (%v)", code, body, err)
	}

	idB = v.addB(t)
	if idB == v.idA {
		t.Fatal("two vaults, one id")
	}
	shows(t, "two vaults", p, []string{"sess-a"}, []string{"sess-b", "b-secret", "sess-old", "old.md"})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart takes the kept index; it must still tell the vaults apart.
	p2, err := New(Options{Log: log, Token: testToken, Index: indexFile, Scope: v.scope()})
	if err != nil {
		t.Fatal(err)
	}
	<-p2.started
	if p2.ix.loadErr != nil {
		t.Fatalf("the kept index was not taken: %v", p2.ix.loadErr)
	}
	shows(t, "reloaded", p2, []string{"sess-a"}, []string{"sess-b", "b-secret", "sess-old"})
	p2.Close()

	// Without a scope (a log given without its config), every line.
	p3, err := New(Options{Log: log, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer p3.Close()
	shows(t, "no scope", p3, []string{"sess-a", "sess-b", "sess-old"}, nil)

	// A registry that can't be read answers with an error, never with
	// every line.
	if err := os.WriteFile(filepath.Join(v.state, vaultid.FileName), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/api/records", "/api/day", "/api/stats", "/api/events"} {
		if code, body := ask(t, p2, u); code != http.StatusInternalServerError || strings.Contains(body, "sess") {
			t.Errorf("%s with a damaged registry: %d %s", u, code, body)
		}
	}
}

// TestScanLineReadsTheVault: the index's fast reader and encoding/json
// agree on a line's vault.
func TestScanLineReadsTheVault(t *testing.T) {
	log, _ := testLog(t, vaultRecords("0123456789abcdef", "fedcba9876543210")...)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0123456789abcdef", "fedcba9876543210", ""}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fast, err := scanLine([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		var slim slimLine
		if err := json.Unmarshal([]byte(line), &slim); err != nil {
			t.Fatal(err)
		}
		if fast.Vault != want[i] || slim.record().Vault != want[i] || derive(&fast).vault != want[i] {
			t.Errorf("line %d: fast %q, slim %q, want %q", i+1, fast.Vault, slim.record().Vault, want[i])
		}
	}
}

// TestEventsShowItsVaultAlone: the live stream sends this vault's lines,
// never another's.
func TestEventsShowItsVaultAlone(t *testing.T) {
	v := newTwoVaults(t)
	idB := v.addB(t)
	log, w := testLog(t, vaultRecords(v.idA, idB)...)
	p, err := New(Options{Log: log, Token: testToken, Scope: v.scope(), Heartbeat: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events?from=1", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	w.Write(&audit.Record{ID: "call-b2", Vault: idB, Session: "sess-b", Tool: "read", Decision: "allow"})
	w.Write(&audit.Record{ID: "call-a2", Vault: v.idA, Session: "sess-a", Tool: "read", Decision: "allow"})
	var got []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ID)
		if r.ID == "call-a2" {
			break
		}
	}
	if strings.Join(got, " ") != "call-a call-a2" {
		t.Errorf("the stream sent %v, want call-a call-a2", got)
	}
}

// TestChangesOfAnotherVaultRefused: the panel shows the diff of its
// vault's call, and refuses another vault's and, in a shared state
// folder, one that names no vault.
func TestChangesOfAnotherVaultRefused(t *testing.T) {
	v := newTwoVaults(t)
	idB := v.addB(t)
	fsys, err := vaultfs.Open(v.a)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	store, err := history.Open(history.Dir(v.state), fsys, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, c := range []struct{ id, vault string }{{"call-a", v.idA}, {"call-b", idB}, {"call-old", ""}} {
		ch, err := store.Begin(c.id, history.Meta{Tool: "write", Vault: c.vault}, []history.Target{{Op: "create", Path: c.id + ".md"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(v.a, c.id+".md"), []byte(c.id+" body\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := ch.Done(); err != nil {
			t.Fatal(err)
		}
	}
	log, _ := testLog(t)
	p, err := New(Options{Log: log, Token: testToken, History: store.Dir(), Scope: v.scope()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if code, body := ask(t, p, "/api/changes/call-a"); code != http.StatusOK || !strings.Contains(body, "call-a body") {
		t.Errorf("own call: %d %s", code, body)
	}
	for _, c := range []struct{ id, says string }{{"call-b", "another vault"}, {"call-old", "names no vault"}} {
		code, body := ask(t, p, "/api/changes/"+c.id)
		if code != http.StatusNotFound || strings.Contains(body, c.id+" body") || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d %s", c.id, code, body)
		}
	}
}
