package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileName is a note's name as an agent may choose it to steer the
// terminal of the person who lists it: every C0 control but NUL (newline,
// tab and a lone carriage return among them), DEL, every C1 control, an
// erase, OSC 52 (the clipboard), a DCS and an APC string, and the bidi
// overrides, isolates and marks.
var hostileName = func() string {
	var b strings.Builder
	b.WriteString("notes/evil \x1b[2J\x1b]52;c;cm0gLXJmIH4K\x07\x1bPq#0~\x1b\\\x1b_Gf=100\x1b\\ ")
	for c := 1; c < 0x20; c++ {
		b.WriteByte(byte(c))
	}
	b.WriteByte(0x7f)
	for r := rune(0x80); r <= 0x9f; r++ {
		b.WriteRune(r)
	}
	b.WriteString("\u202a\u202b\u202c\u202d\u202egnp\u2066\u2067\u2068\u2069\u200e\u200f\u061c done.md")
	return b.String()
}()

// hostileBody is a note's content that erases its own diff line, writes
// over it, hides text and sets the clipboard, with every C0 control but
// NUL (which makes a file binary) and every C1 control.
var hostileBody = func() string {
	var b strings.Builder
	b.WriteString("harmless\n")
	b.WriteString("all good\rrm -rf ~ \x1b[2K\x1b[1G+looks fine\x1b[8mhidden\x1b[0m\n")
	b.WriteString("\x1b]52;c;cm0gLXJmIH4K\x07\x1b]52;c;eA==\x1b\\\x1bPq#0~\x1b\\\x1b_Gi=1\x1b\\\u009b2J\u009d52;c;eA==\u009c\n")
	b.WriteString("invoice\u202efdp.exe \u2066isolate\u2069 \u200f\u061c\n")
	for c := 1; c < 0x20; c++ {
		if c != '\n' {
			b.WriteByte(byte(c))
		}
	}
	b.WriteString("\x7f")
	for r := rune(0x80); r <= 0x9f; r++ {
		b.WriteRune(r)
	}
	b.WriteString("\n")
	return b.String()
}()

// rawControl finds the first character of out a terminal obeys, or that
// hides text, other than newline and tab: a C0 control, DEL, a C1 control,
// a bidi control, or a byte that is not UTF-8.
func rawControl(out string) (string, bool) {
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRuneInString(out[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			return fmt.Sprintf("the byte %#x at %d", out[i], i), true
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
			return fmt.Sprintf("%U at %d: …%q…", r, i, out[max(0, i-20):min(len(out), i+20)]), true
		}
		i += n
	}
	return "", false
}

// ownColours are the colours the CLI paints (visible.Paint).
var ownColours = regexp.MustCompile("\x1b\\[[0-9;]*m")

// escaped fails t when what a command printed holds a raw control.
func escaped(t *testing.T, what, stdout, stderr string) {
	t.Helper()
	for _, s := range []struct{ name, out string }{{"stdout", stdout}, {"stderr", stderr}} {
		if c, ok := rawControl(s.out); ok {
			t.Errorf("%s: %s holds %s", what, s.name, c)
		}
	}
}

