package admin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// ccSession is the Claude Code session's id: its stdio server takes it
// from CLAUDE_CODE_SESSION_ID, its hook from session_id.
const ccSession = "5b7c2d1e-0a9f-4e3b-8c6d-1f2e3a4b5c6d"

// undoWorld is a vault worked in by two sessions through the built
// binary, and the panel over it as `vaultgate admin --config` serves it.
type undoWorld struct {
	bin, dir, vault, cfg, audit string
	plain                       string // the plain MCP client's session
}

func (w *undoWorld) abs(rel string) string { return filepath.Join(w.vault, rel) }

// newUndoWorld: Claude Code's session (its stdio server: a read, an edit,
// a note written, a folder deleted, a delete a rule refuses with a reason
// of two lines; its hook: a Read and a Write, each with its PostToolUse)
// and a plain MCP client's (a note read and edited, one written); then
// the person changes by hand a note Claude Code wrote.
func newUndoWorld(t *testing.T) *undoWorld {
	t.Helper()
	w := &undoWorld{bin: buildVaultgate(t), dir: t.TempDir()}
	w.vault, w.cfg = filepath.Join(w.dir, "vault"), filepath.Join(w.dir, "vault.toml")
	w.audit = filepath.Join(w.dir, "state", "audit.jsonl")
	for f, body := range map[string]string{
		"notes/plan.md":  "# Plan\n\n- one\n- two\n",
		"notes/keep.md":  "# Keep\n",
		"notes/old/a.md": "old a\n",
		"notes/old/b.md": "old b\n",
		"мета/план.md":   "# план\n",
	} {
		p := w.abs(f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := fmt.Sprintf(`vault = %q
[audit]
path = "state/audit.jsonl"
[zones]
write = ["notes"]
edit = ["."]
protected = ["мета"]
[bash]
wall = "off"
[[rules.deny]]
name = "keep_is_kept"
when = 'effect.op == "delete" && effect.path == "notes/keep.md"'
reason = "notes/keep.md stays.\nMove it to notes/archive/ instead."
`, w.vault)
	if err := os.WriteFile(w.cfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	w.mcp(t, []string{"CLAUDE_CODE_SESSION_ID=" + ccSession}, func(call func(string, map[string]any, bool)) {
		call("read", map[string]any{"path": "notes/plan.md"}, false)
		call("edit", map[string]any{"path": "notes/plan.md", "old_string": "- two\n", "new_string": "- two\n- three\n"}, false)
		call("write", map[string]any{"path": "notes/ideas.md", "content": "# Ideas\n"}, false)
		call("delete", map[string]any{"path": "notes/old", "recursive": true}, false)
		call("delete", map[string]any{"path": "notes/keep.md"}, true)
	})
	w.hook(t, "PreToolUse", "toolu_r1", "Read", map[string]any{"file_path": w.abs("notes/plan.md")})
	w.hook(t, "PostToolUse", "toolu_r1", "Read", map[string]any{"file_path": w.abs("notes/plan.md")})
	write := map[string]any{"file_path": w.abs("notes/by-claude.md"), "content": "by claude\n"}
	w.hook(t, "PreToolUse", "toolu_w1", "Write", write)
	if err := os.WriteFile(w.abs("notes/by-claude.md"), []byte("by claude\n"), 0o644); err != nil { // as Claude Code writes it
		t.Fatal(err)
	}
	w.hook(t, "PostToolUse", "toolu_w1", "Write", write)

	w.mcp(t, nil, func(call func(string, map[string]any, bool)) {
		call("read", map[string]any{"path": "notes/keep.md"}, false)
		call("edit", map[string]any{"path": "notes/keep.md", "old_string": "# Keep\n", "new_string": "# Keep, edited\n"}, false)
		call("write", map[string]any{"path": "notes/plain.md", "content": "plain\n"}, false)
	})
	for _, l := range w.lines(t) {
		if strings.HasPrefix(l.Session, "stdio-") {
			w.plain = l.Session
		}
	}
	if w.plain == "" {
		t.Fatal("the plain MCP client's session is not in the log")
	}
	// The person changes by hand a note Claude Code wrote: its undo is a
	// conflict, left alone.
	if err := os.WriteFile(w.abs("notes/ideas.md"), []byte("# Ideas, mine now\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// mcp runs calls through the built binary's serve over stdio.
func (w *undoWorld) mcp(t *testing.T, env []string, calls func(call func(string, map[string]any, bool))) {
	t.Helper()
	c, err := client.NewStdioMCPClient(w.bin, append([]string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, env...), "serve", "--config", w.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "undo-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	calls(func(tool string, args map[string]any, wantErr bool) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError != wantErr {
			t.Fatalf("%s %v: %v, error %v, want %v", tool, args, err, res != nil && res.IsError, wantErr)
		}
	})
}

// hook runs the built binary's hook as Claude Code would.
func (w *undoWorld) hook(t *testing.T, event, useID, tool string, input map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"session_id": ccSession, "cwd": w.vault, "hook_event_name": event, "tool_use_id": useID,
		"tool_name": tool, "tool_input": input, "tool_response": map[string]any{}, "transcript_path": filepath.Join(w.dir, "t.jsonl"),
		"permission_mode": "bypassPermissions"})
	cmd := exec.Command(w.bin, "hook", "--config", w.cfg)
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil || (event == "PreToolUse" && !strings.Contains(string(out), `"permissionDecision":"allow"`)) {
		t.Fatalf("hook %s %s: %v %s", event, tool, err, out)
	}
}

type logLine struct {
	Time                                                            time.Time
	ID, Session, Agent, Via, Tool, Event, Continues, Outcome, Error string
}

func (w *undoWorld) lines(t *testing.T) []logLine {
	t.Helper()
	f, err := os.Open(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// calls counts the log's calls as a person means them: a line that
// continues another (exec's, the hook's PostToolUse) is not one.
func (w *undoWorld) calls(t *testing.T) int {
	n := 0
	for _, l := range w.lines(t) {
		if l.Event == "" && l.Continues == "" {
			n++
		}
	}
	return n
}

// files is the vault's files and their content.
func (w *undoWorld) files(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(w.vault, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(w.vault, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func (w *undoWorld) logBytes(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(w.audit)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// admin starts the built binary's `vaultgate admin --config` on a free
// loopback port and returns its URL.
func (w *undoWorld) admin(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(w.bin, "admin", "--config", w.cfg, "--listen", "127.0.0.1:0")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "VAULTGATE_ADMIN_TOKEN=" + testToken}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		at := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)/`)
		for sc.Scan() {
			if m := at.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("vaultgate admin did not say where it listens")
	}
	return ""
}

// dryRun is what `vaultgate undo --dry-run` prints for args: its stdout's
// lines, and its stderr's, each without the "vaultgate: " in front.
func (w *undoWorld) dryRun(t *testing.T, args ...string) (out, problems []string, code int) {
	t.Helper()
	cmd := exec.Command(w.bin, append([]string{"undo", "--config", w.cfg, "--dry-run"}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	for l := range strings.Lines(o.String()) {
		out = append(out, strings.TrimSuffix(l, "\n"))
	}
	for l := range strings.Lines(e.String()) {
		problems = append(problems, strings.TrimPrefix(strings.TrimSuffix(l, "\n"), "vaultgate: "))
	}
	return out, problems, cmd.ProcessState.ExitCode()
}

// TestUndoFromThePanelInChromium reads the panel of `vaultgate admin
// --config`, built and started as a person starts it, in a real headless
// Chromium at a laptop's width (1280 px) and a phone's (390 px): the
// totals and the list count the same calls (a PostToolUse line is no
// call, live too); a session is shown by a label (when, through what,
// which agent, what it changed); a reason keeps its line breaks; a
// change's diff comes before the technical fields of its record; and a
// session is undone from the panel: first its preview, which changes
// nothing and is what `vaultgate undo --dry-run` prints, then, confirmed,
// the undo itself, with the CLI's conflict rule, audited as the person's
// act via panel, and counted as a change.
func TestUndoFromThePanelInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a browser")
	}
	chrome := chromium(t)
	w := newUndoWorld(t)
	url := w.admin(t)
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
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
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
		if shots == "" || name == "" {
			return
		}
		chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond))
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := `document.querySelectorAll("#calls tbody tr").length`
	// The totals against the list: the day's count of calls, the rows
	// shown and the list's caption all say want, and no row is a
	// PostToolUse line.
	totalsAgree := func(what string, want int) {
		t.Helper()
		waitJS(what+": the totals and the list", fmt.Sprintf(`document.getElementById("n-calls").textContent === "%d" && %s === %d &&
			document.getElementById("matched").textContent === "%d matching calls"`, want, rows, want, want))
		if n := eval(`String([...document.querySelectorAll("#calls tbody tr")].filter(r => r.cells[3].textContent.includes("(after)")).length)`); n != "0" {
			t.Errorf("%s: %s rows are PostToolUse lines", what, n)
		}
	}
	noSideways := func(what string) {
		t.Helper()
		// Against the visual viewport: a page wider than the phone makes
		// the layout viewport (window.innerWidth) wider with it.
		if v := eval(`String(document.documentElement.scrollWidth <= document.documentElement.clientWidth && window.innerWidth <= Math.ceil(visualViewport.width)) +
			" " + document.documentElement.scrollWidth + "/" + window.innerWidth + "/" + visualViewport.width`); !strings.HasPrefix(v, "true") {
			t.Errorf("%s: the page scrolls sideways: %s", what, v)
		}
	}
	labelOf := func(session string) string {
		t.Helper()
		return eval(fmt.Sprintf(`(() => { const b = [...document.querySelectorAll("#sessions li button")].find(b => b.dataset.session === %q);
			return b ? b.querySelector(".sid").textContent + " | " + (b.querySelector(".changed") || {}).textContent : "" })()`, session))
	}
	label := regexp.MustCompile(`^\d\d:\d\d · (.+) · agent (\S+) \| changed (.*)$`)
	// The diff of an open record comes before its technical fields: the
	// line's fields, the planned effects and the raw line.
	diffFirst := func(what string) {
		t.Helper()
		waitJS(what+": the diff", `!document.getElementById("detail-changes").hidden && document.querySelector("#detail-diffs pre.diff") !== null`)
		pos := eval(`(() => { const top = (id) => document.getElementById(id).getBoundingClientRect().top;
			return [top("detail-diffs"), top("detail-fields"), top("detail-effects"), top("detail-raw")].join(" ") })()`)
		var diff, fields, effects, raw float64
		fmt.Sscan(pos, &diff, &fields, &effects, &raw)
		if !(diff < fields && diff < effects && diff < raw) {
			t.Errorf("%s: the diff (top %v) is not before the technical fields (fields %v, effects %v, line %v)", what, diff, fields, effects, raw)
		}
		if v := eval(`String(document.getElementById("detail").scrollWidth <= document.getElementById("detail").clientWidth)`); v != "true" {
			t.Errorf("%s: the record scrolls sideways", what)
		}
	}
	// undoSession undoes a session from the panel: the preview first,
	// which must change nothing and read as `vaultgate undo --dry-run`;
	// then the confirmation. It returns the lines the panel showed for
	// the undo done.
	undoSession := func(what, session, shotName string, wantPreview []string) []string {
		t.Helper()
		do(what+": open the session", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('#sessions li button[data-session=%q]').click()`, session)))
		waitJS(what+": the session's view", fmt.Sprintf(`document.getElementById("day-sub").textContent.startsWith(%q) && !document.getElementById("session-undo").hidden`, session))
		filesBefore, logBefore := w.files(t), w.logBytes(t)
		do(what+": ask to undo it", chromedp.Click(chromedp.ID("session-undo")))
		waitJS(what+": the preview", `!document.getElementById("undo").hidden && !document.getElementById("undo-confirm").hidden && document.querySelectorAll("#undo-lines li").length > 0`)
		panelLines := func() (out, problems []string) {
			for l := range strings.Lines(eval(`[...document.querySelectorAll("#undo-lines li")].map(li => (li.classList.contains("problem") ? "!" : "") + li.textContent).join("\n")`)) {
				l = strings.TrimSuffix(l, "\n")
				if p, ok := strings.CutPrefix(l, "!"); ok {
					problems = append(problems, p)
				} else {
					out = append(out, l)
				}
			}
			return out, problems
		}
		previewOut, previewProblems := panelLines()
		if !sameLines(previewOut, wantPreview) {
			t.Errorf("%s: the preview says\n%s\nwant\n%s", what, strings.Join(previewOut, "\n"), strings.Join(wantPreview, "\n"))
		}
		// The preview changed nothing: no file, no line of the log.
		if got := w.files(t); !maps.Equal(got, filesBefore) {
			t.Errorf("%s: the preview changed the vault: %v, was %v", what, got, filesBefore)
		}
		if w.logBytes(t) != logBefore {
			t.Errorf("%s: the preview wrote to the audit log", what)
		}
		// It is what `vaultgate undo --dry-run --session S` prints, line
		// for line, its stderr's lines the panel's problems.
		cliOut, cliProblems, _ := w.dryRun(t, "--session", session)
		if !slices.Equal(previewOut, cliOut) || !slices.Equal(previewProblems, cliProblems) {
			t.Errorf("%s: the panel's preview\n%s\n! %s\nis not what vaultgate undo --dry-run prints\n%s\n! %s", what,
				strings.Join(previewOut, "\n"), strings.Join(previewProblems, "\n! "), strings.Join(cliOut, "\n"), strings.Join(cliProblems, "\n! "))
		}
		if cmd := eval(`document.getElementById("undo-command").textContent`); !strings.Contains(cmd, "vaultgate undo --config ") || !strings.HasSuffix(cmd, "--dry-run --session "+session) {
			t.Errorf("%s: the same at a terminal: %q", what, cmd)
		}
		noSideways(what + ": the preview")
		shot(shotName)
		do(what+": confirm", chromedp.Click(chromedp.ID("undo-confirm")))
		waitJS(what+": undone", `document.getElementById("undo-title").textContent.startsWith("Undone: ") && document.getElementById("undo-confirm").hidden`)
		done, doneProblems := panelLines()
		return append(done, doneProblems...)
	}

	do("log in", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), testToken),
		chromedp.Click(chromedp.CSS("#login-form button[type=submit]")), chromedp.WaitVisible(chromedp.ID("panel")))

	// 1280 px. Claude Code's 7 calls (5 through its stdio server, a Read
	// and a Write through its hook, each with a PostToolUse line) and the
	// plain client's 3: 10 calls in 12 lines.
	if n := w.calls(t); n != 10 || len(w.lines(t)) != 12 {
		t.Fatalf("the log holds %d calls in %d lines, want 10 in 12", n, len(w.lines(t)))
	}
	totalsAgree("1280 px", 10)
	waitJS("the live stream", `document.getElementById("status").textContent === "live"`)
	// Live: a Read and its PostToolUse, while the page is open, are one
	// more call, not two.
	w.hook(t, "PreToolUse", "toolu_r2", "Read", map[string]any{"file_path": w.abs("notes/keep.md")})
	w.hook(t, "PostToolUse", "toolu_r2", "Read", map[string]any{"file_path": w.abs("notes/keep.md")})
	totalsAgree("1280 px, live", 11)
	if c := eval(`document.getElementById("n-changes").textContent`); c != "6" {
		t.Errorf("1280 px: %s changes, want 6", c)
	}
	noSideways("1280 px")

	// Each session by its label: when it started, through what, which
	// agent, the first paths it changed.
	m := label.FindStringSubmatch(labelOf(ccSession))
	if m == nil || m[1] != "Claude Code" || m[2] != "default" || m[3] != "notes/plan.md, notes/ideas.md, notes/old/**, notes/by-claude.md" {
		t.Errorf("Claude Code's session's label: %q", labelOf(ccSession))
	}
	if m := label.FindStringSubmatch(labelOf(w.plain)); m == nil || m[1] != "an MCP client over stdio" || m[3] != "notes/keep.md, notes/plain.md" {
		t.Errorf("the plain client's session's label: %q", labelOf(w.plain))
	}
	for _, l := range w.lines(t) {
		if l.Session == ccSession { // its first line is when it started
			if got := labelOf(ccSession); !strings.HasPrefix(got, l.Time.Local().Format("15:04")+" · ") {
				t.Errorf("Claude Code's session's label %q does not start with when it started, %s", got, l.Time.Local().Format("15:04"))
			}
			break
		}
	}
	// The rule's reason keeps its line break, in the list and in the record.
	reason := eval(`[...document.querySelectorAll("#calls tbody tr.deny .reason")].map(e => e.textContent + "|" + e.innerText).join("#")`)
	if !strings.Contains(reason, "notes/keep.md stays.\nMove it to notes/archive/ instead.|") || strings.Contains(reason, `\n`) {
		t.Errorf("the reason's line break: %q", reason)
	}
	if h := eval(`String(document.querySelector("#calls tbody tr.deny .reason").getClientRects().length > 1 || document.querySelector("#calls tbody tr.deny .reason").innerText.includes("\n"))`); h != "true" {
		t.Error("the reason is shown on one line")
	}

	// The edit's record: its diff before the technical fields.
	do("open the edit", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#calls tbody tr")].find(r => r.cells[3].textContent === "edit" && r.textContent.includes("notes/plan.md")).click()`))
	diffFirst("1280 px, the edit's record")
	if v := eval(`document.getElementById("detail-undo-do").hidden ? "" : document.getElementById("detail-undo-button").textContent`); v != "Undo this call…" {
		t.Errorf("the record offers no undo: %q", v)
	}
	do("close", chromedp.KeyEvent("\x1b"))

	// Undo Claude Code's session from the panel. ideas.md, which the
	// person changed since, is left alone, as the CLI leaves it.
	done := undoSession("1280 px", ccSession, "panel-undo.png", []string{
		"would remove notes/by-claude.md", "would put back notes/old", "would put back notes/plan.md",
	})
	for _, want := range []string{"removed notes/by-claude.md", "put back notes/old", "put back notes/plan.md"} {
		if !slices.Contains(done, want) {
			t.Errorf("the undo done lacks %q:\n%s", want, strings.Join(done, "\n"))
		}
	}
	if !containsPrefix(done, "notes/ideas.md changed since call ") || !containsPrefix(done, "undo ") {
		t.Errorf("the undo done says:\n%s", strings.Join(done, "\n"))
	}
	files := w.files(t)
	for p, want := range map[string]string{"notes/plan.md": "# Plan\n\n- one\n- two\n", "notes/old/a.md": "old a\n", "notes/old/b.md": "old b\n",
		"notes/ideas.md": "# Ideas, mine now\n", "notes/plain.md": "plain\n", "notes/keep.md": "# Keep, edited\n"} {
		if files[p] != want {
			t.Errorf("after the panel's undo, %s holds %q, want %q", p, files[p], want)
		}
	}
	if _, ok := files["notes/by-claude.md"]; ok {
		t.Error("the panel's undo left the note Claude Code's Write made")
	}
	lines := w.lines(t)
	last := lines[len(lines)-1]
	if last.Tool != "undo" || last.Via != "panel" || last.Agent != "person" || last.Session != "panel" || !strings.Contains(last.Error, "notes/ideas.md") {
		t.Errorf("the panel's undo's audit line: %+v", last)
	}
	// Closed, the day again: the undo is a call, and a change.
	do("close the dialog", chromedp.Click(chromedp.ID("undo-cancel")))
	do("back to the day", chromedp.Click(chromedp.ID("back-to-day")))
	totalsAgree("1280 px, after the undo", 12)
	if c := eval(`document.getElementById("n-changes").textContent`); c != "7" {
		t.Errorf("after the undo, %s changes, want 7: the person's undo is a change", c)
	}
	if m := label.FindStringSubmatch(labelOf("panel")); m == nil || m[1] != "you, in this panel" || m[2] != "person" {
		t.Errorf("the person's undo's session: %q", labelOf("panel"))
	}

	// 390 px: the same day on a phone.
	do("phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("panel")))
	totalsAgree("390 px", 12)
	noSideways("390 px")
	if m := label.FindStringSubmatch(labelOf(w.plain)); m == nil || m[1] != "an MCP client over stdio" {
		t.Errorf("390 px: the plain client's session's label: %q", labelOf(w.plain))
	}
	do("open the plain client's edit", chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll("#calls tbody tr")].find(r => r.cells[3].textContent === "edit" && r.textContent.includes("notes/keep.md")).click()`))
	diffFirst("390 px, the edit's record")
	do("close", chromedp.KeyEvent("\x1b"))
	done = undoSession("390 px", w.plain, "", []string{"would put back notes/keep.md", "would remove notes/plain.md"})
	if !slices.Contains(done, "put back notes/keep.md") || !slices.Contains(done, "removed notes/plain.md") {
		t.Errorf("390 px: the undo done says:\n%s", strings.Join(done, "\n"))
	}
	if v := eval(`(() => { const b = document.getElementById("undo-box");
		return String(b.scrollWidth <= b.clientWidth && b.getBoundingClientRect().right <= visualViewport.width) })()`); v != "true" {
		t.Error("390 px: the undo's dialog scrolls sideways")
	}
	files = w.files(t)
	if files["notes/keep.md"] != "# Keep\n" {
		t.Errorf("390 px: keep.md holds %q after its session's undo", files["notes/keep.md"])
	}
	if _, ok := files["notes/plain.md"]; ok {
		t.Error("390 px: the plain client's note is still there")
	}
	do("close the dialog", chromedp.Click(chromedp.ID("undo-cancel")))
	waitJS("the dialog closed", `document.getElementById("undo").hidden`)
	do("back to the day", chromedp.Click(chromedp.ID("back-to-day")))
	totalsAgree("390 px, after the undo", 13)
	if c := eval(`document.getElementById("n-changes").textContent`); c != "8" {
		t.Errorf("390 px, after the undo: %s changes, want 8", c)
	}

	for _, p := range problems() {
		t.Errorf("page problem: %s", p)
	}
}

// TestPanelUndoNeedsTheHeader: the panel's undo takes its token from the
// Authorization header alone, from the page's own origin alone, as JSON
// alone. The same request with the token as a cookie, in the URL, as
// Basic, from another origin, or as a form changes nothing: no file, no
// audit line. A page of another origin, in a browser where the panel is
// open and logged in, can't make it undo either. Then the header's
// request undoes (so the refusals were the token's, not the request's).
func TestPanelUndoNeedsTheHeader(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	w := newUndoWorld(t)
	url := w.admin(t)
	body := `{"session":"` + ccSession + `"}`
	filesBefore, logBefore := w.files(t), w.logBytes(t)
	send := func(method, path, body string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	bearer := "Bearer " + testToken
	for _, c := range []struct {
		what, path, body string
		header           map[string]string
		want             int
	}{
		{"no token", "/api/undo", body, map[string]string{"Content-Type": "application/json"}, 401},
		{"the token as a cookie", "/api/undo", body, map[string]string{"Content-Type": "application/json",
			"Cookie": "vaultgate-admin-token=" + testToken + "; token=" + testToken}, 401},
		{"the token in the URL", "/api/undo?token=" + testToken + "&access_token=" + testToken, body, map[string]string{"Content-Type": "application/json"}, 401},
		{"the token as Basic", "/api/undo", body, map[string]string{"Content-Type": "application/json", "Authorization": "Basic " + testToken}, 401},
		{"a wrong token", "/api/undo", body, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer wrong-token-but-long-enough"}, 401},
		{"another origin's page", "/api/undo", body, map[string]string{"Content-Type": "application/json", "Authorization": bearer, "Origin": "http://evil.example"}, 403},
		{"another site's page", "/api/undo", body, map[string]string{"Content-Type": "application/json", "Authorization": bearer, "Sec-Fetch-Site": "cross-site"}, 403},
		{"a form", "/api/undo", "session=" + ccSession, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": bearer}, 415},
		{"text/plain", "/api/undo", body, map[string]string{"Content-Type": "text/plain", "Authorization": bearer}, 415},
		{"a field undo does not know", "/api/undo", `{"session":"` + ccSession + `","force":true}`, map[string]string{"Content-Type": "application/json", "Authorization": bearer}, 400},
		{"ids and a session", "/api/undo", `{"session":"` + ccSession + `","ids":["x"]}`, map[string]string{"Content-Type": "application/json", "Authorization": bearer}, 400},
		{"a GET", "/api/undo", "", map[string]string{"Authorization": bearer}, 405},
	} {
		method := http.MethodPost
		if c.what == "a GET" {
			method = http.MethodGet
		}
		code, answer := send(method, c.path, c.body, c.header)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.what, code, answer, c.want)
		}
		if strings.Contains(answer, "notes/") {
			t.Errorf("%s: the answer tells of the vault: %s", c.what, answer)
		}
	}

	// A page of another origin, in a browser where the panel is open and
	// logged in, tries what a page can: a fetch, a form, a beacon.
	if chrome := chromiumOrSkip(t); chrome != "" {
		evil := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(rw, `<!doctype html><form id=f method=post action="%[1]s/api/undo" enctype="text/plain"><input name='{"session":"%[2]s","x":"' value='"}'></form>
<script>
const u = "%[1]s/api/undo", b = JSON.stringify({session: "%[2]s"});
fetch(u, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: b}).catch(() => {});
fetch(u, {method: "POST", credentials: "include", headers: {"Content-Type": "application/json", "Authorization": "Bearer " + sessionStorage.getItem("vaultgate-admin-token")}, body: b}).catch(() => {});
try { navigator.sendBeacon(u, new Blob([b], {type: "application/json"})); } catch (e) {}
try { navigator.sendBeacon(u, b); } catch (e) {}
setTimeout(() => { document.title = "tried"; document.getElementById("f").submit(); }, 300);
</script>`, url, ccSession)
		}))
		defer evil.Close()
		ctx, _ := browser(t, chrome)
		err := chromedp.Do(ctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), testToken), chromedp.Click(chromedp.CSS("#login-form button[type=submit]")),
			chromedp.WaitVisible(chromedp.ID("panel")), chromedp.Navigate(evil.URL+"/"), chromedp.Sleep(1500*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := w.files(t); !maps.Equal(got, filesBefore) {
		t.Errorf("a refused request changed the vault: %v", got)
	}
	if w.logBytes(t) != logBefore {
		t.Error("a refused request wrote to the audit log")
	}

	// The header's request: the preview, then the undo.
	code, answer := send(http.MethodPost, "/api/undo", `{"session":"`+ccSession+`","dry_run":true}`, map[string]string{"Content-Type": "application/json", "Authorization": bearer})
	var a UndoAnswer
	json.Unmarshal([]byte(answer), &a)
	if code != 200 || !a.DryRun || len(a.Paths) != 4 || w.logBytes(t) != logBefore {
		t.Errorf("the preview: %d %s", code, answer)
	}
	want := map[string]string{"notes/by-claude.md": "remove", "notes/ideas.md": "leave alone", "notes/old": "put back", "notes/plan.md": "put back"}
	for _, p := range a.Paths {
		if want[p.Path] != p.Action {
			t.Errorf("the preview says %s: %s, want %s", p.Path, p.Action, want[p.Path])
		}
	}
	code, answer = send(http.MethodPost, "/api/undo", body, map[string]string{"Content-Type": "application/json", "Authorization": bearer})
	if err := json.Unmarshal([]byte(answer), &a); err != nil || code != 200 || a.DryRun || a.ID == "" {
		t.Fatalf("the undo: %d %s", code, answer)
	}
	if got := w.files(t); got["notes/plan.md"] != "# Plan\n\n- one\n- two\n" || got["notes/old/a.md"] != "old a\n" {
		t.Errorf("the header's undo did not put the session back: %v", got)
	}
	lines := w.lines(t)
	if last := lines[len(lines)-1]; last.ID != a.ID || last.Via != "panel" {
		t.Errorf("the undo's audit line %+v, want id %s via panel", last, a.ID)
	}
}

// chromiumOrSkip is the browser, or "" where there is none (a failure
// under CI=true, as chromium makes it).
func chromiumOrSkip(t *testing.T) string {
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found: install it (apt-get install -y chromium) or set $CHROMIUM")
	}
	t.Log("no Chromium: the cross-origin page is not tried")
	return ""
}

// sameLines reports whether got holds the want lines and no other, in
// any order.
func sameLines(got, want []string) bool {
	return len(got) == len(want) && !slices.ContainsFunc(want, func(w string) bool { return !slices.Contains(got, w) })
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
