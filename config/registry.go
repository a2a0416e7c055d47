package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
)

// The registry is the list of vaults `vaultgate init` set up, each with
// its config, kept in the person's config folder
// (~/.config/vaultgate/vaults.toml), outside every vault. A command given
// no --config and no VAULTGATE_CONFIG takes the config of the listed vault
// that holds the current folder. Only init writes it. A config found by
// looking in the vault or above it is never used: an agent can write
// there, and a config it planted would be the boundary the person's next
// command judges by.
//
//	# vaultgate: the vaults `vaultgate init` set up, and the config of each.
//	[[vault]]
//	path   = "/home/me/Notes"
//	config = "/home/me/.config/vaultgate/Notes.toml"
//	sha256 = "3f1c…"   # the config's bytes when init listed it
//
// What is trusted, and why:
//   - the registry itself only when it lies outside every vault it lists
//     (its real path), is a regular file of this user's, and no one else
//     may write it or its folder: otherwise an agent, or another user,
//     could point a vault at a config of its own;
//   - a listed config that lies outside every listed vault as it is (the
//     person edits it freely);
//   - a listed config that lies inside a vault (the person put it there
//     with `init --config`) only while its bytes are those init listed
//     (sha256): an agent that may write in the vault could have changed
//     it. After editing it, run init again to list it as it is, or name it
//     with --config;
//   - the config must name the vault it is listed for.
//
// Any doubt is an error that says which and how to pick a config by hand:
// never a quiet fall back to another one.

// RegistryFile is the registry's name in the person's config folder.
const RegistryFile = "vaults.toml"

// Listed is one vault of the registry.
type Listed struct {
	Vault  string `toml:"path"`
	Config string `toml:"config"`
	SHA256 string `toml:"sha256"`
}

type registryDoc struct {
	Vaults []Listed `toml:"vault"`
}

// RegistryPath is where the registry is: vaultgate/vaults.toml in the
// user's config folder ($XDG_CONFIG_HOME, or ~/.config).
func RegistryPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config folder for the list of vaults: %w", err)
	}
	return filepath.Join(dir, "vaultgate", RegistryFile), nil
}

// ReadRegistry reads the registry at path; one that does not exist lists
// nothing.
func ReadRegistry(path string) ([]Listed, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc registryDoc
	md, err := toml.Decode(string(b), &doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: %s: unknown key", path, und[0])
	}
	for i, l := range doc.Vaults {
		if !filepath.IsAbs(l.Vault) || !filepath.IsAbs(l.Config) {
			return nil, fmt.Errorf("%s: vault[%d]: path and config must be absolute", path, i)
		}
	}
	return doc.Vaults, nil
}

