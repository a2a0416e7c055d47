package server

import (
	"errors"
	"fmt"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/vaultid"
)

// vaultID is the id of cfg's vault in its state folder (package vaultid),
// made on the vault's first use there: what every audit line and history
// entry of a gate over it names (tools.Vault.ID). A config with no state
// folder has no log or history to name it in: "".
func vaultID(cfg *config.Config) (string, error) {
	if cfg.StateDir == "" {
		return "", nil
	}
	id, err := vaultid.Open(cfg.StateDir, cfg.Vault)
	if err != nil {
		return "", fmt.Errorf("the vault's id: %w", err)
	}
	return id, nil
}

// scope is what of the state folder's records is this gate's vault's, as
// its registry stands now. A gate opened without an id (tools.Vault.ID)
// gets its vault's from the registry, so an undo never acts on records of
// another vault for want of one.
func (g *Gate) scope() (vaultid.Scope, error) {
	if g.cfg.StateDir == "" {
		return vaultid.Scope{}, errors.New("no state folder: the vault's records can't be told from another's")
	}
	id := g.vault.ID
	if id == "" {
		var err error
		if id, err = vaultID(g.cfg); err != nil {
			return vaultid.Scope{}, err
		}
	}
	return vaultid.ScopeOf(g.cfg.StateDir, id)
}
