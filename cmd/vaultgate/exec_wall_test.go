package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/audit"
)

// hookVault is the sample vault with every kind of file a Bash call must
// not reach: protected, hidden, outside the vault, an existing file of a
// create zone, and the audit log. guarded lists them.
func hookVault(t *testing.T, wall string) (vault, cfg, auditPath string, guarded []string) {
	t.Helper()
	vault, cfg, auditPath = sampleVault(t)
	dir := filepath.Dir(cfg)
	os.MkdirAll(filepath.Join(vault, "notes/private"), 0o755)
	os.WriteFile(filepath.Join(vault, "notes/private/diary.md"), []byte("dear diary\n"), 0o644)
	outside := filepath.Join(dir, "outside.txt")
	os.WriteFile(outside, []byte("not the vault's\n"), 0o644)
	body := `vault = "vault"
[audit]
path = "state/audit.jsonl"
[zones]
write     = ["мета/бобер"]
create    = ["💬 чаты"]
edit      = ["."]
protected = [".obsidian", "мета"]
hidden    = ["notes/private"]
[bash]
wall = "` + wall + `"
timeout = "20s"
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	guarded = []string{
		filepath.Join(vault, "мета/план.md"), filepath.Join(vault, "мета/x.md"),
		filepath.Join(vault, "notes/private/diary.md"), outside,
		filepath.Join(vault, "💬 чаты/2026-11-30.md"), filepath.Join(vault, "notes/ideas.md"),
	}
	return vault, cfg, auditPath, guarded
}

// disk is what the guarded files hold, and the names in the create zone.
func disk(t *testing.T, vault string, guarded []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, p := range guarded {
		b, err := os.ReadFile(p)
		if err != nil {
			m[p] = "<" + err.Error() + ">"
			continue
		}
		m[p] = string(b)
	}
	ents, _ := os.ReadDir(filepath.Join(vault, "💬 чаты"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	m["create zone"] = strings.Join(names, "\n")
	return m
}

func verifiedAudit(t *testing.T, auditPath string) []audit.Record {
	t.Helper()
	var recs []audit.Record
	if _, err := os.Stat(auditPath); err != nil {
		return nil
	}
	if err := audit.Read(auditPath, func(r audit.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if r, err := audit.Verify(auditPath); err != nil || !r.OK {
		t.Fatalf("the audit log does not verify: %+v %v", r, err)
	}
	return recs
}

// claudeBash is a Bash call as Claude Code makes it under the hook: the
// hook judges it; a deny is returned as such; an allow with updatedInput
// runs its command with bash -c from cwd, as Claude Code runs it.
type claudeBash struct {
	denied           string // the hook's reason, when it denied
	stdout, stderr   string
	code             int
	rewritten        bool
	rewrittenTimeout any
	command          string // the rewritten command
}

func runClaudeBash(t *testing.T, hook []string, cfg, session, cwd, command string) claudeBash {
	t.Helper()
	out, errOut, code := runHookBinary(t, hook, cfg, hookJSON(session, cwd, "Bash", map[string]any{"command": command, "description": "a test"}))
	if code != 0 {
		t.Fatalf("hook: exit %d, stderr %q", code, errOut)
	}
	if out == "" {
		t.Fatalf("the hook let %q through as it stands, unwalled", command)
	}
	a := readAnswer(t, out).HookSpecificOutput
	if a.PermissionDecision == "deny" {
		return claudeBash{denied: a.PermissionDecisionReason}
	}
	up := a.UpdatedInput
	if a.PermissionDecision != "allow" || up == nil || up["description"] != "a test" {
		t.Fatalf("the hook's answer: %q", out)
	}
	run, _ := up["command"].(string)
	var r claudeBash
	r.stdout, r.stderr, r.code = runIn(t, cwd, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, "bash", "-c", run)
	r.rewritten, r.rewrittenTimeout, r.command = true, up["timeout"], run
	return r
}

// TestWallHookExec runs Claude Code's Bash calls as Claude Code runs them
// under the hook — the hook's updatedInput, through bash -c, from the
// session's cwd — with the wall required, and checks the disk and the
// audit log after each: an allowed command runs inside the wall and its
// changes are applied; one the analysis refuses never runs; one whose
// real changes are refused (python3 rewriting an existing file of a
// create zone, or removing one of an edit zone) exits non-zero and leaves nothing on
// the disk. Through vaultgate hook (exec re-executes itself as the wall's
// helper) and vaultgate-hook (exec is the vaultgate beside it, with
// vaultgate-wall).
func TestWallHookExec(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the end-to-end wall test runs as root (CI runs it)")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatalf("wall: /usr/bin/python3 is missing (apt-get install python3)")
	}
	for name, hook := range map[string][]string{
		"vaultgate hook": {binary(t), "hook"},
		"vaultgate-hook": {filepath.Join(bundle(t), "vaultgate-hook")},
	} {
		t.Run(name, func(t *testing.T) { testWallHookExec(t, hook) })
	}
}

func testWallHookExec(t *testing.T, hook []string) {
	vault, cfg, auditPath, guarded := hookVault(t, "required")
	notes := filepath.Join(vault, "notes")
	outside := guarded[3]
	before := disk(t, vault, guarded)
	lines := len(verifiedAudit(t, auditPath))
	// after checks the guarded files are as they were, and that the call
	// added the audit lines of tools want (the hook's, then exec's)
	after := func(what string, want ...string) []audit.Record {
		t.Helper()
		if now := disk(t, vault, guarded); !mapsEqual(now, before) {
			t.Errorf("%s: the disk changed:\n%v\nwas\n%v", what, now, before)
		}
		recs := verifiedAudit(t, auditPath)
		added := recs[lines:]
		lines = len(recs)
		var tools []string
		for _, r := range added {
			tools = append(tools, string(r.Via)+":"+r.Tool)
		}
		if !slices.Equal(tools, want) {
			t.Errorf("%s: audit lines %q, want %q", what, tools, want)
		}
		for _, r := range added {
			if r.Session != "claude-1" {
				t.Errorf("%s: line of session %q", what, r.Session)
			}
		}
		return added
	}

	// allowed: runs from the cwd, inside the wall; its change is applied
	r := runClaudeBash(t, hook, cfg, "claude-1", notes, "echo made > new.md && head -c 0 ideas.md && echo ok")
	if r.denied != "" || r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("allowed: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(notes, "new.md")); string(b) != "made\n" {
		t.Errorf("new.md holds %q", b)
	}
	recs := after("allowed", "hook:Bash", "exec:bash")
	if x := recs[1]; x.Outcome != "ok" || !slices.Contains(x.Wall, "overlay") || len(x.Real) != 1 || x.Real[0].Path != "notes/new.md" {
		t.Errorf("exec's line: %+v", x)
	}

	// a program of unknown effect runs, and the wall holds it
	script := `import os
open("notes/py.md", "w").write("from python\n")
for p in ["мета/план.md", "notes/private/diary.md", "` + outside + `", "💬 чаты/new-chat.md"]:
    try:
        open(p, "a").write("x")
        print("WROTE", p)
    except OSError as e:
        print("refused", p, e.strerror)
print("hidden visible" if os.path.exists("notes/private/diary.md") else "hidden absent")
`
	os.WriteFile(filepath.Join(vault, "notes/t.py"), []byte(script), 0o644)
	before = disk(t, vault, guarded)
	lines = len(verifiedAudit(t, auditPath))
	r = runClaudeBash(t, hook, cfg, "claude-1", vault, "/usr/bin/python3 notes/t.py")
	// (the outside file may be written in the wall's own root, which
	// is thrown away: the disk check below says it was not reached)
	if r.denied != "" || strings.Contains(r.stdout, "WROTE мета") || strings.Contains(r.stdout, "WROTE notes/private") ||
		!strings.Contains(r.stdout, "hidden absent") {
		t.Fatalf("python under the wall: %+v", r)
	}
	// it created a file in the create zone too: new, so allowed
	if r.code != 0 {
		t.Errorf("python: exit %d, %+v", r.code, r)
	}
	if b, _ := os.ReadFile(filepath.Join(notes, "py.md")); string(b) != "from python\n" {
		t.Errorf("py.md holds %q", b)
	}
	os.Remove(filepath.Join(vault, "💬 чаты/new-chat.md"))
	after("python", "hook:Bash", "exec:bash")

	// refused by the analysis: never runs; the hook's line alone
	for _, c := range []struct{ cwd, command, reason string }{
		{notes, "cat private/diary.md", "hidden"},
		{notes, "echo x > ../мета/план.md", "zone protected"},
		{vault, "echo x > " + quote(outside), "outside the vault"},
		{vault, "echo forged >> " + quote(auditPath), "outside the vault"},
		{notes, "echo x > '../💬 чаты/2026-11-30.md'", "zone create"},
		{notes, "rm ideas.md", "never delete"},
	} {
		r := runClaudeBash(t, hook, cfg, "claude-1", c.cwd, c.command)
		if r.rewritten || !strings.Contains(r.denied, c.reason) {
			t.Errorf("%q: %+v, want a deny for %q", c.command, r, c.reason)
		}
		after(c.command, "hook:Bash")
	}

	// refused at the commit: it ran, but nothing reaches the disk, and
	// Claude Code sees a failure with vaultgate's reason
	for _, c := range []struct{ cwd, command, reason string }{
		{vault, `/usr/bin/python3 -c 'open("💬 чаты/2026-11-30.md", "w").write("rewritten")'; echo ran`, "zone create"},
		{notes, `/usr/bin/python3 -c 'import os; os.remove("ideas.md")'; echo ran`, `delete "notes/ideas.md": zone edit`},
	} {
		r := runClaudeBash(t, hook, cfg, "claude-1", c.cwd, c.command)
		if !r.rewritten || r.code == 0 || r.stdout != "ran\n" || !strings.Contains(r.stderr, c.reason) || !strings.Contains(r.stderr, "vaultgate exec") {
			t.Errorf("%q: %+v", c.command, r)
		}
		recs := after(c.command, "hook:Bash", "exec:bash")
		if len(recs) == 2 && (recs[1].Outcome != "failed" || recs[1].Error == "") {
			t.Errorf("%q: exec's line %+v", c.command, recs[1])
		}
	}

	// the command arrives intact, whatever it holds
	for _, c := range hardCommands {
		want, _, _ := runIn(t, notes, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, "bash", "-c", c)
		r := runClaudeBash(t, hook, cfg, "claude-1", notes, c)
		if r.code != 0 || r.stdout != want {
			t.Errorf("%q:\n got %+v\nwant %q", c, r, want)
		}
		after(c, "hook:Bash", "exec:bash")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestWallRequiredWithoutWall: where the wall can't be raised (here its
// helper fails) and wall = "required", the hook denies Bash with the
// reason, and exec refuses to run it.
func TestWallRequiredWithoutWall(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"vaultgate", "vaultgate-hook"} {
		data, err := os.ReadFile(filepath.Join(bundle(t), name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o755)
	}
	os.WriteFile(filepath.Join(dir, "vaultgate-wall"), []byte("#!/bin/sh\nexit 1\n"), 0o755)
	vault, cfg, auditPath, guarded := hookVault(t, "required")
	before := disk(t, vault, guarded)
	r := runClaudeBash(t, []string{filepath.Join(dir, "vaultgate-hook")}, cfg, "claude-1", vault, "echo x > notes/n.md")
	if r.rewritten || !strings.Contains(r.denied, `wall = "required"`) {
		t.Errorf("hook: %+v", r)
	}
	out, errOut, code := runIn(t, vault, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, filepath.Join(dir, "vaultgate"), "exec", "--config", cfg, "--", "echo x > notes/n.md")
	if code != exitRefused || out != "" || !strings.Contains(errOut, `wall = "required"`) {
		t.Errorf("exec: %q %q exit %d", out, errOut, code)
	}
	if _, err := os.Stat(filepath.Join(vault, "notes/n.md")); err == nil || !mapsEqual(disk(t, vault, guarded), before) {
		t.Error("the disk changed")
	}
	if n := len(verifiedAudit(t, auditPath)); n != 2 {
		t.Errorf("%d audit lines, want the hook's and exec's", n)
	}
}

// TestWallClaudeSandbox: with Claude Code's own sandbox on in its
// settings, wall = "required" denies Bash, unless the call runs outside
// that sandbox (dangerouslyDisableSandbox) or a settings file of higher
// precedence turns it off.
func TestWallClaudeSandbox(t *testing.T) {
	vault, cfg, _, _ := hookVault(t, "required")
	home, project := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	userSettings := filepath.Join(home, ".claude", "settings.json")
	os.WriteFile(userSettings, []byte(`{"sandbox": {"enabled": true}}`), 0o644)
	env := []string{"HOME=" + home, "CLAUDE_PROJECT_DIR=" + project, "PATH=/usr/bin:/bin"}
	hook := func(input map[string]any) string {
		t.Helper()
		cmd := []string{filepath.Join(bundle(t), "vaultgate-hook"), "--config", cfg}
		c := execCommandStdin(t, env, hookJSON("s", vault, "Bash", input), cmd...)
		return c
	}
	sandboxed := "Claude Code's own sandbox is on (" + userSettings + ")"
	if out := hook(map[string]any{"command": "ls"}); !strings.Contains(out, sandboxed) || !strings.Contains(out, `"deny"`) {
		t.Errorf("sandbox on: %s", out)
	}
	if out := hook(map[string]any{"command": "ls", "dangerouslyDisableSandbox": true}); strings.Contains(out, sandboxed) {
		t.Errorf("outside Claude Code's sandbox: %s", out)
	}
	os.WriteFile(filepath.Join(project, ".claude", "settings.local.json"), []byte(`{"sandbox": {"enabled": false}}`), 0o644)
	if out := hook(map[string]any{"command": "ls"}); strings.Contains(out, "sandbox is on") {
		t.Errorf("turned off by the project's local settings: %s", out)
	}
}

// execCommandStdin runs argv with env and stdin and returns its stdout,
// failing on a non-zero exit.
func execCommandStdin(t *testing.T, env []string, stdin string, argv ...string) string {
	t.Helper()
	cmd := execCmd(argv, env, stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", argv[0], err)
	}
	return string(out)
}