// TestWhatThePersonReadsIsEscaped: a note whose name and content hold
// every terminal control, written and changed by the agent through the
// gate (MCP and vaultgate exec), reaches no command the person reads as a
// raw control — history, diff, undo, audit tail and stats, zones, check,
// rules, doctor, exec's own reasons — on a pipe as on a terminal; --raw
// prints the bytes, and exec passes the command's own output through.
func TestWhatThePersonReadsIsEscaped(t *testing.T) {
	bin := binary(t)
	vault, cfg, auditPath := sampleVault(t)
	appendConfig(t, cfg, "[bash]\nwall = \"off\"\n\n[[rules.deny]]\nname = \"no_zzz\"\nwhen = 'effect.path.contains(\"zzz\")'\nreason = \"zzz \\u001b]52;c;eA==\\u0007 \\u202e \\r is mine\"\n")
	hostileDir := "notes/dir \x1b[2J\u202e\r\x1b]52;c;eA==\x07"
	// A folder whose name is not UTF-8, with a raw C1 byte, as bash may make one.
	if err := os.Mkdir(filepath.Join(vault, "notes", "bad \xff\x9b2J dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	c := serveClient(t, bin, cfg)
	if text, isErr := callTool(t, c, "write", map[string]any{"path": hostileName, "content": "harmless\nall good\n"}); isErr {
		t.Fatal(text)
	}
	callTool(t, c, "read", map[string]any{"path": hostileName})
	if text, isErr := callTool(t, c, "write", map[string]any{"path": hostileName, "content": hostileBody}); isErr {
		t.Fatal(text)
	}
	if text, isErr := callTool(t, c, "write", map[string]any{"path": hostileDir + "/x.md", "content": "x\n"}); isErr {
		t.Fatal(text)
	}
	c.Close()
	ids := auditIDs(t, auditPath)
	modifyID := ids["write"][1]

	// exec: its own reason names the agent's path, escaped; the command's
	// own output passes through as it is.
	notes := filepath.Join(vault, "notes")
	session := "sess \x1b]52;c;eA==\x07\u202e"
	out, errOut, code := runIn(t, notes, execEnv(t), bin, "exec", "--config", cfg, "--session", session, "--", "printf '\\033]52;c;eA==\\007\\033[2J'")
	if code != 0 || out != "\x1b]52;c;eA==\x07\x1b[2J" {
		t.Errorf("exec passes the command's output through: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = runIn(t, notes, execEnv(t), bin, "exec", "--config", cfg, "--session", session, "--", "echo x > ../мета/"+ansiC("evil \x1b]52;c;eA==\x07\u202e\r.md"))
	if code != exitRefused || !strings.Contains(errOut, `vaultgate exec: refused`) || !strings.Contains(errOut, `\u202e\r.md`) {
		t.Errorf("exec refused: exit %d %q %q", code, out, errOut)
	}
	escaped(t, "exec's reason", out, errOut)

	nameShown := `evil \x1b[2J\x1b]52;c;cm0gLXJmIH4K\x07\x1bPq#0~\x1b\` // as Line shows it
	for _, c := range []struct {
		args []string
		want []string // in stdout, escaped
		raw  []string // in stdout, raw: --raw only
	}{
		{[]string{"history", "--config", cfg}, []string{nameShown, `\u202egnp`, `\x01\x02`, `\t\n\x0b`, `\u0085`}, nil},
		{[]string{"history", "--config", cfg, "--raw"}, nil, []string{"\x1b[2J\x1b]52;c;cm0gLXJmIH4K\x07\x1bPq", "\u009b\u009c", "\u202egnp"}},
		{[]string{"history", "--config", cfg, "--json"}, []string{`\u001b]52;c;cm0gLXJmIH4K\u0007`, `\u009b`, `\u202e`}, nil},
		{[]string{"diff", "--config", cfg, modifyID}, []string{"+++ b/notes/" + nameShown, "\n+all good\\rrm -rf ~ \\x1b[2K\\x1b[1G+looks fine\\x1b[8mhidden\\x1b[0m\n", `+\x1b]52;c;cm0gLXJmIH4K\x07`, `\u009b2J`, "+invoice\\u202efdp.exe", "\n-all good\n"}, nil},
		{[]string{"diff", "--config", cfg, "--raw", modifyID}, nil, []string{"+++ b/" + hostileName + "\n", "+all good\rrm -rf ~ \x1b[2K", "\x1b]52;c;cm0gLXJmIH4K\x07"}},
		{[]string{"audit", "tail", "--config", cfg, "-n", "50"}, []string{nameShown, `sess \x1b]52;c;eA==\x07\u202e`}, nil},
		{[]string{"audit", "tail", "--config", cfg, "-n", "50", "--raw"}, nil, []string{hostileName, session}},
		{[]string{"audit", "tail", "--config", cfg, "-n", "50", "--json"}, []string{`\u001b]52;c;eA==\u0007\u202e`}, nil},
		{[]string{"audit", "tail", "--config", cfg, "-n", "50", "--lines"}, []string{nameShown}, nil},
		{[]string{"audit", "stats", "--config", cfg}, []string{`sess \x1b]52;c;eA==\x07\u202e`}, nil},
		{[]string{"audit", "stats", "--config", cfg, "--json"}, []string{`sess \u001b]52;c;eA==\u0007\u202e`}, nil},
		{[]string{"zones", "--config", cfg, "--colour", "never"}, []string{`dir \x1b[2J\u202e\r\x1b]52;c;eA==\x07/`, `bad \xff\x9b2J dir/`}, nil},
		{[]string{"zones", "--config", cfg, "--colour", "always"}, []string{`dir \x1b[2J\u202e\r\x1b]52;c;eA==\x07/`}, nil},
		{[]string{"check", "--config", cfg, "delete", mustJSON(t, map[string]any{"path": "мета/" + hostileName})}, []string{nameShown}, nil},
		{[]string{"check", "--config", cfg, "write", mustJSON(t, map[string]any{"path": "notes/zzz\x1b[2J.md", "content": "x"})}, []string{`zzz\x1b[2J.md`, `zzz \x1b]52;c;eA==\x07 \u202e \r is mine`}, nil},
		{[]string{"rules", "--config", cfg}, []string{`zzz \x1b]52;c;eA==\x07 \u202e \r is mine`}, nil},
		{[]string{"undo", "--config", cfg, modifyID}, []string{"put back notes/" + nameShown}, nil},
	} {
		out, errOut, code := runBin(t, bin, c.args...)
		what := strings.Join(c.args[:1], " ") + " " + strings.Join(c.args[3:], " ")
		if c.args[0] == "audit" {
			what = "audit " + c.args[1] + " " + strings.Join(c.args[4:], " ")
		}
		if c.raw == nil {
			// the colours zones paints are its own
			escaped(t, what, ownColours.ReplaceAllString(out, ""), errOut)
		}
		if code != exitOK && c.args[0] != "check" {
			t.Errorf("%s: exit %d: %s", what, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", what, w, out)
			}
		}
		for _, w := range c.raw {
			if !strings.Contains(out, w) {
				t.Errorf("%s: stdout lacks the raw %q:\n%q", what, w, out)
			}
		}
		if strings.Contains(strings.Join(c.args, " "), "--json") {
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if !json.Valid([]byte(l)) && !json.Valid([]byte(out)) {
					t.Errorf("%s: not JSON: %s", what, l)
				}
			}
		}
	}

	// history --json keeps the name: the escapes are JSON's own.
	out, _, _ = runBin(t, bin, "history", "--config", cfg, "--json")
	found := false
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ Path string }
		if err := json.Unmarshal([]byte(l), &e); err == nil && e.Path == hostileName {
			found = true
		}
	}
	if !found {
		t.Errorf("history --json does not decode to the note's name:\n%s", out)
	}

	// doctor names the config and the vault, wherever the person put them.
	dir := filepath.Join(t.TempDir(), "cfg \x1b]52;c;eA==\x07\u202e\r")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(mustRead(t, cfg)), `vault = "vault"`, "vault = "+mustJSON(t, vault), 1)
	body = strings.Replace(body, `path = "state/audit.jsonl"`, "path = "+mustJSON(t, filepath.Dir(auditPath)+"/audit.jsonl"), 1)
	odd := filepath.Join(dir, "vault.toml")
	if err := os.WriteFile(odd, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ = runBin(t, bin, "doctor", "--config", odd)
	escaped(t, "doctor", out, errOut)
	if !strings.Contains(out, `cfg \x1b]52;c;eA==\x07\u202e\r/vault.toml loads`) {
		t.Errorf("doctor:\n%s%s", out, errOut)
	}
	// a failure names what was typed, escaped
	out, errOut, _ = runBin(t, bin, "diff", "--config", cfg, "no-such-\x1b[2J\u202e")
	escaped(t, "diff of an unknown id", out, errOut)
	if !strings.Contains(errOut, `no-such-\x1b[2J\u202e: no change`) {
		t.Errorf("diff of an unknown id: %q", errOut)
	}
}

// ansiC is s as a bash $'…' word, every byte as \xNN.
func ansiC(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02x`, s[i])
	}
	b.WriteString("'")
	return b.String()
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
