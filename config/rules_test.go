package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const ruleConfig = `vault = "vault"

[[rules.deny]]
name   = "drafts_are_mine"
when   = 'effect.op in ["modify", "delete", "move-out"] && effect.path.startsWith("drafts/")'
reason = "drafts/ is the person's own"
reason_ru = "drafts/ — личная папка"

[[rules.deny.examples]]        # checked at start-up
deny  = { tool = "delete", args = { path = "drafts/x.md", depth = 2 } }
[[rules.deny.examples]]
allow = { tool = "read", args = { path = "drafts/x.md" }, via = "hook", now = 2026-01-01T23:00:00+01:00, session = { read = ["a"], count = { delete = 20 }, calls = 3 } }

[agents.bot]
token_env = "BOT"
[[agents.bot.rules.deny]]
name = "bot_no_bash"
when = '''
call.tool == "bash"'''
reason = "no bash for the bot"

[agents.solo]
token_env = "SOLO"
rules.inherit = false
[[agents.solo.rules.deny]]
name = "solo_only"
when = "true"
reason = "no"
`

func TestRulesDeclared(t *testing.T) {
	c, err := Load(writeConfig(t, ruleConfig))
	if err != nil {
		t.Fatal(err)
	}
	top, bot, solo := c.Policy(DefaultAgent).Rules, c.Policy("bot").Rules, c.Policy("solo").Rules
	if len(top) != 1 || len(bot) != 2 || len(solo) != 1 {
		t.Fatalf("rules: top %d, bot %d, solo %d", len(top), len(bot), len(solo))
	}
	d := top[0]
	if d.Name != "drafts_are_mine" || d.Key != "rules.deny[0]" || d.Pos != (Pos{Line: 5, Col: 11}) || d.File != c.File {
		t.Errorf("top rule %+v", d)
	}
	if d.ReasonIn("ru") != "drafts/ — личная папка" || d.ReasonIn("en") != "drafts/ is the person's own" {
		t.Errorf("reasons %q %q", d.ReasonIn("ru"), d.ReasonIn("en"))
	}
	if len(d.Examples) != 2 {
		t.Fatalf("examples %+v", d.Examples)
	}
	deny, allow := d.Examples[0], d.Examples[1]
	if !deny.Deny || deny.Tool != "delete" || deny.Args["depth"] != float64(2) || deny.Line != 9 || deny.Key != "rules.deny[0].examples[0]" {
		t.Errorf("deny example %+v", deny)
	}
	if allow.Deny || allow.Via != "hook" || allow.Line != 11 || !allow.Now.Equal(time.Date(2026, 1, 1, 22, 0, 0, 0, time.UTC)) ||
		allow.Session.Count["delete"] != 20 || allow.Session.Calls != 3 || len(allow.Session.Read) != 1 {
		t.Errorf("allow example %+v", allow)
	}
	if bot[0].Name != "drafts_are_mine" || bot[1].Name != "bot_no_bash" || bot[1].Key != "agents.bot.rules.deny[0]" || bot[1].Pos != (Pos{Line: 19, Col: 1}) {
		t.Errorf("bot rules %+v", bot)
	}
	if solo[0].Name != "solo_only" || solo[0].Pos != (Pos{Line: 27, Col: 9}) {
		t.Errorf("solo rules %+v", solo)
	}
}

func TestRuleErrorsNameTheKey(t *testing.T) {
	base := "vault = \"vault\"\n"
	cases := []struct{ body, key, text string }{
		{"[[rules.deny]]\nwhen = 'true'\nreason = 'r'", "rules.deny[0].name", "required"},
		{"[[rules.deny]]\nname = 'n'\nreason = 'r'", "rules.deny[0].when", "required"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'", "rules.deny[0].reason", "required"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'\nwehn = 'x'", "rules.deny.wehn", "unknown key"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'\n[[rules.deny.examples]]\ndeny = {tool = 'read'}\nallow = {tool = 'read'}", "rules.deny[0].examples[0]", "not both"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'\n[[rules.deny.examples]]\n", "rules.deny[0].examples[0]", "give deny"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'\n[[rules.deny.examples]]\ndeny = {args = {}}", "rules.deny[0].examples[0]", "no tool"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'\n[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'", "rules.deny", "both named"},
		{"[rules]\ninherit = false", "rules.inherit", "only an [agents.NAME]"},
		{"[[rules.deny]]\nname = 'n'\nwhen = 'true'\nreason = 'r'\n[agents.b]\ntoken_env = 'B'\n[[agents.b.rules.deny]]\nname = 'n'\nwhen = 'false'\nreason = 'r'", "agents.b.rules.deny", "rules.inherit = false"},
	}
	for _, c := range cases {
		_, err := Load(writeConfig(t, base+c.body))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%q: %v, want key %s and %q", c.body, err, c.key, c.text)
		}
	}
}
