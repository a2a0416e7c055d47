package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/vaultgate/vaultgate/audit"
)

// joinRecords are Claude Code's Bash as the hook and exec log it, with
// another session's call in between, its after line, and a Bash denied:
// three calls in six lines.
func joinRecords() []audit.Record {
	code := 0
	return []audit.Record{
		{ID: "h1", Session: "cc-9", Agent: "claude", Via: "hook", ToolUseID: "toolu_1", Tool: "Bash",
			Args: map[string]any{"command": "make notes"}, Effects: []audit.Effect{{Op: "exec", Path: "make"}}, Decision: "allow", Outcome: "ok"},
		{ID: "m1", Session: "s-mcp", Agent: "default", Via: "stdio", Tool: "read", Args: map[string]any{"path": "notes/a.md"},
			Effects: []audit.Effect{{Op: "read", Path: "notes/a.md", Zone: "edit"}}, Decision: "allow", Outcome: "ok"},
		{ID: "e1", Session: "cc-9", Agent: "claude", Via: "exec", Continues: "h1", Tool: "bash", Args: map[string]any{"command": "make notes"},
			Decision: "allow", Outcome: "ok", ExitCode: &code, Stdout: "made\n", Wall: []string{"landlock", "mount"},
			Real: []audit.RealEffect{{Op: "create", Path: "notes/made.md", Zone: "edit", Unpredicted: true, After: &audit.FileState{Mode: "-rw-r--r--", Size: 5}}}},
		{ID: "a1", Session: "cc-9", Agent: "claude", Via: "hook", Event: audit.EventAfter, ToolUseID: "toolu_1", Tool: "Bash", Decision: "allow", Outcome: "ok"},
		{ID: "h2", Session: "cc-9", Agent: "claude", Via: "hook", ToolUseID: "toolu_2", Tool: "Bash", Args: map[string]any{"command": "curl x"},
			Decision: "deny", Rule: "bash", Reason: "curl reaches the network"},
	}
}

