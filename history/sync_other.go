//go:build !linux

package history

import "os"

func dataSync(f *os.File) error { return f.Sync() }
