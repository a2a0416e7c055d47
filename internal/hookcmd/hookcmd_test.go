package hookcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// vault is a copy of the sample vault with a config that protects мета.
func vault(t testing.TB) (dir, cfg string) {
	t.Helper()
	root := t.TempDir()
	dir = filepath.Join(root, "vault")
	vaulttest.CopyDir(t, "../../testdata/vault", dir)
	cfg = filepath.Join(root, "c.toml")
	body := "vault = \"vault\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nedit = [\".\"]\nprotected = [\"мета\"]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

func input(cwd, tool string, args map[string]any) string {
	b, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": args})
	return string(b)
}

func TestRun(t *testing.T) {
	dir, cfg := vault(t)
	for _, c := range []struct {
		name        string
		flags       Flags
		stdin       string
		code        int
		out, errOut string // substrings; "" for out means nothing printed
	}{
		{"allowed", Flags{Config: cfg}, input(dir, "Read", map[string]any{"file_path": filepath.Join(dir, "Welcome.md")}), ExitAnswered, `"permissionDecision":"allow"`, ""},
		{"denied", Flags{Config: cfg}, input(dir, "Write", map[string]any{"file_path": filepath.Join(dir, "мета/x.md"), "content": "x"}), ExitAnswered, `"permissionDecision":"deny"`, ""},
		{"no config", Flags{}, input(dir, "Read", nil), ExitDenied, "", "no --config"},
		{"unknown agent", Flags{Config: cfg, Agent: "nobody"}, input(dir, "Read", nil), ExitDenied, "", `no agent "nobody"`},
		{"empty stdin", Flags{Config: cfg}, "", ExitDenied, "", "stdin is empty"},
		{"broken JSON", Flags{Config: cfg}, "{", ExitDenied, "", "not JSON"},
		{"missing config", Flags{Config: filepath.Join(t.TempDir(), "none.toml")}, input(dir, "Read", nil), ExitDenied, "", "config:"},
	} {
		if c.flags.Agent == "" {
			c.flags.Agent = "default"
		}
		var out, errOut bytes.Buffer
		code := Run(c.flags, strings.NewReader(c.stdin), &out, &errOut)
		if code != c.code || (c.out == "") != (out.Len() == 0) || !strings.Contains(out.String(), c.out) || !strings.Contains(errOut.String(), c.errOut) {
			t.Errorf("%s: exit %d, out %q, err %q; want exit %d, out with %q, err with %q", c.name, code, out.String(), errOut.String(), c.code, c.out, c.errOut)
		}
		if code == ExitDenied && !strings.HasPrefix(errOut.String(), "vaultgate hook: denied: ") {
			t.Errorf("%s: a deny of the hook's own must say so: %q", c.name, errOut.String())
		}
	}
}