// List records vault's config in the registry at path (replacing what it
// listed for that vault), with the config's bytes' hash, under a lock and
// by a rename, so two inits at once each keep their own.
func List(path, vault, config string) error {
	data, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	listed, err := ReadRegistry(path)
	if err != nil {
		return err
	}
	listed = slices.DeleteFunc(listed, func(l Listed) bool { return l.Vault == vault })
	listed = append(listed, Listed{Vault: vault, Config: config, SHA256: hex.EncodeToString(sum[:])})
	slices.SortFunc(listed, func(a, b Listed) int { return strings.Compare(a.Vault, b.Vault) })
	var b bytes.Buffer
	b.WriteString("# vaultgate: the vaults `vaultgate init` set up, and the config of each.\n")
	b.WriteString("# A command run inside a vault without --config uses its config (docs/config.md).\n")
	if err := toml.NewEncoder(&b).Encode(registryDoc{Vaults: listed}); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vaults-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Lookup is what the registry at path says of the vault (a real path):
// its listed config, or nil.
func Lookup(path, vault string) (*Listed, error) {
	listed, err := ReadRegistry(path)
	if err != nil {
		return nil, err
	}
	for _, l := range listed {
		if l.Vault == vault {
			return &l, nil
		}
	}
	return nil, nil
}

// NoConfigError is a command with no config to go by: none given, and
// the current folder in no vault the registry lists (or the registry not
// to be trusted). Known lists the vaults there are.
type NoConfigError struct {
	Cwd      string
	Registry string
	Known    []Listed
	Why      string // why the registry was not used, "" when it was
}

func (e *NoConfigError) Error() string {
	var b strings.Builder
	switch {
	case e.Why != "":
		fmt.Fprintf(&b, "no config: %s", e.Why)
	case len(e.Known) == 0:
		fmt.Fprintf(&b, "no config: none given, and vaultgate init has set up no vault yet (%s lists none)", e.Registry)
	default:
		fmt.Fprintf(&b, "no config: %s is in none of the vaults vaultgate init set up:", e.Cwd)
		for _, l := range e.Known {
			fmt.Fprintf(&b, "\n  %s  (config %s)", l.Vault, l.Config)
		}
	}
	b.WriteString("\npick one: run the command from inside a vault that vaultgate init set up, or give --config FILE, or set VAULTGATE_CONFIG=FILE (vaultgate init VAULT sets a vault up)")
	return b.String()
}

// Find is the config of the listed vault that holds cwd, by the registry
// at path, loaded and checked as the registry's rules say (see the top of
// this file); a *NoConfigError when no vault holds cwd, or the registry
// can't be trusted. The deepest vault wins where one holds another.
func Find(path, cwd string) (*Config, error) {
	noConfig := &NoConfigError{Cwd: cwd, Registry: path}
	listed, err := ReadRegistry(path)
	if err != nil {
		noConfig.Why = fmt.Sprintf("the list of vaults can't be read (%v)", err)
		return nil, noConfig
	}
	noConfig.Known = listed
	if len(listed) == 0 {
		return nil, noConfig
	}
	vaults := make([]string, len(listed))
	for i, l := range listed {
		vaults[i] = realPath(l.Vault)
	}
	if why := untrustedRegistry(path, vaults); why != "" {
		noConfig.Why = why
		return nil, noConfig
	}
	here := realPath(cwd)
	best := -1
	for i, v := range vaults {
		if within(here, v) && (best < 0 || len(v) > len(vaults[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil, noConfig
	}
	l := listed[best]
	cfg, err := Load(l.Config)
	if err != nil {
		return nil, fmt.Errorf("the config listed for %s: %w", l.Vault, err)
	}
	real := realPath(l.Config)
	for _, v := range vaults {
		if within(real, v) && cfg.Digest != l.SHA256 {
			return nil, fmt.Errorf("the config listed for %s, %s, lies inside the vault %s, where an agent may write, and it is not what vaultgate init listed: it is not used. Read it; then run vaultgate init --config %s %s to list it as it is, or name it with --config", l.Vault, l.Config, v, l.Config, l.Vault)
		}
	}
	if cfg.Vault != vaults[best] {
		return nil, fmt.Errorf("the config listed for %s, %s, serves %s instead: run vaultgate init for this vault, or give --config FILE", l.Vault, l.Config, cfg.Vault)
	}
	return cfg, nil
}

// untrustedRegistry says why the registry at path must not be used, or "".
func untrustedRegistry(path string, vaults []string) string {
	real := realPath(path)
	for _, v := range vaults {
		if within(real, v) {
			return fmt.Sprintf("the list of vaults %s lies inside the vault %s, where an agent may write it, so it is not used", path, v)
		}
	}
	for i, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Sprintf("the list of vaults: %v", err)
		}
		if i == 0 && !fi.Mode().IsRegular() {
			return fmt.Sprintf("%s is not a regular file, so the list of vaults is not used", p)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			continue
		}
		if int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
			return fmt.Sprintf("%s is another user's or open to others' writes (mode %o), so the list of vaults is not used", p, fi.Mode().Perm())
		}
	}
	return ""
}

// realPath is p with every symbolic link resolved, or p made absolute
// where that fails (a path that does not exist).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return p
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