// TestPanelJoinsACallInChromium: in a real headless Chromium, Claude
// Code's Bash is one row, whose record shows the judgement, the run and
// what it really changed; a run that comes while the page is open
// replaces its call's row instead of adding one.
func TestPanelJoinsACallInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	log, w := testLog(t, joinRecords()...)
	panel, err := New(Options{Log: log, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer panel.Close()
	var mu sync.Mutex
	var asked []string // the paths the page asked for
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		panel.ServeHTTP(w, r)
	}))
	defer func() { srv.CloseClientConnections(); srv.Close() }()

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true), chromedp.UserDataDir(filepath.Join(t.TempDir(), "chromium")),
		chromedp.WindowSize(1360, 860))
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var problems []string
	console := chromedp.Console(ctx)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == "error" || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for d, err := range dialogs {
			if err != nil {
				return
			}
			mu.Lock()
			problems = append(problems, "dialog: "+d.Message)
			mu.Unlock()
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
	waitJS := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("#calls")))
			t.Fatalf("%s: %v\n%s", what, err, html)
		}
	}
	rowsText := `[...document.querySelectorAll("#calls tbody tr")].map(r => r.innerText.replace(/\s+/g, " ")).join("\n")`

	err = chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/?since=all"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), testToken), chromedp.Click(chromedp.CSS("#login-form button[type=submit]")),
		chromedp.WaitVisible(chromedp.ID("panel")))
	if err != nil {
		t.Fatal(err)
	}
	// Six lines, three calls: one row each, and the counts say three.
	waitJS("three rows", `document.querySelectorAll("#calls tbody tr").length === 3`)
	waitJS("the counts", `document.getElementById("n-calls").textContent === "3"`)
	rows := strings.Split(eval(rowsText), "\n")
	if len(rows) != 3 || !strings.Contains(rows[2], "Bash") || !strings.Contains(rows[2], "$ make notes") ||
		!strings.Contains(rows[2], "ran through vaultgate exec: exit code 0") || !strings.Contains(rows[2], "real: 1 change") ||
		!strings.Contains(rows[2], "bash did what was not predicted") || strings.Contains(eval(rowsText), "after") {
		t.Errorf("rows, newest first:\n%s", strings.Join(rows, "\n"))
	}

	// Its record: the judgement, the run, what it really changed, both lines.
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	do("open the Bash", chromedp.Evaluate[chromedp.Void](`document.querySelector("#calls tbody tr:nth-child(3)").click()`))
	waitJS("the record", `!document.getElementById("detail").hidden`)
	if v := eval(`[document.getElementById("detail-judgement").hidden, document.getElementById("detail-run").hidden, document.getElementById("detail-after").hidden, document.getElementById("detail-real").hidden].join(",")`); v != "false,false,false,false" {
		t.Errorf("judgement, run, after, real hidden: %s", v)
	}
	judged, ranText := eval(`document.getElementById("detail-fields").innerText`), eval(`document.getElementById("detail-run-fields").innerText`)
	if !strings.Contains(judged, "hook") || !strings.Contains(judged, "toolu_1") || strings.Contains(judged, "landlock") {
		t.Errorf("the judgement:\n%s", judged)
	}
	if !strings.Contains(ranText, "exec") || !strings.Contains(ranText, "continues") || !strings.Contains(ranText, "landlock, mount") {
		t.Errorf("the run:\n%s", ranText)
	}
	if v := eval(`document.getElementById("detail-exit").textContent + " | " + document.querySelector("#detail-output pre").textContent`); v != "exit code 0 | made\n" {
		t.Errorf("exit and output: %q", v)
	}
	if v := eval(`document.querySelector("#detail-real-table tbody").innerText`); !strings.Contains(v, "notes/made.md") {
		t.Errorf("what it really changed: %q", v)
	}
	if v := eval(`document.getElementById("detail-raw-title").textContent + " " + (document.getElementById("detail-raw").textContent.match(/"seq"/g) || []).length`); v != "the lines 3" {
		t.Errorf("the lines: %q", v)
	}
	// What it changed is asked of the history under exec's id, the line
	// that made the change (this panel has no history: a 404).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		got := slices.Contains(asked, "/api/changes/e1")
		wrong := slices.Contains(asked, "/api/changes/h1")
		mu.Unlock()
		if got || wrong || time.Now().After(deadline) {
			if !got || wrong {
				t.Errorf("the page asked for the changes of e1 %v, of h1 %v", got, wrong)
			}
			break
		}
	}
	do("close", chromedp.KeyEvent("\x1b"))
	waitJS("the live stream", `document.getElementById("status").textContent === "live"`)

	// Live: the hook's line makes a row; exec's line, after another
	// call's, replaces it with the run in it, failed.
	code := 3
	write := func(r audit.Record) {
		t.Helper()
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	write(audit.Record{ID: "h3", Session: "cc-9", Agent: "claude", Via: "hook", ToolUseID: "toolu_3", Tool: "Bash",
		Args: map[string]any{"command": "make live"}, Decision: "allow", Outcome: "ok"})
	waitJS("the hook's line, live", `document.querySelectorAll("#calls tbody tr").length === 4 && document.querySelector("#calls tbody tr").innerText.includes("make live")`)
	write(audit.Record{ID: "m2", Session: "s-mcp", Agent: "default", Via: "stdio", Tool: "list", Decision: "allow", Outcome: "ok"})
	write(audit.Record{ID: "e3", Session: "cc-9", Agent: "claude", Via: "exec", Continues: "h3", Tool: "bash",
		Args: map[string]any{"command": "make live"}, Decision: "allow", Outcome: "failed", ExitCode: &code})
	waitJS("the run, live, in its call's row", `(() => { const rs = [...document.querySelectorAll("#calls tbody tr")];
		const r = rs.find(r => r.innerText.includes("make live"));
		return rs.length === 5 && r && r.classList.contains("failed") && r.innerText.includes("exit code 3") })()`)
	if n := strings.Count(eval(rowsText), "make live"); n != 1 {
		t.Errorf("the live call shows in %d rows", n)
	}
	waitJS("the counts follow", `document.getElementById("n-calls").textContent === "5" && document.getElementById("n-failed").textContent === "1"`)

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		if !strings.Contains(p, "404") { // the changes of e1, above
			t.Errorf("page problem: %s", p)
		}
	}
}
