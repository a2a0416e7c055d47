package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary be the wall's helper, as the vaultgate
// binary is in production (cmd/vaultgate/wall.go).
func TestMain(m *testing.M) {
	if IsHelper(os.Args) {
		os.Exit(Helper())
	}
	os.Exit(m.Run())
}
