package vaultid

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FileName is the registry's name in the state folder.
const FileName = "vaults.json"

// lockName is the file Open flocks while it adds a vault.
const lockName = "vaults.lock"

// version is the registry's format; a registry of another is refused.
const version = 1

// ErrOtherVault is a record that is not the caller's vault's: another
// vault's, or one that names no vault in a state folder serving several.
var ErrOtherVault = errors.New("recorded for another vault")

// registry is vaults.json: each vault's real path and its id.
type registry struct {
	Version int               `json:"version"`
	Vaults  map[string]string `json:"vaults"` // real path → id
}

// Open returns the id of the vault at root in the state folder stateDir,
// adding the vault to the folder's registry (and making the folder) on its
// first use. The vault is known by its real path: root with symlinks
// resolved, which must exist.
func Open(stateDir, root string) (string, error) {
	if stateDir == "" {
		return "", errors.New("vaultid: no state folder")
	}
	real, err := realPath(root)
	if err != nil {
		return "", err
	}
	reg, err := read(stateDir)
	if err != nil {
		return "", err
	}
	if id, ok := reg.Vaults[real]; ok {
		return id, nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("vaultid: %w", err)
	}
	unlock, err := lock(stateDir)
	if err != nil {
		return "", err
	}
	defer unlock()
	// Another process may have added it while this one waited.
	if reg, err = read(stateDir); err != nil {
		return "", err
	}
	if id, ok := reg.Vaults[real]; ok {
		return id, nil
	}
	id, err := newID(reg)
	if err != nil {
		return "", err
	}
	reg.Vaults[real] = id
	if err := write(stateDir, reg); err != nil {
		return "", err
	}
	return id, nil
}

// Shared reports whether the state folder's registry names more than one
// vault: then its audit log and history hold several vaults' records. A
// folder with no registry yet is not shared.
func Shared(stateDir string) (bool, error) {
	reg, err := read(stateDir)
	if err != nil {
		return false, err
	}
	return len(reg.Vaults) > 1, nil
}

// Vaults lists the vaults the state folder's registry names: real path by id.
func Vaults(stateDir string) (map[string]string, error) {
	reg, err := read(stateDir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(reg.Vaults))
	for p, id := range reg.Vaults {
		out[id] = p
	}
	return out, nil
}

// Scope is what one vault may see and act on of a state folder's records:
// those that name its id, and those that name no vault (written before
// records named theirs) when the folder serves this vault alone.
type Scope struct {
	ID string
	// Unnamed says that records naming no vault are this vault's: the
	// registry names this vault and no other.
	Unnamed  bool
	stateDir string
	paths    map[string]string // id → real path, as the registry named them
}

// ScopeOf is the scope of the vault whose id is id, as the state folder's
// registry stands now.
func ScopeOf(stateDir, id string) (Scope, error) {
	paths, err := Vaults(stateDir)
	if err != nil {
		return Scope{}, err
	}
	_, known := paths[id]
	return Scope{ID: id, Unnamed: id != "" && known && len(paths) == 1, stateDir: stateDir, paths: paths}, nil
}

// OpenScope is the scope of the vault at root (Open, then ScopeOf).
func OpenScope(stateDir, root string) (Scope, error) {
	id, err := Open(stateDir, root)
	if err != nil {
		return Scope{}, err
	}
	return ScopeOf(stateDir, id)
}

// Owns reports whether a record that names vault (its "vault" field, ""
// for none) is this scope's vault's.
func (s Scope) Owns(vault string) bool {
	if vault == "" {
		return s.Unnamed
	}
	return s.ID != "" && vault == s.ID
}

// Check is nil when call, recorded for vault, is this scope's vault's;
// otherwise an error wrapping ErrOtherVault that says whose it is and
// why it is refused. command is what the person would run ("undo",
// "diff") with the other vault's config.
func (s Scope) Check(call, vault, command string) error {
	switch {
	case s.Owns(vault):
		return nil
	case vault == "":
		return fmt.Errorf("call %s names no vault (it was recorded before vaultgate named vaults), and the state folder %s serves %d vaults, so it can't be told whose it is: %w",
			call, s.stateDir, len(s.paths), ErrOtherVault)
	}
	where := "a vault the registry " + filepath.Join(s.stateDir, FileName) + " does not name"
	if p, ok := s.paths[vault]; ok {
		where = "path " + p
	}
	return fmt.Errorf("call %s was %w (id %s, %s); run %s with that vault's config", call, ErrOtherVault, vault, where, command)
}

func realPath(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("vaultid: vault %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("vaultid: vault %s: %w", abs, err)
	}
	return real, nil
}

// read reads the registry; a missing one is empty, a damaged one an error.
func read(stateDir string) (*registry, error) {
	name := filepath.Join(stateDir, FileName)
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &registry{Version: version, Vaults: map[string]string{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("vaultid: %w", err)
	}
	var reg registry
	if err := json.Unmarshal(b, &reg); err != nil {
		return nil, fmt.Errorf("vaultid: %s is damaged: %w", name, err)
	}
	if reg.Version != version {
		return nil, fmt.Errorf("vaultid: %s is of format %d, this vaultgate reads %d", name, reg.Version, version)
	}
	if reg.Vaults == nil {
		reg.Vaults = map[string]string{}
	}
	seen := map[string]string{}
	for p, id := range reg.Vaults {
		if !filepath.IsAbs(p) || !validID(id) {
			return nil, fmt.Errorf("vaultid: %s is damaged: entry %q: %q", name, p, id)
		}
		if other, ok := seen[id]; ok {
			return nil, fmt.Errorf("vaultid: %s is damaged: %s and %s have one id %s", name, other, p, id)
		}
		seen[id] = p
	}
	return &reg, nil
}

func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// newID is 16 random hex digits that no vault of reg has.
func newID(reg *registry) (string, error) {
	taken := map[string]bool{}
	for _, id := range reg.Vaults {
		taken[id] = true
	}
	for {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("vaultid: %w", err)
		}
		if id := hex.EncodeToString(b[:]); !taken[id] {
			return id, nil
		}
	}
}

// lock takes the registry's flock, for adding a vault.
func lock(stateDir string) (unlock func(), err error) {
	name := filepath.Join(stateDir, lockName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("vaultid: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("vaultid: flock %s: %w", name, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// write replaces the registry whole: a temporary file in the state
// folder, flushed, renamed over it, and the folder flushed.
func write(stateDir string, reg *registry) (err error) {
	name := filepath.Join(stateDir, FileName)
	b, err := json.MarshalIndent(reg, "", "  ") // map keys sorted: the same registry, the same bytes
	if err != nil {
		return fmt.Errorf("vaultid: %w", err)
	}
	tmp, err := os.CreateTemp(stateDir, FileName+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("vaultid: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("vaultid: write %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("vaultid: sync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("vaultid: close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("vaultid: %w", err)
	}
	d, err := os.Open(stateDir)
	if err != nil {
		return fmt.Errorf("vaultid: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("vaultid: sync %s: %w", stateDir, err)
	}
	return nil
}
