package server

import (
	"os"
	"testing"

	"github.com/vaultgate/vaultgate/sandbox"
)

// TestMain lets the test binary be the wall's helper, for the bash calls
// the tests run walled.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args) {
		os.Exit(sandbox.Helper())
	}
	os.Exit(m.Run())
}
