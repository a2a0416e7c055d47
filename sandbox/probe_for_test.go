package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestProbeFor decides, from a synthetic probe, what each wall setting
// raises: required names every missing layer, best-effort raises what is
// there, and no mount namespace means no wall at all.
func TestProbeFor(t *testing.T) {
	all := Layers{Mount: true, Net: true, Landlock: 7, NoNew: true, Caps: true, Rlimits: true, PidMax: true, RunAs: true, Overlay: true}
	full := Probe{Layers: all, Root: true}
	if L, err := full.For(false, false, true); err != nil || L.RunAs || L.Landlock != 7 {
		t.Errorf("full probe, required: %+v %v", L, err)
	}
	if L, err := full.For(false, true, true); err != nil || !L.RunAs {
		t.Errorf("full probe, run_as: %+v %v", L, err)
	}

	noLandlock := full
	noLandlock.Layers.Landlock = 2
	noLandlock.Missing = map[string]string{"Landlock": "ABI 2 < 3"}
	_, err := noLandlock.For(false, false, true)
	var we *WallError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "Landlock (ABI 2 < 3)") {
		t.Errorf("required without Landlock 3: %v", err)
	}
	if L, err := noLandlock.For(false, false, false); err != nil || !L.Mount || L.Landlock != 2 {
		t.Errorf("best-effort without Landlock 3 raises the rest: %+v %v", L, err)
	}

	noNet := full
	noNet.Layers.Net = false
	if _, err := noNet.For(false, false, true); err == nil || !strings.Contains(err.Error(), "network namespace") {
		t.Errorf("required, no network namespace, network off: %v", err)
	}
	if _, err := noNet.For(true, false, true); err != nil {
		t.Errorf("required, no network namespace, network on: %v", err)
	}

	noMount := full
	noMount.Layers.Mount = false
	if L, err := noMount.For(false, false, false); err != nil || L != (Layers{}) {
		t.Errorf("best-effort without a mount namespace must raise nothing: %+v %v", L, err)
	}
	if _, err := noMount.For(false, false, true); err == nil || !strings.Contains(err.Error(), "mount namespace") {
		t.Errorf("required without a mount namespace: %v", err)
	}

	// As root, a process bound needs pid_max of the namespace (RLIMIT_NPROC
	// binds root not at all) unless run_as gives the call a uid of its own.
	noPidMax := full
	noPidMax.Layers.PidMax = false
	if _, err := noPidMax.For(false, false, true); err == nil || !strings.Contains(err.Error(), "pid_max") {
		t.Errorf("root, no pid_max, no run_as: %v", err)
	}
	if _, err := noPidMax.For(false, true, true); err != nil {
		t.Errorf("root, no pid_max, run_as: %v", err)
	}
	noPidMax.Root = false
	if _, err := noPidMax.For(false, false, true); err != nil {
		t.Errorf("not root, no pid_max: %v", err)
	}

	// Every walled call runs on an overlay of the vault: required names
	// it, best effort raises the rest without it.
	noOverlay := full
	noOverlay.Layers.Overlay = false
	noOverlay.Missing = map[string]string{"overlay": "mount: operation not permitted"}
	if _, err := noOverlay.For(false, false, true); err == nil || !strings.Contains(err.Error(), "overlay (mount: operation not permitted)") {
		t.Errorf("required without the overlay: %v", err)
	}
	if L, err := noOverlay.For(false, false, false); err != nil || !L.Mount || L.Overlay {
		t.Errorf("best-effort without the overlay raises the rest: %+v %v", L, err)
	}

	noRunAs := full
	noRunAs.Layers.RunAs = false
	if _, err := noRunAs.For(false, true, true); err == nil || !strings.Contains(err.Error(), "run_as") {
		t.Errorf("run_as configured but impossible: %v", err)
	}
}
