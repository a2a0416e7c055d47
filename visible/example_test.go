package visible_test

import (
	"fmt"

	"github.com/vaultgate/vaultgate/visible"
)

func ExampleMode_Escape() {
	fmt.Println(visible.Line.Escape("notes/\x1b[32mallow\x1b[0m.md"))
	fmt.Println(visible.Line.Escape("invoice\u202efdp.exe"))
	fmt.Print(visible.Block.Escape("+all good\r\x1b]52;c;cm0gLXJmIH4K\x07\n"))
	// Output:
	// notes/\x1b[32mallow\x1b[0m.md
	// invoice\u202efdp.exe
	// +all good\r\x1b]52;c;cm0gLXJmIH4K\x07
}
