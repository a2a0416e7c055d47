package main

import (
	"errors"
	"flag"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/rules"
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

// openFailed is the exit status of a gate that did not open: a config
// rule that does not compile or fails its examples is a fault of the
// config, like any other (2); anything else is 1.
func openFailed(err error) int {
	var re *rules.Error
	if errors.As(err, &re) {
		return fail(exitUsage, "%v", err)
	}
	return fail(1, "%v", err)
}
