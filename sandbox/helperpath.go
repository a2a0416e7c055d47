package sandbox

import (
	"os"
	"path/filepath"
)

// HelperBinary is the name of the binary that is the wall's helper and
// nothing else (cmd/vaultgate-wall). Starting it instead of re-executing
// the server spares every walled call the server's own start-up (the MCP
// library's init, above all).
const HelperBinary = "vaultgate-wall"

// selfHelper re-executes the running binary: this very file, even if the
// one at its path was replaced since.
const selfHelper = "/proc/self/exe"

// HelperBeside returns HelperBinary in the folder of the running
// executable when a regular, executable file is there, and "" otherwise,
// which makes the wall re-execute the running binary (WallConfig.Helper).
func HelperBeside() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return helperBeside(exe)
}

// HelperFor returns the helper that a walled call of the vaultgate binary
// exe raises its wall with: HelperBinary beside it, or exe itself
// re-executed. A process that probes the wall for another binary's calls
// (the hook, for vaultgate exec) probes with it.
func HelperFor(exe string) string {
	if h := helperBeside(exe); h != "" {
		return h
	}
	return exe
}

func helperBeside(exe string) string {
	p := filepath.Join(filepath.Dir(exe), HelperBinary)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	return p
}

// HelperName says which helper a WallConfig.Helper names, as the audit's
// wall field and Describe show it: "self" for the running binary,
// otherwise the file's base name.
func HelperName(helper string) string {
	if helper == "" || helper == selfHelper {
		return "self"
	}
	return filepath.Base(helper)
}

// helperPath is the program the wall starts for helper.
func helperPath(helper string) string {
	if helper == "" {
		return selfHelper
	}
	return helper
}
