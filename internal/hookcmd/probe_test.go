package hookcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/sandbox"
)

// TestKeptProbe: a probe kept for the same boot, user and helper is what
// the next hook process uses; one kept for another helper binary, or one
// past its time, is probed afresh and replaced.
func TestKeptProbe(t *testing.T) {
	state := t.TempDir()
	helper := filepath.Join(t.TempDir(), "vaultgate-wall")
	os.WriteFile(helper, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	key := probeKey(helper)
	if key == "" {
		t.Fatal("no key for an existing helper")
	}
	keep := func(k keptProbe) {
		data, _ := json.Marshal(k)
		os.WriteFile(filepath.Join(state, probeFile), data, 0o600)
	}
	kept := func() keptProbe {
		var k keptProbe
		data, err := os.ReadFile(filepath.Join(state, probeFile))
		if err != nil || json.Unmarshal(data, &k) != nil {
			t.Fatalf("nothing kept: %v", err)
		}
		return k
	}
	marked := sandbox.Probe{Layers: sandbox.Layers{Landlock: 42}, Missing: map[string]string{}}
	keep(keptProbe{Key: key, Until: time.Now().Add(time.Minute), Probe: marked})
	rememberProbe(state, helper)
	if got := sandbox.ProbeWall(helper); got.Layers.Landlock != 42 {
		t.Errorf("the kept probe was not used: %+v", got)
	}

	other := helper + "-2"
	os.WriteFile(other, []byte("#!/bin/sh\nexit 1\n"), 0o755)
	for name, k := range map[string]keptProbe{
		"another helper": {Key: key, Until: time.Now().Add(time.Minute), Probe: marked},
		"past its time":  {Key: probeKey(other), Until: time.Now().Add(-time.Second), Probe: marked},
	} {
		keep(k)
		rememberProbe(state, other)
		got := kept()
		if got.Key != probeKey(other) || got.Probe.Layers.Landlock == 42 || got.Probe.Layers.Mount || !time.Now().Before(got.Until) {
			t.Errorf("%s: kept %+v", name, got)
		}
		if p := sandbox.ProbeWall(other); p.Layers.Mount {
			t.Errorf("%s: a helper that fails raises a wall: %+v", name, p)
		}
	}
}
