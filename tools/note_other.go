//go:build !linux

package tools

import (
	"io"

	"github.com/spf13/afero"
)

// openNote opens a note for search to read through.
func openNote(fsys afero.Fs, name string) (io.ReadCloser, error) { return fsys.Open(name) }
