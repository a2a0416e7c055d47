package transport

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// TestHTTPAgentRules: over HTTP each agent is held to its own config
// rules: the default agent to the top level's, the bot to those and its
// own (in Russian), the solo agent only to its own (rules.inherit =
// false); the audit names the rule that denied.
func TestHTTPAgentRules(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	t.Setenv("VAULTGATE_TOKEN", defaultToken)
	t.Setenv("BOT_TOKEN", botToken)
	t.Setenv("SOLO_TOKEN", "solo-token-0123456789abcdefgh")
	auditPath := filepath.Join(dir, "state", "audit.jsonl")
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+auditPath+`"
[zones]
edit = ["."]

[[rules.deny]]
name = "no_welcome"
when = 'effect.path.startsWith("Welcome") && effect.op != "read"'
reason = "Welcome.md stays as it is"
reason_ru = "Welcome.md остаётся как есть"

[agents.bot]
token_env = "BOT_TOKEN"
lang = "ru"
[[agents.bot.rules.deny]]
name = "bot_reads_notes_only"
when = 'effect.op == "read" && !effect.path.startsWith("notes/") && call.via == "http" && call.agent == "bot"'
reason = "the bot reads notes/ only"
reason_ru = "бот читает только notes/"

[agents.solo]
token_env = "SOLO_TOKEN"
rules.inherit = false
[[agents.solo.rules.deny]]
name = "solo_no_writes"
when = 'call.tool == "write"'
reason = "solo never writes"
`)
	g := serverGate(t, cfg) // compiles every agent's rules
	tokens, err := Tokens(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(g, tokens))
	t.Cleanup(srv.Close)
	def := httpClient(t, srv.URL, defaultToken)
	bot := httpClient(t, srv.URL, botToken)
	solo := httpClient(t, srv.URL, "solo-token-0123456789abcdefgh")
	edit := map[string]any{"path": "Welcome.md", "old_string": "Welcome", "new_string": "Hello"}
	welcome := map[string]any{"path": "Welcome.md"}
	for _, c := range []struct {
		who  string
		tool string
		args map[string]any
		want string // "" allowed
	}{
		{"default", "read", welcome, ""},
		{"default", "edit", edit, "Welcome.md stays as it is"},
		{"bot", "read", welcome, "бот читает только notes/"},
		{"bot", "read", map[string]any{"path": "notes/ideas.md"}, ""},
		{"bot", "write", map[string]any{"path": "Welcome2.md", "content": "x"}, "Welcome.md остаётся как есть"},
		{"solo", "read", welcome, ""},
		{"solo", "edit", edit, ""},
		{"solo", "write", map[string]any{"path": "notes/solo.md", "content": "x"}, "solo never writes"},
	} {
		cl := map[string]*client.Client{"default": def, "bot": bot, "solo": solo}[c.who]
		text, isErr := httpCall(t, cl, c.tool, c.args)
		switch {
		case c.want == "" && isErr:
			t.Errorf("%s %s %v: refused: %s", c.who, c.tool, c.args, text)
		case c.want != "" && (!isErr || text != c.want):
			t.Errorf("%s %s %v: %q, want %q", c.who, c.tool, c.args, text, c.want)
		}
	}
	rulesSeen := map[string]string{}
	audit.Read(auditPath, func(r audit.Record) error {
		if r.Decision == "deny" {
			rulesSeen[r.Agent+" "+r.Tool] = r.Rule
		}
		return nil
	})
	want := map[string]string{"default edit": "no_welcome", "bot read": "bot_reads_notes_only", "bot write": "no_welcome", "solo write": "solo_no_writes"}
	if len(rulesSeen) != len(want) {
		t.Errorf("denies in the audit: %v, want %v", rulesSeen, want)
	}
	for k, v := range want {
		if rulesSeen[k] != v {
			t.Errorf("audit: %s denied by %q, want %q", k, rulesSeen[k], v)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "Welcome.md")); !strings.Contains(string(b), "Hello") {
		t.Error("solo's edit (its rules do not inherit no_welcome) did not happen")
	}
}
