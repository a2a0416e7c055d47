package tools

import (
	"errors"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/shell"
)

// Every reason the analysis can give for an exec has its own words.
func TestExecWhysWorded(t *testing.T) {
	seen := map[say.ExecWhy]shell.ExecWhy{}
	n := 0
	for w := shell.WhyNone + 1; w.String() != "unknown"; w++ {
		n++
		m, ok := execWhys[w]
		if !ok {
			t.Errorf("shell.%s has no words in execWhys", w)
			continue
		}
		if other, dup := seen[m]; dup {
			t.Errorf("shell.%s and shell.%s share the words %q", w, other, m.Text(say.English))
		}
		seen[m] = w
	}
	if n == 0 || len(execWhys) != n {
		t.Errorf("%d reasons in shell, %d worded", n, len(execWhys))
	}
}

// Argument errors are typed, and worded in the agent's language.
func TestArgErrorInAgentsLanguage(t *testing.T) {
	s, _ := realVault(t)
	for _, c := range []struct {
		lang          say.Lang
		args          map[string]any
		arg, contains string
		problem       say.ArgProblem
	}{
		{say.English, map[string]any{}, "path", `read: argument "path" is required`, say.ArgRequired{}},
		{say.Russian, map[string]any{}, "path", `read: аргумент "path" обязателен`, say.ArgRequired{}},
		{say.Russian, map[string]any{"path": 7}, "path", "должен быть строкой", say.ArgNotString{}},
		{say.Russian, map[string]any{"path": "notes/a.md", "x": 1}, "x", "не аргумент этого инструмента", say.ArgUnknown{}},
		{say.English, map[string]any{"path": "a\x00b"}, "path", "NUL", say.ArgNUL{}},
		{say.English, map[string]any{"path": ""}, "path", "empty path", say.ArgEmptyPath{}},
		{say.Russian, map[string]any{"path": "notes/a.md", "offset": -1}, "offset", "не может быть отрицательным", say.ArgNegative{}},
		{say.English, map[string]any{"path": "notes/a.md", "limit": -1}, "limit", "must not be negative", say.ArgNegative{}},
		{say.English, map[string]any{"path": "notes/a.md", "limit": 1.5}, "limit", "must be a whole number", say.ArgNotWhole{}},
	} {
		s.Lang = c.lang
		_, err := s.Plan("read", c.args)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Tool != "read" || ae.Arg != c.arg || ae.Problem != c.problem || ae.Lang != c.lang {
			t.Errorf("%s %v: %#v", c.lang, c.args, err)
			continue
		}
		if !strings.Contains(err.Error(), c.contains) {
			t.Errorf("%s %v: %q lacks %q", c.lang, c.args, err, c.contains)
		}
	}
}

func TestUnknownToolInAgentsLanguage(t *testing.T) {
	s := &Set{Vault: &Vault{Root: "/vault"}, Lang: say.Russian}
	_, err := s.Plan("teleport", nil)
	if !errors.Is(err, ErrUnknownTool) || err.Error() != `неизвестный инструмент "teleport"` {
		t.Errorf("%v", err)
	}
}
