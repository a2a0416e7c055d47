package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
)

// buildVaultgate builds the vaultgate command into a temp folder.
func buildVaultgate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vaultgate")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/vaultgate").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// scriptedSession is a person's morning: an agent works in the vault
// over MCP (the built binary's serve, over stdio) and Claude Code's own
// tools go through the built binary's hook. It returns the config, and
// the agent's MCP session id as the log has it.
func scriptedSession(t *testing.T, bin string) (cfgPath string) {
	t.Helper()
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	for f, body := range map[string]string{
		"notes/today.md": "# Today\n\n- read the audit\n",
		"notes/plan.md":  "# Plan\n\n- one\n- two\n",
		"мета/план.md":   "# кто что делает\n",
		"мета/weekly.md": "# weekly\n",
		"notes/inbox.md": "# Inbox\n",
		"notes/old/a.md": "old\n",
		"notes/old/b.md": "old\n",
	} {
		p := filepath.Join(vault, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath = filepath.Join(dir, "vault.toml")
	cfg := fmt.Sprintf(`vault = %q
[audit]
path = "state/audit.jsonl"
[zones]
write = ["notes"]
edit = ["."]
protected = ["мета"]
[bash]
wall = "off"
`, vault)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	c, err := client.NewStdioMCPClient(bin, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, "serve", "--config", cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "panel-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args map[string]any, wantErr bool) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if res.IsError != wantErr {
			var b strings.Builder
			for _, ct := range res.Content {
				b.WriteString(mcp.GetTextFromContent(ct))
			}
			t.Fatalf("%s %v: error %v, want %v: %s", tool, args, res.IsError, wantErr, b.String())
		}
	}
	call("read", map[string]any{"path": "notes/plan.md"}, false)
	call("edit", map[string]any{"path": "notes/plan.md", "old_string": "- two\n", "new_string": "- two\n- panel: a day at a glance\n"}, false)
	call("write", map[string]any{"path": "notes/ideas.md", "content": "# Ideas\n\n- the failed filter\n- search by path\n"}, false)
	call("delete", map[string]any{"path": "мета/план.md"}, true)
	call("bash", map[string]any{"command": "sleep 5", "timeout": 1}, true)
	call("bash", map[string]any{"command": "ls notes"}, false)
	call("delete", map[string]any{"path": "notes/old", "recursive": true}, false)
	c.Close()

	hook := func(tool string, input map[string]any) string {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"session_id": "cc-5e1f", "cwd": vault, "hook_event_name": "PreToolUse",
			"tool_name": tool, "tool_input": input, "transcript_path": filepath.Join(dir, "t.jsonl"), "permission_mode": "bypassPermissions"})
		cmd := exec.Command(bin, "hook", "--config", cfgPath)
		cmd.Stdin = bytes.NewReader(b)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("hook %s: %v", tool, err)
		}
		return string(out)
	}
	if out := hook("Read", map[string]any{"file_path": filepath.Join(vault, "notes/today.md")}); !strings.Contains(out, `"permissionDecision":"allow"`) {
		t.Fatalf("hook Read: %q", out)
	}
	if out := hook("Write", map[string]any{"file_path": filepath.Join(vault, "мета/weekly.md"), "content": "# weekly\nrewritten\n"}); !strings.Contains(out, `"deny"`) {
		t.Fatalf("hook Write into мета: %q", out)
	}
	if out := hook("Bash", map[string]any{"command": "node -e 1", "description": "run a script"}); !strings.Contains(out, `"deny"`) {
		t.Fatalf("hook Bash node: %q", out)
	}
	return cfgPath
}

