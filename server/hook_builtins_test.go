package server

import (
	"encoding/json"
	"github.com/vaultgate/vaultgate/claude"
	"os"
	"strings"
	"testing"
)

// Claude Code's own tools that touch no file pass with an empty [hook]
// allow; those that touch files in ways the hook can't judge are refused
// with their reason even when allow matches them; WebFetch and WebSearch
// stay a choice of allow; an unknown tool is refused.
func TestHookBuiltinTable(t *testing.T) {
	passing, refused := claude.Named(claude.Passed), claude.Named(claude.Refused)
	for _, extra := range []string{"", "[hook]\nallow = [\"*\"]\n"} {
		g, p, v, auditPath := hookGate(t, extra)
		for _, tool := range passing {
			if deny := hookCall(t, g, p, "s", v, tool, map[string]any{}); deny != "" {
				t.Errorf("allow %q: %s touches no file but is denied: %s", extra, tool, deny)
			}
		}
		for _, tool := range refused {
			deny := hookCall(t, g, p, "s", v, tool, map[string]any{"command": "true"})
			if !strings.Contains(deny, tool+" is not allowed here: ") || strings.Contains(deny, "[hook] allow") {
				t.Errorf("allow %q: %s: %q, want its own reason for refusing it", extra, tool, deny)
			}
		}
		durable := hookCall(t, g, p, "s", v, "CronCreate", map[string]any{"cron": "7 * * * *", "prompt": "x", "durable": true})
		if !strings.Contains(durable, ".claude/scheduled_tasks.json") {
			t.Errorf("allow %q: a durable CronCreate: %q", extra, durable)
		}
		web := hookCall(t, g, p, "s", v, "WebFetch", map[string]any{"url": "https://example.com"})
		if (extra == "") != (web != "") {
			t.Errorf("allow %q: WebFetch: %q", extra, web)
		}
		unknown := hookCall(t, g, p, "s", v, "Teleport", map[string]any{})
		if (extra == "") != strings.Contains(unknown, "A person can add it to [hook] allow") {
			t.Errorf("allow %q: an unknown tool: %q", extra, unknown)
		}
		// each refusal is the hook_scope rule's line; each pass a line too
		data, _ := os.ReadFile(auditPath)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var r struct{ Tool, Decision, Rule string }
			json.Unmarshal([]byte(l), &r)
			if r.Decision == "deny" && r.Rule != "hook_scope" {
				t.Errorf("a refused built-in is not hook_scope's: %s", l)
			}
		}
	}
}
