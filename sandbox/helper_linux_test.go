package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

func TestDecodePlan(t *testing.T) {
	good, _ := json.Marshal(&helperPlan{Version: planVersion, Probe: true})
	if p, err := decodePlan(good); err != nil || !p.Probe {
		t.Fatalf("a plan of this version: %+v, %v", p, err)
	}
	for name, plan := range map[string]string{
		"no version":                `{"probe":true}`,
		"older version":             `{"version":0,"probe":true}`,
		"newer version":             `{"version":` + jsonInt(planVersion+1) + `,"probe":true}`,
		"unknown field":             `{"version":` + jsonInt(planVersion) + `,"probe":true,"seccomp":"strict"}`,
		"unknown field of the wall": `{"version":` + jsonInt(planVersion) + `,"wall":{"vault":"/v","landlock_net":[]}}`,
		"not JSON":                  `{"version":`,
	} {
		if p, err := decodePlan([]byte(plan)); err == nil {
			t.Errorf("%s: accepted as %+v", name, p)
		}
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

// helperRequest is a walled request that writes a marker into a write
// zone, so a test can tell whether bash ran at all.
func helperRequest(t *testing.T, helper string) (Request, string) {
	t.Helper()
	L := requireWall(t)
	dir := t.TempDir()
	tab, err := zones.New(dir, []zones.Entry{{Path: ".", Mode: zones.Write}}, zones.Options{})
	must(t, err)
	r := Request{
		Command: "echo walled; touch ran", Dir: dir, Env: []string{"PATH"}, Environ: os.Environ(),
		Timeout: 20 * time.Second,
		Wall:    &WallConfig{Zones: tab, Required: true, Layers: L, Helper: helper},
	}
	return r, filepath.Join(dir, "ran")
}

// TestWallHelperOfItsOwn starts the helper from a path, as vaultgate serve
// starts vaultgate-wall (here the test binary by its file name, which
// TestMain makes a helper), and the audit's layers say which helper it was.
func TestWallHelperOfItsOwn(t *testing.T) {
	exe, err := os.Executable()
	must(t, err)
	for helper, want := range map[string]string{exe: "helper:" + filepath.Base(exe), "": "helper:self"} {
		r, marker := helperRequest(t, helper)
		res, err := Run(context.Background(), r)
		if err != nil || res.Stdout != "walled\n" {
			t.Fatalf("helper %q: %v, stdout %q, stderr %q", helper, err, res.Stdout, res.Stderr)
		}
		if !slices.Contains(res.Isolation, "mountns") || !slices.Contains(res.Isolation, want) {
			t.Errorf("helper %q: isolation %v, want mountns and %s", helper, res.Isolation, want)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("helper %q: bash did not run: %v", helper, err)
		}
	}
}

// TestWallHelperFailsClosed: a helper that is missing, or is not a
// helper, fails the call, and bash never runs outside the wall instead.
func TestWallHelperFailsClosed(t *testing.T) {
	for name, helper := range map[string]string{
		"missing":       filepath.Join(t.TempDir(), HelperBinary),
		"not a helper":  "/bin/true",
		"not a program": "/etc/hostname",
	} {
		r, marker := helperRequest(t, helper)
		res, err := Run(context.Background(), r)
		if err == nil {
			t.Errorf("%s: the call ran: %+v", name, res)
		}
		if _, serr := os.Stat(marker); serr == nil || strings.Contains(res.Stdout, "walled") {
			t.Errorf("%s: bash ran (%v): %q", name, err, res.Stdout)
		}
	}
}

// TestProbeWallHelperMissing: a helper that can't start raises no layer,
// so a required wall is an error and a best-effort one is no wall.
func TestProbeWallHelperMissing(t *testing.T) {
	p := ProbeWall(filepath.Join(t.TempDir(), HelperBinary))
	if p.Layers != (Layers{}) {
		t.Fatalf("layers of a missing helper: %+v", p.Layers)
	}
	if _, err := p.For(false, false, true); err == nil || !strings.Contains(err.Error(), "mount namespace") {
		t.Errorf("required wall with a missing helper: %v", err)
	}
	if L, err := p.For(false, false, false); err != nil || L.Mount {
		t.Errorf("best-effort wall with a missing helper: %+v, %v", L, err)
	}
}

// planShape spells out the plan's type, field by field, as the helper
// decodes it.
func planShape(t reflect.Type, seen map[reflect.Type]bool) string {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		return t.Kind().String() + " " + planShape(t.Elem(), seen)
	case reflect.Map:
		return "map " + planShape(t.Key(), seen) + " " + planShape(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return t.Name()
		}
		seen[t] = true
		var b strings.Builder
		b.WriteString(t.Name() + "{")
		for i := range t.NumField() {
			f := t.Field(i)
			if tag := f.Tag.Get("json"); tag != "-" && f.IsExported() {
				b.WriteString(f.Name + " " + tag + " " + planShape(f.Type, seen) + "; ")
			}
		}
		return b.String() + "}"
	}
	return t.Kind().String()
}

// planShapes pins the plan's shape for each planVersion.
var planShapes = map[int]string{
	1: "e5efb1ae20b4582e",
	2: "b1c03e9dd380f504", // Wall.Overlay, Layers.Overlay
	3: "fc0acddba6f9d6be", // Overlay.Memory, Layers.MemoryLayer
	4: "749750fdb40da993", // Ahead: a helper started ahead of its call
	5: "208cd77cff43b30a", // aheadPlan.Overlay, Homes, Caps: the overlay, homes and bounding set made ahead
}

// TestPlanShapeIsVersioned: a change to what the plan holds must come with
// a new planVersion, or a helper of the old build would read the new plan.
func TestPlanShapeIsVersioned(t *testing.T) {
	sum := sha256.Sum256([]byte(planShape(reflect.TypeFor[helperPlan](), map[reflect.Type]bool{})))
	got := hex.EncodeToString(sum[:8])
	if want := planShapes[planVersion]; got != want {
		t.Errorf("the plan's shape is %s, planShapes[%d] is %q: if the plan changed, bump planVersion and pin its new shape", got, planVersion, want)
	}
}
