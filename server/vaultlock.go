package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/vaultgate/vaultgate/config"
)

// lockVault serialises calls that change files: within this process by a
// mutex, and across every vaultgate process serving the same vault (one
// stdio server per Claude session, an HTTP server) by an flock in the state
// folder, so no call can act between another's check and its deed.
func (g *Gate) lockVault() (unlock func(), err error) {
	g.mutate.Lock()
	if g.cfg.StateDir == "" {
		return g.mutate.Unlock, nil
	}
	name := filepath.Join(g.cfg.StateDir, vaultKey(g.cfg)+".lock")
	if err := os.MkdirAll(g.cfg.StateDir, 0o700); err != nil {
		g.mutate.Unlock()
		return nil, err // the caller words it: the vault lock could not be taken
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		g.mutate.Unlock()
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		g.mutate.Unlock()
		return nil, fmt.Errorf("flock %s: %w", name, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
		g.mutate.Unlock()
	}, nil
}

// vaultKey names what the state folder holds for this vault alone (its
// lock, its calls' overlay layers): servers of other vaults may share
// the folder.
func vaultKey(cfg *config.Config) string {
	sum := sha256.Sum256([]byte(cfg.Vault))
	return "vault-" + hex.EncodeToString(sum[:8])
}

// VaultStateDir is the folder of the state folder for this vault's bash
// transactions: their overlay layers and commit journals. A server
// sweeps only its own vault's, so it can never finish another vault's
// commit into this one.
func VaultStateDir(cfg *config.Config) string {
	if cfg.StateDir == "" {
		return ""
	}
	return filepath.Join(cfg.StateDir, vaultKey(cfg))
}
