package tools

import (
	"slices"
	"testing"

	"github.com/vaultgate/vaultgate/claude"
)

// TestHookToolsAreTheCatalogues: the built-ins the hook plans by their
// effects are exactly those Claude Code's catalogue marks judged: a
// built-in added to one and not the other would be planned without being
// named, or named judged and then refused as unknown.
func TestHookToolsAreTheCatalogues(t *testing.T) {
	for _, after := range []bool{false, true} {
		var planned []string
		for _, tool := range hookTools(after) {
			planned = append(planned, tool.Name)
		}
		if want := claude.Named(claude.Judged); !slices.Equal(planned, want) {
			t.Errorf("after %v: the hook plans %v, the catalogue judges %v", after, planned, want)
		}
	}
}
