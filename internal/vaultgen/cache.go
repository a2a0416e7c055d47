package vaultgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// version is part of the cache's key: raise it whenever what Generate
// writes for a seed changes, so that no one times an older vault.
const version = 1

// CacheDir is where Cached keeps the vault of notes and seed:
// <os.TempDir()>/vaultgate-vaultgen/v<version>-n<notes>-s<seed>.
func CacheDir(notes int, seed uint64) string {
	return filepath.Join(os.TempDir(), "vaultgate-vaultgen", fmt.Sprintf("v%d-n%d-s%d", version, notes, seed))
}

// Cached returns the vault of notes and seed generated once and kept
// between runs in CacheDir: the vault in its folder "vault", and beside
// it stats.json, written last, which marks it complete. A folder without
// it (a run cut short) is generated again. Processes asking at once (the
// packages of one `go test` run) wait for one another on a lock file.
//
// The vault is shared: whoever uses it must change nothing in it. Remove
// the folder to have it generated again.
func Cached(notes int, seed uint64) (vault string, st Stats, err error) {
	dir := CacheDir(notes, seed)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", Stats{}, err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", Stats{}, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", Stats{}, fmt.Errorf("vaultgen: locking %s: %w", lock.Name(), err)
	}
	vault = filepath.Join(dir, "vault")
	marker := filepath.Join(dir, "stats.json")
	if data, err := os.ReadFile(marker); err == nil {
		if err := json.Unmarshal(data, &st); err == nil {
			return vault, st, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", Stats{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", Stats{}, err
	}
	if err := os.MkdirAll(vault, 0o755); err != nil {
		return "", Stats{}, err
	}
	if st, err = Generate(vault, notes, seed); err != nil {
		return "", Stats{}, err
	}
	data, err := json.Marshal(st)
	if err != nil {
		return "", Stats{}, err
	}
	if err := os.WriteFile(marker+".tmp", data, 0o644); err != nil {
		return "", Stats{}, err
	}
	return vault, st, os.Rename(marker+".tmp", marker)
}
