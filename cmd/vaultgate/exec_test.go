package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/audit"
)

// run runs argv in dir with env and returns what it printed and its exit
// status.
func runIn(t *testing.T, dir string, env []string, argv ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// quote is a word as bash reads it back: single-quoted.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// hardCommands hold what a command line can hold that quoting gets wrong:
// both quotes, $, backticks, backslashes, newlines, a heredoc, unicode.
var hardCommands = []string{
	`printf '%s|' "it's" 'a"b' '$HOME' "\$(no)" '` + "`x`" + `' 'back\slash' 'ёж 🦔'; echo`,
	"printf 'line1\\nline2\\n'\necho \"two\nlines\"",
	"cat <<'EOF'\n$NOT `expanded` \\n\nEOF",
	`x='a b'; echo "[$x]" "$((6*7))" $'tab\there' "` + "`echo bt`" + `"`,
	"echo 'semi;colon && pipe | amp &' # trailing comment",
	"echo 'не ascii: «ёлка» 中文 🎄'",
}

func execEnv(t *testing.T) []string {
	return []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
}

// TestExecRunsTheCommandIntact: whatever quoting a command holds, exec
// runs it as bash -c runs it — given after --, single-quoted on a shell's
// command line, or base64-encoded — prints its own output and exits
// with its own status, and writes one audit line via "exec" under the
// session label it is given.
func TestExecRunsTheCommandIntact(t *testing.T) {
	bin := binary(t)
	vault, cfg, auditPath := sampleVault(t)
	appendConfig(t, cfg, "[bash]\nwall = \"off\"\n")
	notes := filepath.Join(vault, "notes")
	env := execEnv(t)
	for _, c := range hardCommands {
		want, wantErr, wantCode := runIn(t, notes, env, "bash", "-c", c)
		if wantCode != 0 || want == "" {
			t.Fatalf("%q: bash itself: exit %d, %q %q", c, wantCode, want, wantErr)
		}
		for how, argv := range map[string][]string{
			"argument": {bin, "exec", "--config", cfg, "--session", "lbl", "--", c},
			"quoted":   {"bash", "-c", quote(bin) + " exec --config " + quote(cfg) + " --session lbl -- " + quote(c)},
			"base64":   {bin, "exec", "--config", cfg, "--session", "lbl", "--command-b64", base64.StdEncoding.EncodeToString([]byte(c))},
		} {
			got, errOut, code := runIn(t, notes, env, argv...)
			if got != want || code != 0 {
				t.Errorf("%s %q: exit %d\n got %q\nwant %q\nstderr %q", how, c, code, got, want, errOut)
			}
		}
	}
	var recs []audit.Record
	audit.Read(auditPath, func(r audit.Record) error { recs = append(recs, r); return nil })
	if len(recs) != 3*len(hardCommands) {
		t.Fatalf("%d audit lines for %d calls", len(recs), 3*len(hardCommands))
	}
	for i, r := range recs {
		if r.Via != "exec" || r.Tool != "bash" || r.Session != "lbl" || r.Decision != "allow" || r.Args["command"] != hardCommands[i/3] {
			t.Errorf("audit line %d: %+v", i, r)
		}
	}

	// its own streams and status
	out, errOut, code := runIn(t, notes, env, bin, "exec", "--config", cfg, "--", "echo out; echo err >&2; exit 7")
	if out != "out\n" || errOut != "err\n" || code != 7 {
		t.Errorf("streams: %q %q exit %d", out, errOut, code)
	}
	// its cwd is the caller's: the analysis and the run alike
	out, _, code = runIn(t, notes, env, bin, "exec", "--config", cfg, "--", "pwd; echo made > here.md")
	if real, _ := filepath.EvalSymlinks(notes); code != 0 || strings.TrimSpace(out) != real {
		t.Errorf("pwd: %q exit %d", out, code)
	}
	if b, err := os.ReadFile(filepath.Join(notes, "here.md")); err != nil || string(b) != "made\n" {
		t.Errorf("here.md: %q %v", b, err)
	}
	// refused: vaultgate's reason on stderr, 125, nothing run
	out, errOut, code = runIn(t, notes, env, bin, "exec", "--config", cfg, "--", "echo ran; echo x > ../мета/план.md")
	if code != exitRefused || out != "" || !strings.Contains(errOut, "vaultgate exec: refused") || !strings.Contains(errOut, "zone protected") {
		t.Errorf("refused: %q %q exit %d", out, errOut, code)
	}
	// a folder outside the vault
	out, errOut, code = runIn(t, t.TempDir(), env, bin, "exec", "--config", cfg, "--", "echo ran")
	if code != exitRefused || out != "" || !strings.Contains(errOut, "inside the vault") {
		t.Errorf("outside: %q %q exit %d", out, errOut, code)
	}
	// a timeout past max_timeout is refused; one within it ends the command
	if _, errOut, code = runIn(t, notes, env, bin, "exec", "--config", cfg, "--timeout", "11m", "--", "true"); code != exitRefused || !strings.Contains(errOut, "timeout") {
		t.Errorf("--timeout 11m: %q exit %d", errOut, code)
	}
	if _, errOut, code = runIn(t, notes, env, bin, "exec", "--config", cfg, "--timeout", "1s", "--", "sleep 30"); code != 124 || !strings.Contains(errOut, "timed out") {
		t.Errorf("--timeout 1s: %q exit %d", errOut, code)
	}
	// usage
	for _, argv := range [][]string{
		{bin, "exec", "--config", cfg},
		{bin, "exec", "--config", cfg, "--command-b64", "!!", "--"},
		{bin, "exec", "--config", cfg, "--command-b64", "ZWNobw==", "--", "echo"},
	} {
		if _, _, code := runIn(t, notes, env, argv...); code != exitUsage {
			t.Errorf("%q: exit %d", argv[2:], code)
		}
	}
}

// appendConfig adds TOML to a config file.
func appendConfig(t *testing.T, cfg, more string) {
	t.Helper()
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(body, more...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hookAnswer is the PreToolUse answer as Claude Code reads it.
type hookAnswer struct {
	HookSpecificOutput struct {
		HookEventName, PermissionDecision, PermissionDecisionReason string
		UpdatedInput                                                map[string]any
	}
}

func readAnswer(t *testing.T, out string) hookAnswer {
	t.Helper()
	var a hookAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("the hook's answer is not JSON: %q", out)
	}
	if a.HookSpecificOutput.HookEventName != "PreToolUse" {
		t.Errorf("answer %q", out)
	}
	return a
}

// TestHookNamesExec: the rewrite names a binary of this build by absolute
// path, followed by exec — vaultgate hook alone itself, and where
// vaultgate-hook lies beside vaultgate, vaultgate-hook (whose exec hands
// the command to the judge) — and without a vaultgate beside it,
// vaultgate-hook denies.
func TestHookNamesExec(t *testing.T) {
	vault, cfg, _ := sampleVault(t)
	appendConfig(t, cfg, "[bash]\nwall = \"off\"\n")
	call := hookJSON("s", vault, "Bash", map[string]any{"command": "ls"})
	for hook, want := range map[string]string{
		binary(t): binary(t),
		filepath.Join(bundle(t), "vaultgate-hook"): filepath.Join(bundle(t), "vaultgate-hook"), // the lean exec client beside vaultgate
	} {
		argv := []string{hook}
		if filepath.Base(hook) == "vaultgate" {
			argv = append(argv, "hook")
		}
		out, errOut, code := runHookBinary(t, argv, cfg, call)
		a := readAnswer(t, out)
		cmd, _ := a.HookSpecificOutput.UpdatedInput["command"].(string)
		words := bashWords(t, cmd)
		if code != 0 || a.HookSpecificOutput.PermissionDecision != "allow" || len(words) < 2 || words[0] != want || words[1] != "exec" {
			t.Errorf("%s: exit %d, %q, stderr %q", hook, code, out, errOut)
		}
	}
	alone := loneHook(t)
	// It hands every call to the vaultgate beside it: alone, it can only deny.
	if out, errs, code := runHookBinary(t, []string{alone}, cfg, call); code != 2 || out != "" || !strings.Contains(errs, "no vaultgate binary beside") {
		t.Errorf("vaultgate-hook alone: exit %d, %q %q", code, out, errs)
	}
}

// bashWords is line split into words as bash splits it.
func bashWords(t *testing.T, line string) []string {
	t.Helper()
	out, err := exec.Command("bash", "-c", `w() { printf '%s\0' "$@"; }; w `+line).Output()
	if err != nil {
		t.Fatalf("bash could not read %q: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}

// execCmd is argv with env and stdin.
func execCmd(argv, env []string, stdin string) *exec.Cmd {
	c := exec.Command(argv[0], argv[1:]...)
	c.Env, c.Stdin = env, strings.NewReader(stdin)
	return c
}
