package server

import (
	"context"
	"github.com/vaultgate/vaultgate/claude"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
)

// The gate's and the hook's own texts are in the agent's language too.
func TestGateTextsInAgentsLanguage(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../testdata/vault", vault)
	auditPath := filepath.Join(dir, "state", "audit.jsonl")
	cfg := loadConfig(t, `vault = "`+vault+`"
lang = "ru"
[audit]
path = "`+auditPath+`"
[zones]
edit      = ["."]
protected = ["мета"]
hidden    = ["notes/private?"] # not in the sample vault: expected later
`)
	g := serverGate(t, cfg)
	p := cfg.Policy(config.DefaultAgent)
	c := Caller{Via: ViaStdio, Policy: p, Session: &policy.Session{ID: "s", State: policy.NewState()}}
	ctx := context.Background()

	for _, c2 := range []struct {
		tool string
		raw  any
		want string
	}{
		{"read", []any{"x"}, "read: аргументы должны быть объектом JSON"},
		{"teleport", nil, `неизвестный инструмент "teleport"`},
		{"read", map[string]any{}, `read: аргумент "path" обязателен`},
		{"delete", map[string]any{"path": "мета/x.md"}, `удалить «мета/x.md» нельзя: зона protected (только чтение).`},
	} {
		if got := g.Call(ctx, c, c2.tool, c2.raw, Serve).Text(); !strings.Contains(got, c2.want) {
			t.Errorf("%s %v: %q, want %q", c2.tool, c2.raw, got, c2.want)
		}
	}

	hook := &claude.HookInput{SessionID: "s", Cwd: vault, HookEventName: "PreToolUse", ToolName: "WebFetch", ToolInput: map[string]any{}}
	if a, err := g.Hook(ctx, p, hook); err != nil || !strings.HasPrefix(a.Deny, "WebFetch здесь запрещён") {
		t.Errorf("hook: %q %v", a.Deny, err)
	}

	g.log.Close() // every later Write fails
	o := g.Call(ctx, c, "list", map[string]any{}, Serve)
	if o.Result != nil || !strings.Contains(o.Text(), "журнал аудита не удалось записать") {
		t.Errorf("unrecorded call: %q", o.Text())
	}
}
