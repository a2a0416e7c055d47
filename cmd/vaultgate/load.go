package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/rules"
)

// configEnv names the config for every command given no --config.
const configEnv = "VAULTGATE_CONFIG"

// source is where a command's config comes from: --config, --vault (the
// default policy, where a command takes it), then $VAULTGATE_CONFIG, then
// the config `vaultgate init` listed for the vault that holds the current
// folder (config.Find: only the list in the person's config folder, never
// a file found in the vault or above it). Every command loads through it.
type source struct {
	config string
	vault  string
}

// configFlagHelp is --config's help, for every command that takes it.
const configFlagHelp = "the policy file (TOML); default: $" + configEnv + ", else the one vaultgate init set up for the vault that holds the current folder"

func (s *source) flags(fs *flag.FlagSet) {
	s.configFlag(fs)
	fs.StringVar(&s.vault, "vault", "", "serve this folder with the default policy, when there is no config")
}

// configFlag is --config alone, for a command that takes no --vault.
func (s *source) configFlag(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", configFlagHelp)
}

// load loads the config. Found by $VAULTGATE_CONFIG or the list of
// vaults, s.config then names it, for what the command says or passes on.
func (s *source) load() (*config.Config, error) {
	switch {
	case s.config != "" && s.vault != "":
		return nil, errors.New("give --config or --vault, not both (the config names its vault)")
	case s.config != "":
		return config.Load(s.config)
	case s.vault != "":
		return config.Default(s.vault)
	}
	cfg, err := findConfig()
	if err != nil {
		return nil, err
	}
	s.config = cfg.File
	return cfg, nil
}

// findConfig is the config named by $VAULTGATE_CONFIG, else the one the
// list of vaults gives the current folder, else an error that lists the
// vaults there are and how to pick one (a usage error: exit 2).
func findConfig() (*config.Config, error) {
	if f := os.Getenv(configEnv); f != "" {
		cfg, err := config.Load(f)
		if err != nil {
			return nil, fmt.Errorf("$%s: %w", configEnv, err)
		}
		return cfg, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("no config: the current folder: %v; give --config FILE", err)
	}
	reg, err := config.RegistryPath()
	if err != nil {
		return nil, &config.NoConfigError{Cwd: cwd, Why: err.Error()}
	}
	return config.Find(reg, cwd)
}

// openFailed is the exit status of a gate that did not open: a fault of
// the config — a rule that does not compile or fails its examples, a zone
// entry that names nothing and so leaves open what it was to close — is
// a usage error, like any other of the config's (2); anything else is 1.
func openFailed(err error) int {
	var re *rules.Error
	var ze *config.ZonesError
	if errors.As(err, &re) || errors.As(err, &ze) {
		return fail(exitUsage, "%v", err)
	}
	return fail(1, "%v", err)
}
