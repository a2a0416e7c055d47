//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// HelperArg is argv[1] of the wall's helper.
const HelperArg = "-vaultgate-wall-helper"

// IsHelper reports whether this process was started as the wall's helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// Helper is the wall's helper; there is none off Linux.
func Helper() int { return 125 }

// RememberProbe does nothing off Linux, where there is nothing to probe.
func RememberProbe(helper string, p Probe) {}

// ProbeWall reports that no layer of the wall exists off Linux.
func ProbeWall(helper string) Probe {
	return Probe{Missing: map[string]string{"mount namespace": "not Linux"}}
}

func lookupUser(name string) (*User, error) { return nil, errors.New("sandbox: run_as needs Linux") }

// CheckOverlay reports that there is no overlay off Linux.
func CheckOverlay(o Overlay, vault string) error { return errors.New("sandbox: overlay needs Linux") }

func prepareOverlay(w *Wall) error { return CheckOverlay(*w.Overlay, w.Vault) }

// MemoryFull says no in-memory layer ran out of room: there is none off
// Linux (no walled call runs there).
func MemoryFull(upper *os.File, m MemoryLayer) (string, error) { return "", nil }
