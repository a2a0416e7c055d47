//go:build !linux

package txn

import (
	"errors"
	"os"
)

// openUnnamed: only Linux makes a file with no name; Begin names its own.
func openUnnamed(string) (*os.File, error) {
	return nil, errors.New("txn: no unnamed files here")
}