// browser starts a headless Chromium; problems returns what the page
// logged as an error and any dialog it opened.
func browser(t *testing.T, bin string) (ctx context.Context, problems func() []string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1360, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(cancelCtx)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	var mu sync.Mutex
	var seen []string
	console := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == "error" || m.IsException() {
				mu.Lock()
				seen = append(seen, "console: "+m.String())
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
			seen = append(seen, "dialog: "+d.Message)
			mu.Unlock()
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// TestPersonsDayInChromium drives a scripted session through the built
// binary (MCP tools and the hook), then reads the panel in a real headless
// Chromium the way a person would: the day, a session, a write's diff,
// search, the failed filter, a phone's width. With
// VAULTGATE_SCREENSHOTS=DIR it saves docs/audit.md's screenshots there.
func TestPersonsDayInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a browser")
	}
	chrome := chromium(t)
	bin := buildVaultgate(t)
	cfgPath := scriptedSession(t, bin)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	panel, err := New(Options{Log: cfg.AuditPath, Token: testToken, History: history.Dir(cfg.StateDir), Config: cfgPath})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(panel)
	defer func() { srv.CloseClientConnections(); srv.Close() }() // the live stream never ends by itself

	ctx, problems := browser(t, chrome)
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
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v\n%s", what, err, text)
		}
	}
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	shots := os.Getenv("VAULTGATE_SCREENSHOTS")
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rowsText := `[...document.querySelectorAll("#calls tbody tr")].map(r => r.innerText.replace(/\s+/g, " ")).join("\n")`

	do("log in", chromedp.EmulateViewport(1360, 900), chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), testToken),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("panel")))

	// The day: two sessions, newest first (the hook's), with their counts.
	waitJS("the day's sessions", `document.querySelectorAll("#sessions li button").length === 2`)
	if title := eval(`document.getElementById("day-title").textContent`); title != "Today" {
		t.Errorf("the page opens on %q, want Today", title)
	}
	// 7 MCP calls and 3 hook calls; the hook's Read has an after line only
	// when Claude Code sends PostToolUse, which this script does not.
	totals := eval(`["calls","changes","denies","failed","look"].map(k => k + "=" + document.getElementById("n-" + k).textContent).join(" ")`)
	if totals != "calls=10 changes=3 denies=3 failed=1 look=5" {
		t.Errorf("today's totals: %s", totals)
	}
	// Each session is shown by a label a person knows it by — when it
	// started, through what, which agent — with its id below it.
	sessions := eval(`[...document.querySelectorAll("#sessions li button")].map(b => b.innerText.replace(/\s+/g, " ")).join("\n")`)
	lines := strings.Split(sessions, "\n")
	label := regexp.MustCompile(`^\d\d:\d\d · (Claude Code|an MCP client over stdio) · agent default (cc-5e1f|stdio-\S+) · `)
	if len(lines) != 2 || label.FindStringSubmatch(lines[0]) == nil || label.FindStringSubmatch(lines[0])[1] != "Claude Code" ||
		!strings.Contains(lines[0], " cc-5e1f · hook · ") || !strings.Contains(lines[0], "3 calls · 0 changes · 2 denied") {
		t.Errorf("the hook's session first, labelled, with its counts:\n%s", sessions)
	}
	if len(lines) == 2 && (label.FindStringSubmatch(lines[1]) == nil || label.FindStringSubmatch(lines[1])[1] != "an MCP client over stdio" ||
		!strings.Contains(lines[1], "7 calls · 3 changes · 1 denied · 1 failed") ||
		!strings.Contains(lines[1], "changed notes/plan.md, notes/ideas.md, notes/old/**")) {
		t.Errorf("the MCP session, labelled, with its counts and what it changed:\n%s", sessions)
	}
	if agents := eval(`document.querySelector("#agents tbody").innerText.replace(/\s+/g, " ").trim()`); agents != "default 10 3 3 1 5" {
		t.Errorf("per agent: %q", agents)
	}
	// The day's calls, newest first: a bash row shows its command, the
	// failed one shows as failed, and why.
	waitJS("the day's calls", `document.querySelectorAll("#calls tbody tr").length === 10`)
	rows := eval(rowsText)
	for _, want := range []string{"Bash", "$ sleep 5", "FAILED", "failed: timed out, exit code 124", "$ ls notes", "DENY", "delete мета/план.md"} {
		if !strings.Contains(rows, want) && !strings.Contains(strings.ToUpper(rows), want) {
			t.Errorf("the day's calls lack %q:\n%s", want, rows)
		}
	}
	waitJS("the live stream", `document.getElementById("status").textContent === "live"`)
	if v := eval(`String(document.documentElement.scrollWidth <= window.innerWidth)`); v != "true" {
		t.Error("at 1360 px the page scrolls sideways")
	}
	shot("panel-day.png")

	// One click into the MCP session: its calls in order.
	do("open the session", chromedp.Click(chromedp.CSS(`#sessions li:nth-child(2) button`)))
	waitJS("the session view", `document.getElementById("day-title").textContent.includes(" · an MCP client over stdio · agent default") &&
		document.getElementById("day-sub").textContent.startsWith("stdio-") && document.querySelectorAll("#calls tbody tr").length === 7`)
	tools := eval(`[...document.querySelectorAll("#calls tbody tr")].map(r => r.cells[3].textContent).join(",")`)
	if tools != "read,edit,write,delete,bash,bash,delete" {
		t.Errorf("the session's calls in order: %s", tools)
	}
	if !strings.Contains(eval(`location.search`), "session=stdio-") {
		t.Errorf("the URL does not keep the session: %s", eval(`location.search`))
	}

	// The edit's record shows its diff lines and the undo line.
	do("open the edit", chromedp.Click(chromedp.CSS(`#calls tbody tr:nth-child(2)`)))
	waitJS("the edit's diff", `!document.getElementById("detail-changes").hidden`)
	if added := eval(`[...document.querySelectorAll("#detail-diffs .line.add")].map(l => l.textContent).join("")`); added != "+- panel: a day at a glance\n" {
		t.Errorf("the edit's added lines: %q", added)
	}
	if undo := eval(`document.getElementById("detail-undo").textContent`); !strings.HasPrefix(undo, "vaultgate undo --config ") {
		t.Errorf("undo line: %q", undo)
	}
	// Opening it squeezes nothing: the table keeps its width.
	if w := eval(`String(document.getElementById("calls").getBoundingClientRect().width > 1000)`); w != "true" {
		t.Error("the open record narrowed the list")
	}
	shot("panel-record.png")
	// Keyboard: Escape closes the record and gives the row its focus back;
	// the arrows move from row to row, Enter opens.
	do("escape", chromedp.KeyEvent("\x1b"))
	waitJS("closed", `document.getElementById("detail").hidden && document.activeElement.matches("#calls tbody tr:nth-child(2)")`)
	do("down", chromedp.KeyEvent("j"), chromedp.KeyEvent("j"), chromedp.KeyEvent("\r"))
	waitJS("the refused delete's record, by keyboard", `!document.getElementById("detail").hidden && document.getElementById("detail-title").textContent.startsWith("delete")`)
	do("escape", chromedp.KeyEvent("\x1b"))

	// The failed bash call's record: its command, exit code and output.
	do("open the timeout", chromedp.Evaluate[chromedp.Void](`document.querySelector("#calls tbody tr:nth-child(5)").click()`))
	waitJS("the timeout's record", `!document.getElementById("detail-bash").hidden`)
	if exit := eval(`document.getElementById("detail-command").textContent + " | " + document.getElementById("detail-exit").textContent`); exit != "$ sleep 5 | failed: timed out, exit code 124" {
		t.Errorf("the timeout's command and exit: %q", exit)
	}
	do("escape", chromedp.KeyEvent("\x1b"))

	// Back to the day; search finds a path, in any case.
	do("back", chromedp.Click(chromedp.ID("back-to-day")))
	waitJS("the day again", `document.getElementById("day-title").textContent === "Today" && document.querySelectorAll("#calls tbody tr").length === 10`)
	do("search", chromedp.SendKeys(chromedp.ID("f-q"), "IDEAS.md"), chromedp.Click(chromedp.ID("f-apply")))
	waitJS("search", `document.querySelectorAll("#calls tbody tr").length === 1`)
	if rows := eval(rowsText); !strings.Contains(rows, "notes/ideas.md") {
		t.Errorf("search for ideas.md: %s", rows)
	}
	if q := eval(`location.search`); !strings.Contains(q, "q=IDEAS.md") {
		t.Errorf("the URL does not keep the search: %s", q)
	}
	// The failed filter finds the timeout, and a reload keeps it.
	do("clear", chromedp.Click(chromedp.ID("f-clear")))
	waitJS("cleared", `document.querySelectorAll("#calls tbody tr").length === 10`)
	do("failed", chromedp.Click(chromedp.ID("t-failed")))
	waitJS("the failed filter", `document.querySelectorAll("#calls tbody tr").length === 1`)
	if rows := eval(rowsText); !strings.Contains(rows, "sleep 5") || !strings.Contains(rows, "timed out") {
		t.Errorf("failed: %s", rows)
	}
	do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("panel")))
	waitJS("the failed filter after a reload", `document.getElementById("f-decision").value === "failed" && document.querySelectorAll("#calls tbody tr").length === 1`)
	// tool=bash finds the hook's Bash too.
	do("tool", chromedp.SetValue(chromedp.ID("f-decision"), ""), chromedp.SendKeys(chromedp.ID("f-tool"), "bash"), chromedp.Click(chromedp.ID("f-apply")))
	waitJS("tool bash", `document.querySelectorAll("#calls tbody tr").length === 3`)
	if rows := eval(rowsText); !strings.Contains(rows, "$ node -e 1") {
		t.Errorf("tool=bash lacks the hook's Bash: %s", rows)
	}
	// What needs a look: the denies, the failure, the folder deleted.
	do("look", chromedp.Click(chromedp.ID("f-clear")))
	waitJS("cleared again", `document.querySelectorAll("#calls tbody tr").length === 10`)
	do("look", chromedp.Click(chromedp.ID("t-look")))
	waitJS("needs a look", `document.querySelectorAll("#calls tbody tr").length === 5`)
	if rows := eval(rowsText); !strings.Contains(rows, "notes/old/**") || !strings.Contains(rows, "Write") {
		t.Errorf("needs a look: %s", rows)
	}

	// A phone: 390 px wide, no horizontal scroll, with a record open too.
	do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Click(chromedp.ID("f-clear")))
	waitJS("the day on a phone", `document.querySelectorAll("#calls tbody tr").length === 10`)
	// Against the visual viewport: a page wider than the phone makes the
	// layout viewport (window.innerWidth) wider with it.
	noScroll := `document.documentElement.scrollWidth <= document.documentElement.clientWidth && document.body.scrollWidth <= document.documentElement.clientWidth &&
		window.innerWidth <= Math.ceil(visualViewport.width)`
	if v := eval(`String(` + noScroll + `) + " " + document.documentElement.scrollWidth + "/" + window.innerWidth`); !strings.HasPrefix(v, "true") {
		t.Errorf("at 390 px the page scrolls sideways: %s", v)
	}
	shot("panel-phone.png")
	do("open on a phone", chromedp.Evaluate[chromedp.Void](`document.querySelector("#calls tbody tr").click()`))
	waitJS("the record on a phone", `!document.getElementById("detail").hidden`)
	if v := eval(`String(` + noScroll + `) + " " + document.documentElement.scrollWidth`); !strings.HasPrefix(v, "true") {
		t.Errorf("at 390 px an open record scrolls sideways: %s", v)
	}
	if v := eval(`String(document.getElementById("detail").scrollWidth <= document.getElementById("detail").clientWidth)`); v != "true" {
		t.Error("at 390 px the record itself scrolls sideways")
	}

	for _, p := range problems() {
		t.Errorf("page problem: %s", p)
	}
}
