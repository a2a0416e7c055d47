package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// quickStartLines is the shell block of README.md's "Quick start": the
// first ```sh block after that heading, one command a line, blank lines
// left out.
func quickStartLines(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\n## Quick start\n")
	if !ok {
		t.Fatal("README.md has no \"## Quick start\" heading")
	}
	if next := strings.Index(rest, "\n## "); next >= 0 {
		rest = rest[:next]
	}
	_, rest, ok = strings.Cut(rest, "\n```sh\n")
	if !ok {
		t.Fatal("README.md's quick start has no ```sh block")
	}
	block, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("README.md's quick start block is not closed")
	}
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// shellCommand is a line without its comment: a # that starts a word
// outside quotes starts the comment.
func shellCommand(line string) string {
	var quote rune
	prev := ' '
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return strings.TrimSpace(line[:i])
		}
		prev = r
	}
	return strings.TrimSpace(line)
}

// TestReadmeQuickStart follows README.md's quick start as a new user
// would: its shell block, line by line and in order, each run by bash in a
// fresh home (HOME a temporary folder, nothing of vaultgate's in it), from
// the clone's folder at first and then wherever the lines cd to, keeping
// what they export, with the built binaries and the pinned Claude Code on
// PATH as `go install ./cmd/...` and npm would put them. Two lines are run
// as a test must run them, and only these:
//
//   - `claude`, which a person runs interactively, is run headless as
//     `claude -p PROMPT --output-format json`, against a scripted local
//     model (ANTHROPIC_BASE_URL, set for the person's whole shell, as an
//     API key would be). Its turns read Welcome.md and tick its todo with
//     Claude Code's own Edit (allowed: the starter zone is edit), then
//     delete notes/ideas.md with the vault's delete tool (the first
//     refusal: edit never deletes). The person's one answer to the
//     workspace-trust dialog is written into ~/.claude.json first.
//   - a line ending in `&` is started in the background as the shell
//     would, and ended when the test ends; `vaultgate admin` there is
//     given `--listen 127.0.0.1:0`, since the default port may be taken
//     on a test machine. Without the `&`, the panel would hold the
//     person's shell and no line after it would run: that fails.
//
// Each step's effect is checked as the person would see it: init's files,
// the zones, the edit on disk and the refusal in Claude Code's answer and
// in `audit tail`, the panel answering with its token (and not without
// it), the diff, and undo putting the note back. The block must keep
// these steps (init, claude, the audit, the panel, undo) and must not need
// --config; when it changes shape so that a line fails or a step is gone,
// the test fails.
func TestReadmeQuickStart(t *testing.T) {
	claude := needClaude(t)
	bin := bundle(t)
	lines := quickStartLines(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	welcomeBefore, err := os.ReadFile(filepath.Join(repo, "testdata", "vault", "Welcome.md"))
	if err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	home := filepath.Join(root, "home")
	state := filepath.Join(root, "shell")
	for _, d := range []string{home, state} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	model, modelURL := newScriptedModel(t, nil) // its steps are set when the claude line comes

	// The person's shell: their home, the binaries on PATH, a key for the
	// model. No XDG_* variable: init writes to ~/.config as on a fresh
	// account (this package's own XDG_CONFIG_HOME is not passed on).
	env := []string{
		"PATH=" + bin + ":" + filepath.Dir(claude) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home, "LANG=C.UTF-8", "USER=" + os.Getenv("USER"),
		"ANTHROPIC_BASE_URL=" + modelURL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"ENABLE_TOOL_SEARCH=false", // the vault's tools are offered, not deferred
	}
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	cwd := repo

	seen := map[string]bool{}
	var vault string // the folder Claude Code started in
	for i, line := range lines {
		cmdline := shellCommand(line)
		if strings.Contains(cmdline, "--config") {
			t.Errorf("quick start line %d names --config: from inside the vault no command needs it: %s", i+1, line)
		}
		words := strings.Fields(cmdline)
		switch {
		case strings.HasSuffix(cmdline, "&"):
			fg := strings.TrimSpace(strings.TrimSuffix(cmdline, "&"))
			if strings.HasPrefix(fg, "vaultgate admin") {
				if !strings.Contains(fg, "--listen") {
					fg += " --listen 127.0.0.1:0"
				}
				seen["admin"] = true
				addr := background(t, fg, cwd, env, true)
				checkPanel(t, addr, lookupEnv(env, "VAULTGATE_ADMIN_TOKEN"))
			} else {
				background(t, fg, cwd, env, false)
			}
			continue
		case len(words) >= 2 && words[0] == "vaultgate" && words[1] == "admin":
			t.Fatalf("quick start line %d runs the panel in the foreground, where it serves until interrupted and the lines after it never run: end it with &: %s", i+1, line)
		case len(words) > 0 && words[len(words)-1] == "claude":
			seen["claude"] = true
			vault = cwd
			trustFolder(t, home, vault)
			welcome := filepath.Join(vault, "Welcome.md")
			model.mu.Lock()
			model.steps = []modelStep{
				{"Read", map[string]any{"file_path": welcome}},
				{"Edit", map[string]any{"file_path": welcome, "old_string": "- [ ] todo: read the README", "new_string": "- [x] todo: read the README"}},
				{"mcp__vault__delete", map[string]any{"path": "notes/ideas.md"}},
			}
			model.mu.Unlock()
			cmdline = strings.TrimSuffix(cmdline, "claude") + `claude -p "tick the todo in Welcome.md, then delete notes/ideas.md" --output-format json`
		}

		out, next, nextEnv := runLine(t, cmdline, cwd, env, state)
		t.Logf("$ %s\n%s", cmdline, out)
		cwd, env = next, nextEnv

		switch {
		case len(words) >= 2 && words[0] == "vaultgate" && words[1] == "init":
			seen["init"] = true
			matches, _ := filepath.Glob(filepath.Join(home, ".config", "vaultgate", "*.toml"))
			if len(matches) != 2 { // the vault's config and vaults.toml
				t.Errorf("init left %v in ~/.config/vaultgate, want a config and vaults.toml", matches)
			}
			if !strings.Contains(out, ".mcp.json") || !strings.Contains(out, "settings.json") {
				t.Errorf("init did not write Claude Code's files:\n%s", out)
			}
		case len(words) >= 2 && words[0] == "vaultgate" && words[1] == "zones":
			if !strings.Contains(out, "[edit:") {
				t.Errorf("zones shows no edit zone:\n%s", out)
			}
		case len(words) > 0 && words[len(words)-1] == "claude":
			for step, wantErr := range []bool{false, false, true} {
				r, ok := model.result(step)
				switch {
				case !ok:
					t.Errorf("Claude Code sent back no result for step %d", step)
				case strings.Contains(r.Text, "haven't granted it yet") || strings.Contains(r.Text, "requested permissions"):
					t.Errorf("step %d wanted a permission prompt: %s", step, r.Text)
				case r.IsError != wantErr:
					t.Errorf("step %d: is_error %v, want %v: %s", step, r.IsError, wantErr, r.Text)
				}
			}
			if r, _ := model.result(2); !strings.Contains(r.Text, "never delete") {
				t.Errorf("the refused delete's reason: %q", r.Text)
			}
			if got, _ := os.ReadFile(filepath.Join(vault, "Welcome.md")); !strings.Contains(string(got), "- [x] todo: read the README") {
				t.Errorf("Claude Code's Edit did not tick the todo: %q", got)
			}
			if _, err := os.Stat(filepath.Join(vault, "notes", "ideas.md")); err != nil {
				t.Errorf("the refused delete removed notes/ideas.md: %v", err)
			}
		case len(words) >= 3 && words[0] == "vaultgate" && words[1] == "audit" && words[2] == "tail":
			seen["audit"] = true
			if !regexp.MustCompile(`(?mi)delete.*\bdeny\b|\bdeny\b.*delete`).MatchString(out) || !strings.Contains(out, "notes/ideas.md") || !strings.Contains(out, "never delete") {
				t.Errorf("audit tail does not show the refused delete of notes/ideas.md with its reason:\n%s", out)
			}
			if !strings.Contains(out, "Edit") {
				t.Errorf("audit tail does not show Claude Code's Edit:\n%s", out)
			}
		case len(words) >= 2 && words[0] == "vaultgate" && words[1] == "diff":
			if !strings.Contains(out, "-- [ ] todo: read the README") || !strings.Contains(out, "+- [x] todo: read the README") {
				t.Errorf("diff does not show the ticked todo:\n%s", out)
			}
		case len(words) >= 2 && words[0] == "vaultgate" && words[1] == "undo" && slices.Contains(words, "--dry-run"):
			if !strings.Contains(out, "would put back Welcome.md") {
				t.Errorf("undo --dry-run does not plan to put Welcome.md back:\n%s", out)
			}
		case len(words) >= 2 && words[0] == "vaultgate" && words[1] == "undo":
			seen["undo"] = true
			if !strings.Contains(out, "put back Welcome.md") {
				t.Errorf("undo does not say it put Welcome.md back:\n%s", out)
			}
			if vault == "" {
				t.Fatal("undo came before Claude Code ran")
			}
			if got, err := os.ReadFile(filepath.Join(vault, "Welcome.md")); err != nil || !bytes.Equal(got, welcomeBefore) {
				t.Errorf("after undo, Welcome.md holds %q (%v), want %q", got, err, welcomeBefore)
			}
		}
	}
	for _, step := range []string{"init", "claude", "audit", "admin", "undo"} {
		if !seen[step] {
			t.Errorf("README.md's quick start no longer has its %s step (vaultgate init, claude, vaultgate audit tail, vaultgate admin &, vaultgate undo):\n%s", step, strings.Join(lines, "\n"))
		}
	}
}

// runLine runs one line with bash in cwd with env, as a person's shell
// would, and returns what it printed and the folder and environment it
// left (a cd, an export). A line that fails fails the test: the person
// would stop there.
func runLine(t *testing.T, line, cwd string, env []string, state string) (string, string, []string) {
	t.Helper()
	pwdFile, envFile := filepath.Join(state, "pwd"), filepath.Join(state, "env")
	script := line + "\n__vg_rc=$?\npwd > '" + pwdFile + "'\nenv -0 > '" + envFile + "'\nexit $__vg_rc\n"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = cwd, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the quick start's line\n\t%s\nfailed (%v):\n%s", line, err, out.String())
	}
	pwd, err := os.ReadFile(pwdFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	var next []string
	for _, kv := range strings.Split(string(raw), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		if kv == "" || name == "_" || name == "SHLVL" || name == "PWD" || name == "OLDPWD" || name == "__vg_rc" {
			continue
		}
		next = append(next, kv)
	}
	return out.String(), strings.TrimSpace(string(pwd)), next
}

// background starts line as `line &` would, ended (SIGTERM, then waited
// for) when the test ends. A server says its address on stderr ("... at
// http://ADDR/"): with server set, background waits for it and returns
// it.
func background(t *testing.T, line, cwd string, env []string, server bool) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = cwd, env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(` at http://([^/ ]+)/`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done: // the pipe is read to its end before Wait closes it
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		cmd.Wait()
	})
	if !server {
		return ""
	}
	select {
	case addr := <-found:
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not say where it listens", line)
		return ""
	}
}

