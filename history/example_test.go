package history_test

import (
	"fmt"

	"github.com/vaultgate/vaultgate/history"
)

// Unified is the diff vaultgate diff prints for each text file a call
// changed.
func ExampleUnified() {
	before := "# Plan\n- buy milk\n- call Anna\n"
	after := "# Plan\n- buy oat milk\n- call Anna\n- book tickets\n"
	fmt.Print(history.Unified(before, after, "a/plan.md", "b/plan.md", 3))
	// Output:
	// --- a/plan.md
	// +++ b/plan.md
	// @@ -1,3 +1,4 @@
	//  # Plan
	// -- buy milk
	// +- buy oat milk
	//  - call Anna
	// +- book tickets
}
