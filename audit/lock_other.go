//go:build !unix

package audit

import (
	"errors"
	"os"
)

type lockMode int

const (
	unlock lockMode = iota
	exclusive
	shared
)

func flock(f *os.File, mode lockMode) error {
	return errors.New("audit: file locking is implemented for Unix only")
}
