package transport

import (
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/server"
)

// What the model reads at initialize and in tools/list is in its language.
func TestInitializeInAgentsLanguage(t *testing.T) {
	cfg := loadConfig(t, `vault = "../testdata/vault"
lang = "ru"
[zones]
edit      = ["."]
protected = ["мета"]
hidden    = ["notes/private?"] # not in the sample vault: expected later
`)
	p := cfg.Policy(config.DefaultAgent)
	ins := instructions(p)
	for _, want := range []string{"Файловые инструменты", "- .: edit (создавать, менять и перемещать, но не удалять)\n", "- мета: protected (только чтение)\n"} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions lack %q:\n%s", want, ins)
		}
	}
	if strings.Contains(ins, "private") {
		t.Errorf("instructions name a hidden zone:\n%s", ins)
	}
	g := serverGate(t, cfg)
	ts := g.ToolSet(server.Caller{Policy: p}).Tools()
	if ts[0].Title != "Прочитать заметку" || !strings.HasPrefix(ts[0].Params[0].Description, "Путь к файлу") {
		t.Errorf("tools/list is not in the agent's language: %+v", ts[0])
	}
}
