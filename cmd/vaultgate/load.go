package main

import (
	"errors"
	"flag"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
)

// source is the --config / --vault pair most commands take.
type source struct {
	config string
	vault  string
}

func (s *source) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", "the policy file (TOML)")
	fs.StringVar(&s.vault, "vault", "", "serve this folder with the default policy, when there is no config")
}

func (s *source) load() (*config.Config, error) {
	switch {
	case s.config != "" && s.vault != "":
		return nil, errors.New("give --config or --vault, not both (the config names its vault)")
	case s.config != "":
		return config.Load(s.config)
	case s.vault != "":
		return config.Default(s.vault)
	}
	return nil, errors.New("give --config FILE (or --vault DIR for the default policy)")
}

// openGate opens the vault's file system and, unless dry, the audit log.
func openGate(cfg *config.Config, dry bool) (*server.Gate, func(), error) {
	rfs, err := tools.OpenNoFollowFs(cfg.Vault)
	if err != nil {
		return nil, nil, err
	}
	var w *audit.Writer
	if !dry {
		if w, err = audit.Open(cfg.AuditPath, audit.Options{MaxSize: cfg.MaxSize, Mask: secretValues(cfg)}); err != nil {
			rfs.Close()
			return nil, nil, err
		}
	}
	g := server.NewGate(cfg, &tools.Vault{Root: cfg.Vault, Fs: rfs}, server.Options{Audit: w})
	return g, func() {
		if w != nil {
			w.Close()
		}
		rfs.Close()
	}, nil
}
