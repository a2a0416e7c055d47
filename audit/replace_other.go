//go:build !linux

package audit

import "os"

// replaceFile gives src's content the name dst atomically.
func replaceFile(src, dst string) error { return os.Rename(src, dst) }
