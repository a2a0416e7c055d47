package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sessionRules is a config with a CEL rule that counts the session's
// deletes, in a write zone where bash may delete.
const sessionRules = `vault = "vault"
[audit]
path = "state/audit.jsonl"
[zones]
write = ["."]
protected = [".obsidian"]
[bash]
wall = "required"
timeout = "20s"

[[rules.deny]]
name = "three_deletes"
when = 'effect.op == "delete" && session.count["delete"] >= 3'
reason = "no more than 3 deletes per session"
`

// TestWallHookExecOneSession: a Claude Code Bash judged by the hook and
// run by the exec its rewrite names is one call of one session, under a
// config with [[rules.deny]]: exec continues the hook's call by the id it
// was issued (same session, same rules), its audit line names the hook's,
// its real deletes count for the session, so the fourth delete is refused
// by the rule — and a rewrite run twice, or with another command, runs
// nothing.
func TestWallHookExecOneSession(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the end-to-end wall test runs as root (CI runs it)")
	}
	for name, hook := range map[string][]string{
		"vaultgate hook": {binary(t), "hook"},
		"vaultgate-hook": {filepath.Join(bundle(t), "vaultgate-hook")},
	} {
		t.Run(name, func(t *testing.T) { testHookExecOneSession(t, hook) })
	}
}

func testHookExecOneSession(t *testing.T, hook []string) {
	vault, cfg, auditPath := sampleVault(t)
	if err := os.WriteFile(cfg, []byte(sessionRules), 0o644); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(vault, "notes")
	for i := range 5 {
		os.WriteFile(filepath.Join(notes, "d"+string(rune('0'+i))+".md"), []byte("x\n"), 0o644)
	}
	// Each rm is a Bash of its own, as Claude Code makes them; the deletes
	// are real only once exec has run them, and are counted so.
	var rewrites []string
	for i := range 3 {
		name := "d" + string(rune('0'+i)) + ".md"
		r := runClaudeBash(t, hook, cfg, "claude-7", notes, "rm "+name)
		if r.denied != "" || r.code != 0 {
			t.Fatalf("rm %s: %+v", name, r)
		}
		if _, err := os.Lstat(filepath.Join(notes, name)); !os.IsNotExist(err) {
			t.Fatalf("rm %s: the note is still there (%v)", name, err)
		}
		rewrites = append(rewrites, r.command)
	}
	r := runClaudeBash(t, hook, cfg, "claude-7", notes, "rm d3.md")
	if !strings.Contains(r.denied, "no more than 3 deletes per session") {
		t.Fatalf("the fourth delete of the session: %+v", r)
	}
	if _, err := os.Lstat(filepath.Join(notes, "d3.md")); err != nil {
		t.Fatalf("the refused delete removed the note: %v", err)
	}
	// Another Claude Code session counts from zero.
	if r := runClaudeBash(t, hook, cfg, "claude-8", notes, "rm d3.md"); r.denied != "" || r.code != 0 {
		t.Fatalf("another session's first delete: %+v", r)
	}

	// The audit: each exec line continues the hook line that allowed it,
	// in the same session.
	recs := verifiedAudit(t, auditPath)
	byID := map[string]int{}
	for i, rec := range recs {
		byID[rec.ID] = i
	}
	execs := 0
	for _, rec := range recs {
		if rec.Via != "exec" {
			continue
		}
		execs++
		i, ok := byID[rec.Continues]
		if !ok {
			t.Errorf("exec line %s continues %q, which is no line of the log", rec.ID, rec.Continues)
			continue
		}
		if h := recs[i]; h.Via != "hook" || h.Tool != "Bash" || h.Decision != "allow" || h.Session != rec.Session {
			t.Errorf("exec line %s continues %+v", rec.ID, h)
		}
		if rec.Session != "claude-7" && rec.Session != "claude-8" {
			t.Errorf("exec line %s is of session %q", rec.ID, rec.Session)
		}
	}
	if execs != 4 {
		t.Errorf("%d exec lines, want 4", execs)
	}

	// A rewrite is good for one run: again, it runs nothing; with its
	// command swapped, nothing either.
	os.WriteFile(filepath.Join(notes, "d0.md"), []byte("back\n"), 0o644)
	env := []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	_, errOut, code := runIn(t, notes, env, "bash", "-c", rewrites[0])
	if code != 125 || !strings.Contains(errOut, "spent") {
		t.Errorf("a rewrite run again: exit %d, %q", code, errOut)
	}
	swapped := regexp.MustCompile(`--command-b64 \S+`).ReplaceAllString(rewrites[1], "--command-b64 cm0gZDAubWQ=") // rm d0.md
	_, errOut, code = runIn(t, notes, env, "bash", "-c", swapped)
	if code != 125 || !strings.Contains(errOut, "call id") {
		t.Errorf("a rewrite with another command: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(notes, "d0.md")); string(b) != "back\n" {
		t.Errorf("a spent or swapped call id ran: d0.md holds %q", b)
	}
	// Each is a line of its own, an error that names the call id.
	refused := 0
	for _, rec := range verifiedAudit(t, auditPath)[len(recs):] {
		if rec.Via == "exec" && rec.Decision == "error" && strings.Contains(rec.Error, "call id") && rec.Continues == "" {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d audit lines for the spent and the swapped call id, want 2", refused)
	}
}
