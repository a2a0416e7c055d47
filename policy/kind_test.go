package policy

import (
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// drop is a zone kind defined only in this test: a write-only inbox. The
// rules know nothing of it but its op set.
var drop, dropErr = zones.Define(zones.KindSpec{
	Name:    "drop",
	Allows:  zones.Ops(zones.OpCreate, zones.OpMoveIn),
	English: "drop new files in, never read them",
	Russian: "класть новые файлы, но не читать",
})

func TestDefinedKindThroughTheChain(t *testing.T) {
	if dropErr != nil {
		t.Fatal(dropErr)
	}
	tab, err := zones.New("/v", []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "inbox", Mode: drop}, {Path: "w", Mode: zones.Write}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := func(lang say.Lang, tool string, effects ...Effect) *Deny {
		t.Helper()
		Zoned(tab, effects)
		return Builtin(true).Judge(&ToolCall{Tool: tool, Effects: effects, Zones: tab, Lang: lang, Session: &Session{ID: "s", State: NewState()}})
	}
	if d := run("en", "create", Effect{Op: zones.OpCreate, Path: at("inbox/new.md")}); d != nil {
		t.Errorf("create in drop: %v", d)
	}
	if d := run("en", "move", Effect{Op: zones.OpMoveIn, Path: at("inbox/new.md"), Source: at("notes/a.md")}); d != nil {
		t.Errorf("move from edit into drop: %v", d)
	}
	for _, c := range []struct {
		lang say.Lang
		e    Effect
		want []string
	}{
		{"en", Effect{Op: zones.OpRead, Path: at("inbox/x.md")}, []string{"drop", "drop new files in, never read them"}},
		{"ru", Effect{Op: zones.OpRead, Path: at("inbox/x.md")}, []string{"drop", "класть новые файлы, но не читать"}},
		{"en", Effect{Op: zones.OpModify, Path: at("inbox/x.md"), Exists: true}, []string{"drop"}},
		{"en", Effect{Op: zones.OpMoveOut, Path: at("inbox/x.md")}, []string{"drop"}},
		// content from a drop folder would become readable in an edit zone
		{"en", Effect{Op: zones.OpMoveIn, Path: at("notes/x.md"), Source: at("inbox/x.md")}, []string{"inbox/x.md"}},
		// a read of the whole vault meets the inbox
		{"en", Effect{Op: zones.OpRead, Path: zones.VaultRoot(), Subtree: true}, []string{"hidden"}},
	} {
		d := run(c.lang, "x", c.e)
		if d == nil {
			t.Errorf("%s %s: allowed", c.e.Op, c.e.Path)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(d.Reason, w) {
				t.Errorf("%s %s: reason %q lacks %q", c.e.Op, c.e.Path, d.Reason, w)
			}
		}
	}
	// a move out of a drop folder, by any tool (the bash rule's own
	// judgement of defined kinds is tested beside it, in package tools)
	if d := run("en", "bash", Effect{Op: zones.OpMoveOut, Path: at("inbox/x.md"), Cause: "mv"}); d == nil {
		t.Error("mv out of a drop folder allowed")
	}
}
