package tools

import (
	"io/fs"
	"path"
	"strings"

	"github.com/spf13/afero"
)

// SweepTemp removes the temporary files and folders (.vaultgate-tmp-…) that
// a server killed in the middle of a write or an undo left in the vault,
// walking it without following links. It is for start-up, when no call
// of this vault is running (the caller holds the vault lock or serves
// alone); it returns the names removed.
func SweepTemp(fsys afero.Fs) ([]string, error) {
	var removed []string
	var walk func(dir string) error
	walk = func(dir string) error {
		names, err := readDirNames(fsys, dir, -1)
		if err != nil {
			return err
		}
		for _, n := range names {
			p := path.Join(dir, n)
			if strings.HasPrefix(n, tempPrefix) {
				if err := fsys.RemoveAll(p); err == nil {
					removed = append(removed, p)
				}
				continue
			}
			fi, err := lstatIn(fsys, p)
			if err != nil || !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
				continue
			}
			if err := walk(p); err != nil {
				return err
			}
		}
		return nil
	}
	return removed, walk(".")
}
