package interop

import "os"

// vaultgate init lists every vault it sets up in the person's config
// folder ($XDG_CONFIG_HOME/vaultgate/vaults.toml): the binaries these
// tests start list theirs in a folder of the tests' own, never the real
// one.
func init() {
	if dir, err := os.MkdirTemp("", "vaultgate-config-"); err == nil {
		os.Setenv("XDG_CONFIG_HOME", dir)
	}
}
