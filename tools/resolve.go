package tools

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// maxLinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxLinkHops = 40

var errLinkLoop = errors.New("too many levels of symbolic links")

// Vault is the folder the tools serve and the file system they act on.
type Vault struct {
	Root string   // absolute, cleaned
	Fs   afero.Fs // confined to Root (vaultfs.Open); names are vault-relative
	// WallHelper is the OS wall's helper binary for bash
	// (sandbox.WallConfig.Helper); "" re-executes the running binary.
	WallHelper string
	// HelperAhead starts each walled call's helper ahead, when the call
	// before it ends (sandbox.Request.Ahead): for a server, which runs
	// many; not for vaultgate exec, which runs one.
	HelperAhead bool
	// Names is the index of the paths the wall covers by name, kept by a
	// server (sandbox.WatchNames); nil walks the vault on each walled call.
	Names *sandbox.NameIndex
	// StateDir is the server's state folder, where a walled bash call's
	// overlay layer is made (txn.NewLayer): never inside the vault.
	StateDir string
	// ID is the vault's id (package vaultid), which every audit line and
	// history entry of the gate names; "" names none.
	ID string
	// Temps is the vault's journal of the temporary names vaultgate makes
	// in it (history.Temps, in StateDir): a file tool notes each before it
	// makes it, and start-up removes what a stop left by the journal
	// alone. nil notes none.
	Temps *history.Temps
}

func (v *Vault) lstat(rel string) (os.FileInfo, error) { return lstatIn(v.Fs, rel) }

func lstatIn(fsys afero.Fs, name string) (os.FileInfo, error) {
	if l, ok := fsys.(afero.Lstater); ok {
		fi, _, err := l.LstatIfPossible(name)
		return fi, err
	}
	return fsys.Stat(name)
}

func (v *Vault) readlink(rel string) (string, error) {
	if r, ok := v.Fs.(afero.LinkReader); ok {
		return r.ReadlinkIfPossible(rel)
	}
	return "", &fs.PathError{Op: "readlink", Path: rel, Err: errors.ErrUnsupported}
}

// Resolve returns the real path of p: every symlink that exists is
// followed, in user space, so that the zone is decided where the path
// really leads. A path that leaves the vault comes back outside. With
// followLast false the last component is kept as it is (delete and move act
// on a link itself).
func (v *Vault) Resolve(p zones.Path, followLast bool) (zones.Path, error) {
	hops := 0
	return v.resolve(p, followLast, &hops)
}

func (v *Vault) resolve(p zones.Path, followLast bool, hops *int) (zones.Path, error) {
	if p.IsRoot() || p.Outside() || p.IsZero() {
		return p, nil // the root, or outside: nothing of ours to resolve
	}
	if lf, ok := v.Fs.(vaultfs.LinkFreeChecker); ok && lf.LinkFree(p.String(), followLast) {
		return p, nil // no link on the way: the path is where it leads
	}
	parts := strings.Split(p.String(), "/")
	cur := zones.VaultRoot()
	for i, name := range parts {
		next, err := cur.Child(name)
		if err != nil {
			return zones.Path{}, err
		}
		last := i == len(parts)-1
		if last && !followLast {
			return next, nil
		}
		fi, err := v.lstat(next.String())
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// the rest does not exist yet: it is what it says
				return below(next, parts[i+1:])
			}
			return zones.Path{}, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if *hops++; *hops > maxLinkHops {
			return zones.Path{}, &fs.PathError{Op: "resolve", Path: p.String(), Err: errLinkLoop}
		}
		target, err := v.readlink(next.String())
		if err != nil {
			return zones.Path{}, err
		}
		var abs string
		if path.IsAbs(target) {
			abs = target
		} else {
			abs = path.Join(cur.Abs(v.Root), target)
		}
		t, err := zones.Normalize(v.Root, abs)
		if err != nil {
			return zones.Path{}, err
		}
		if t.Outside() {
			// Out of the vault: the rest is judged outside, where no
			// file tool acts.
			return below(t, parts[i+1:])
		}
		t, err = v.resolve(t, true, hops)
		if err != nil {
			return zones.Path{}, err
		}
		if t.Outside() {
			return below(t, parts[i+1:])
		}
		cur = t
	}
	return cur, nil
}

// below is dir with the components names appended.
func below(dir zones.Path, names []string) (zones.Path, error) {
	for _, n := range names {
		var err error
		if dir, err = dir.Child(n); err != nil {
			return zones.Path{}, err
		}
	}
	return dir, nil
}
