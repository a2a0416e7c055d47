//go:build !unix

package audit

import (
	"errors"
	"os"
)

func flock(f *os.File, lock bool) error {
	return errors.New("audit: file locking is implemented for Unix only")
}
