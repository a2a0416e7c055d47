package policy_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// A rule of a library user's own: nothing but reading in drafts/, although
// the zone there is write. It goes after the built-in rules (in a server,
// through server.Gate.AddRules), so the zones speak first.
func ExampleRule() {
	noDrafts := policy.Rule{Name: "no_drafts", Check: func(c *policy.ToolCall) *policy.Deny {
		for i, e := range c.Effects {
			if e.Op != zones.OpRead && strings.HasPrefix(e.Path.String(), "drafts/") {
				return &policy.Deny{Effect: &c.Effects[i], Reason: "drafts are the person's own"}
			}
		}
		return nil
	}}
	chain := append(policy.Builtin(true), noDrafts)

	table, _ := zones.New("/vault", []zones.Entry{{Path: ".", Mode: zones.Write}}, zones.Options{})
	judge := func(op zones.Op, path string) {
		p, _ := zones.Normalize("/vault", path)
		effects := []policy.Effect{{Op: op, Path: p}}
		policy.Zoned(table, effects)
		call := &policy.ToolCall{Effects: effects, Zones: table, Lang: "en"}
		if d := chain.Judge(call); d != nil {
			fmt.Printf("%s %s: denied by %s: %s\n", op, p, d.Rule, d.Reason)
			return
		}
		fmt.Printf("%s %s: allowed\n", op, p)
	}
	judge(zones.OpRead, "drafts/plan.md")
	judge(zones.OpDelete, "drafts/plan.md")
	judge(zones.OpDelete, "notes/../drafts/plan.md")
	judge(zones.OpDelete, "notes/plan.md")
	// Output:
	// read drafts/plan.md: allowed
	// delete drafts/plan.md: denied by no_drafts: drafts are the person's own
	// delete drafts/plan.md: denied by no_drafts: drafts are the person's own
	// delete notes/plan.md: allowed
}

// TestDocsShowTheExample keeps the copy of the rule in
// docs/architecture.md the same as the example above, which go test runs.
func TestDocsShowTheExample(t *testing.T) {
	readme, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "noDrafts := policy.Rule")
	j := strings.Index(s[max(i, 0):], "}}\n")
	if i < 0 || j < 0 {
		t.Fatal("docs/architecture.md no longer shows the no_drafts rule")
	}
	var indented []string
	for _, line := range strings.Split(s[i:i+j+2], "\n") {
		indented = append(indented, "\t"+line)
	}
	if !strings.Contains(string(self), strings.Join(indented, "\n")) {
		t.Error("the no_drafts rule in docs/architecture.md differs from ExampleRule's")
	}
}
