//go:build !linux

package vaultfs

import (
	"io"

	"github.com/spf13/afero"
)

// OpenReader opens name for reading it through once, as search reads a
// note: off Linux, with Open.
func OpenReader(fsys afero.Fs, name string) (io.ReadCloser, error) { return fsys.Open(name) }
