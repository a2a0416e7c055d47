package say_test

import (
	"fmt"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// A refusal is a value with named facts; Text words it in the agent's
// language.
func ExampleRefused() {
	m := say.Refused{
		Op: zones.OpDelete, Path: "мета/план.md", Zone: zones.Protected,
		Where: say.Where{Op: zones.OpDelete, Areas: []zones.Area{{Path: "мета/бобер"}}},
	}
	for _, l := range say.Langs {
		fmt.Println(m.Text(l))
	}
	// Output:
	// delete "мета/план.md": zone protected (read only). Deleting is allowed in: мета/бобер.
	// удалить «мета/план.md» нельзя: зона protected (только чтение). Удалять можно в: мета/бобер.
}
