package hookcmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/sandbox"
)

// The hook judges a Bash call as vaultgate exec will run it, so it needs
// to know which layers of the wall exec's helper can raise: a probe that
// starts the helper, which costs a Bash call's hook most of its time. The
// answer holds as long as the kernel, the user and the helper do, so the
// hook keeps it in the state folder for a while and probes again when any
// of them changed. It only shapes the hook's prediction: exec probes for
// itself, and refuses a call a stale answer let through.

// probeTTL is how long a kept probe is trusted.
const probeTTL = 10 * time.Minute

// probeFile is the kept probe, in the state folder.
const probeFile = "wall-probe.json"

type keptProbe struct {
	Key   string        `json:"key"`
	Until time.Time     `json:"until"`
	Probe sandbox.Probe `json:"probe"`
}

// rememberProbe gives this process the probe of helper kept in stateDir,
// or probes it and keeps the answer.
func rememberProbe(stateDir, helper string) {
	key := probeKey(helper)
	if key == "" || stateDir == "" {
		return // can't tell whether a kept one still holds: probe afresh
	}
	name := filepath.Join(stateDir, probeFile)
	if data, err := os.ReadFile(name); err == nil {
		var k keptProbe
		if json.Unmarshal(data, &k) == nil && k.Key == key && time.Now().Before(k.Until) && k.Probe.Missing != nil {
			sandbox.RememberProbe(helper, k.Probe)
			return
		}
	}
	data, err := json.Marshal(keptProbe{Key: key, Until: time.Now().Add(probeTTL), Probe: sandbox.ProbeWall(helper)})
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(stateDir, probeFile+".*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), name) != nil {
		os.Remove(tmp.Name())
	}
}

// probeKey names what a probe's answer depends on: this boot of the
// kernel, the user, and the helper binary (its path, size and time).
func probeKey(helper string) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	fi, err := os.Stat(helper)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s|%d|%s|%d|%d", strings.TrimSpace(string(boot)), os.Geteuid(), helper, fi.Size(), fi.ModTime().UnixNano())
}
