//go:build !unix

package admin

import "os"

// fileIdentity: without one the kept index can't be matched to its files,
// so none is kept and the log is read at every start.
func fileIdentity(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
