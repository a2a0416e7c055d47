package server

import (
	"os"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/tools"
)

// OpenOptions say how Open opens a vault.
type OpenOptions struct {
	// Dry opens no audit log: check's dry runs, which are a person's, not
	// the agent's.
	Dry bool
	// WallHelper is the OS wall's helper binary (tools.Vault.WallHelper).
	WallHelper string
}

// Open opens cfg's vault as every vaultgate binary serves it: its file
// system, refusing links that lead out of it, and, unless opt.Dry, its
// audit log, masking the values of configured secrets. closeAll closes
// both.
func Open(cfg *config.Config, opt OpenOptions) (g *Gate, closeAll func(), err error) {
	rfs, err := tools.OpenNoFollowFs(cfg.Vault)
	if err != nil {
		return nil, nil, err
	}
	var w *audit.Writer
	if !opt.Dry {
		if w, err = audit.Open(cfg.AuditPath, audit.Options{MaxSize: cfg.MaxSize, Mask: SecretValues(cfg)}); err != nil {
			rfs.Close()
			return nil, nil, err
		}
	}
	vault := &tools.Vault{Root: cfg.Vault, Fs: rfs, WallHelper: opt.WallHelper}
	g = NewGate(cfg, vault, Options{Audit: w})
	return g, func() {
		if w != nil {
			w.Close()
		}
		rfs.Close()
	}, nil
}

// SecretValues are the values of every agent's configured secrets, which
// the audit log masks.
func SecretValues(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.Agents {
		for _, s := range p.Bash.Secrets {
			if v := os.Getenv(s.FromEnv); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
