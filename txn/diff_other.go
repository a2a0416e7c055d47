//go:build !linux

package txn

import "errors"

// Diff needs openat2 and overlayfs: only Linux has them.
func Diff(l *Layer, lower string, opt DiffOptions) ([]Change, error) {
	return nil, errors.New("txn: diff: needs Linux")
}
