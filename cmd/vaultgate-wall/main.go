// Command vaultgate-wall is the OS wall's helper and nothing else. vaultgate
// serve starts it for every walled bash call when it lies beside the
// vaultgate binary: inside the call's new namespaces it reads the wall's
// plan, builds the new root, applies Landlock, drops privileges and execs
// bash (sandbox.Helper). It links the sandbox alone, so a call pays for no
// MCP library's start-up.
//
// It is not for people: started any other way it refuses to run.
package main

import (
	"fmt"
	"os"

	"github.com/vaultgate/vaultgate/sandbox"
)

func main() {
	if !sandbox.IsHelper(os.Args) {
		fmt.Fprintf(os.Stderr, "%s: the OS wall's helper; vaultgate serve starts it for bash calls, and it does nothing by hand\n", sandbox.HelperBinary)
		os.Exit(2)
	}
	os.Exit(sandbox.Helper())
}
