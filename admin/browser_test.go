package admin

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
)

const (
	ansiName = "\x1b[32mallow\x1b[0m.md"
	htmlName = "<img src=x onerror=alert(1)>.md"
)

// chromium finds the browser, or says how to get one: in CI a missing
// browser fails the test, elsewhere it skips it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium found: install it (apt-get install -y chromium) or set $CHROMIUM"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// gateVault is a real vault on disk behind the real gate, writing to log.
type gateVault struct {
	gate    *server.Gate
	caller  server.Caller
	config  string // the policy file
	history string // the history store the gate records into
}

func newGateVault(t *testing.T, log string) *gateVault {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	for _, f := range []string{"notes/today.md", "мета/" + ansiName, "мета/" + htmlName, "мета/план.md"} {
		p := filepath.Join(vault, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# note\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(dir, "vault.toml")
	body := fmt.Sprintf("vault = %q\n[audit]\npath = %q\n[zones]\nwrite = [\"notes\"]\nedit = [\".\"]\nprotected = [\"мета\"]\n[bash]\nwall = \"off\"\n", vault, log)
	if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// Opened as `vaultgate serve` opens it: the audit log, the history.
	g, err := server.OpenServer(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	p := cfg.Policy(config.DefaultAgent)
	return &gateVault{
		config:  cfgPath,
		history: history.Dir(cfg.StateDir),
		gate:    g,
		caller:  server.Caller{Via: server.ViaStdio, Policy: p, Session: &policy.Session{ID: "claude-7f3a", Agent: p.Name, State: policy.NewState()}},
	}
}

func (g *gateVault) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	o := g.gate.Call(context.Background(), g.caller, tool, args, server.Serve)
	return string(o.Decision)
}

// TestPanelInChromium drives the panel in a real headless Chromium: log in
// with the token, see a call denied by the gate appear live, filter, open
// its record; the hostile file names show as text and make no element.
func TestPanelInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	start := time.Now()
	log := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	g := newGateVault(t, log)
	// Calls made before the page is open.
	g.call(t, "list", map[string]any{"path": "notes"})
	g.call(t, "read", map[string]any{"path": "мета/" + htmlName})
	g.call(t, "read", map[string]any{"path": "мета/" + ansiName})
	g.call(t, "write", map[string]any{"path": "notes/ideas.md", "content": "- a panel\n"})
	if d := g.call(t, "delete", map[string]any{"path": "мета/план.md"}); d != "deny" {
		t.Fatalf("delete мета/план.md: %s", d)
	}

	panel, err := New(Options{Log: log, Token: testToken, History: g.history, Config: g.config})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(panel)
	defer func() { srv.CloseClientConnections(); srv.Close() }() // the live stream never ends by itself

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1360, 860),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	// Anything the page logs as an error (a CSP refusal, an exception)
	// and any dialog (an alert from an onerror) fails the test.
	var mu sync.Mutex
	var problems []string
	console := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == "error" || m.IsException() {
				mu.Lock()
				problems = append(problems, "console: "+m.String())
				mu.Unlock()
			}
		}
	}()
	go func() {
		for d, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			problems = append(problems, "dialog: "+d.Message)
			mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()

	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	rows := func() int {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#calls tbody tr").length`))
		return n
	}
	waitJS := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
			t.Fatalf("%s: %v\n%s", what, err, html)
		}
	}

	for i, step := range []chromedp.Action[chromedp.Void]{
		chromedp.EmulateViewport(1360, 860),
		chromedp.Navigate(srv.URL + "/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testToken),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")), // a click, so the page's submit handler runs
		chromedp.WaitVisible(chromedp.ID("panel")),
	} {
		if err := chromedp.Do(ctx, step); err != nil {
			t.Fatalf("login step %d: %v", i, err)
		}
	}
	waitJS("the log's five calls", `document.querySelectorAll("#calls tbody tr").length === 5`)
	waitJS("the live stream", `document.getElementById("status").textContent === "live"`)
	if stored := eval(`sessionStorage.getItem("vaultgate-admin-token")`); stored != testToken {
		t.Errorf("token in sessionStorage: %q", stored)
	}

	// A call the gate denies appears without a reload.
	if d := g.call(t, "delete", map[string]any{"path": "мета/" + htmlName}); d != "deny" {
		t.Fatalf("delete of the html-named file: %s", d)
	}
	waitJS("the denied call, live", `(() => { const r = document.querySelector("#calls tbody tr");
		return r && r.classList.contains("deny") && r.classList.contains("fresh") && r.textContent.includes("delete мета/<img src=x onerror=alert(1)>.md") })()`)
	if n := rows(); n != 6 {
		t.Errorf("%d rows after the live call, want 6", n)
	}
	waitJS("the counts follow", `document.getElementById("n-denies").textContent === "2"`)

	// The hostile names are text: no element came of them, the escape
	// shows as characters.
	imgs, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img, svg image, iframe, object, embed, script:not([src])").length`))
	text := eval(`document.body.innerText`)
	if imgs != 0 {
		t.Errorf("%d elements made from log text", imgs)
	}
	for _, want := range []string{htmlName, `мета/\x1b[32mallow\x1b[0m.md`} {
		if !strings.Contains(text, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	if strings.ContainsRune(text, 0x1b) {
		t.Error("a raw escape reached the page")
	}

	// Filter to the denies, then to one tool and path.
	chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("f-decision"), "deny"), chromedp.Click(chromedp.ID("f-apply")))
	waitJS("filter deny", `(() => { const rs = [...document.querySelectorAll("#calls tbody tr")];
		return rs.length === 2 && rs.every(r => r.classList.contains("deny")) })()`)
	chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("f-path"), "<img"), chromedp.Click(chromedp.ID("f-apply")))
	waitJS("filter deny and path", `document.querySelectorAll("#calls tbody tr").length === 1`)
	waitJS("the live stream, filtered", `document.getElementById("status").textContent === "live"`)
	// A new call that does not match the filter stays out of the list.
	g.call(t, "read", map[string]any{"path": "notes/today.md"})
	g.call(t, "delete", map[string]any{"path": "мета/" + ansiName})
	time.Sleep(500 * time.Millisecond)
	if n := rows(); n != 1 {
		t.Errorf("%d rows under the filter after more calls, want 1", n)
	}

	// Open the record.
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#calls tbody tr")))
	waitJS("the record", `!document.getElementById("detail").hidden`)
	effects := eval(`[...document.querySelectorAll("#detail-effects tbody tr")].map(r => [...r.cells].map(c => c.textContent).join(" | ")).join("\n")`)
	fields := eval(`document.getElementById("detail-fields").innerText`)
	raw := eval(`document.getElementById("detail-raw").textContent`)
	if effects != "delete | мета/"+htmlName+" | protected" {
		t.Errorf("record effects: %q", effects)
	}
	for _, want := range []string{"zones", "claude-7f3a", "Deleting is allowed in", "seq"} {
		if !strings.Contains(fields, want) {
			t.Errorf("record fields lack %q:\n%s", want, fields)
		}
	}
	if !strings.Contains(raw, `"prev"`) || !strings.Contains(raw, htmlName) {
		t.Errorf("record line: %s", raw)
	}
	imgs, _ = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img").length`))
	if imgs != 0 {
		t.Errorf("%d img elements after opening the record", imgs)
	}
	// A denied call changed nothing: its record has no diff.
	if eval(`String(document.getElementById("detail-changes").hidden)`) != "true" {
		t.Error("a denied call's record shows a diff")
	}

	// A write's record shows its diff, hostile content as text, and the
	// undo line with the config.
	chromedp.Do(ctx, chromedp.Click(chromedp.ID("f-clear")))
	waitJS("filters cleared", `document.querySelectorAll("#calls tbody tr").length === 8`)
	waitJS("the live stream, unfiltered", `document.getElementById("status").textContent === "live"`)
	hostile := "<img src=x onerror=alert(3)>"
	if d := g.call(t, "write", map[string]any{"path": "notes/hostile.md", "content": "# hostile\n" + hostile + "\n"}); d != "allow" {
		t.Fatalf("write notes/hostile.md: %s", d)
	}
	waitJS("the write, live", `(() => { const r = document.querySelector("#calls tbody tr");
		return r && r.textContent.includes("notes/hostile.md") })()`)
	chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#calls tbody tr")))
	waitJS("the write's diff", `!document.getElementById("detail-changes").hidden`)
	added := eval(`[...document.querySelectorAll("#detail-diffs pre.diff .line.add")].map(l => l.textContent).join("")`)
	if added != "+# hostile\n+"+hostile+"\n" {
		t.Errorf("added lines: %q", added)
	}
	if files := eval(`[...document.querySelectorAll("#detail-diffs .line.file")].map(l => l.textContent).join("")`); files != "--- /dev/null\n+++ b/notes/hostile.md\n" {
		t.Errorf("file lines: %q", files)
	}
	id := eval(`document.getElementById("detail-fields").querySelector("dt + dd:nth-of-type(2)").textContent`)
	undo := eval(`document.getElementById("detail-undo").textContent`)
	if want := "vaultgate undo --config " + shellQuote(g.config) + " " + id; undo != want || id == "" {
		t.Errorf("undo line %q, want %q", undo, want)
	}
	imgs, _ = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("img, script:not([src])").length`))
	if imgs != 0 {
		t.Errorf("%d elements made from the file's content", imgs)
	}
	chromedp.Do(ctx, chromedp.Click(chromedp.ID("detail-copy")))
	waitJS("copied or selected", `["copied", "selected: copy it"].includes(document.getElementById("detail-copy").textContent)`)
	if sel := eval(`document.getElementById("detail-copy").textContent === "copied" ? "" : String(window.getSelection())`); sel != "" && sel != undo {
		t.Errorf("selected %q, want the undo line", sel)
	}

	// A wrong token is asked for again and shows nothing.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem("vaultgate-admin-token", "wrong-token-but-long-enough")`),
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.ID("login")),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS("refused", `document.getElementById("login-error").textContent.includes("refused") && document.querySelectorAll("#calls tbody tr").length === 0`)

	mu.Lock()
	defer mu.Unlock()
	// A refused token is a 401 the browser logs: that one is expected.
	for _, p := range problems {
		if !strings.Contains(p, "401") {
			t.Errorf("page problem: %s", p)
		}
	}
	t.Logf("Chromium test took %v", time.Since(start).Round(time.Millisecond))
}