// checkPanel asks the panel for today's page with the token, as the page
// does once the person has pasted it, and without it.
func checkPanel(t *testing.T, addr, token string) {
	t.Helper()
	if len(token) < 16 {
		t.Fatalf("the quick start exported no admin token of 16 characters or more: %q", token)
	}
	get := func(auth string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/api/day?since=today", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		var resp *http.Response
		var err error
		for range 50 { // the first read of the log may still run
			if resp, err = http.DefaultClient.Do(req); err == nil && resp.StatusCode != http.StatusServiceUnavailable {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("the panel at %s: %v", addr, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	if resp, _ := get(""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the panel without the token: %s, want 401", resp.Status)
	}
	resp, body := get(token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the panel with the token: %s %s", resp.Status, body)
	}
	var day struct{ Calls, Changes, Denies int }
	if err := json.Unmarshal(body, &day); err != nil {
		t.Fatalf("/api/day: %v: %s", err, body)
	}
	if day.Changes < 1 || day.Denies < 1 {
		t.Errorf("the panel's day shows %d change(s) and %d deny(ies), want the edit and the refused delete: %s", day.Changes, day.Denies, body)
	}
}

func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// trustFolder records the person's answer to Claude Code's workspace-trust
// dialog for dir, which `claude -p` does not ask.
func trustFolder(t *testing.T, home, dir string) {
	t.Helper()
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{dir: map[string]any{"hasTrustDialogAccepted": true}}})
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), trust, 0o600); err != nil {
		t.Fatal(err)
	}
}
