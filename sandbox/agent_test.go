package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentWall: the agent's plan binds its home writable and the run's
// paths read-only, covers a control path only where the view would show
// it (under a system folder), and refuses a home or bind that overlaps one.
func TestAgentWall(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	run := filepath.Join(dir, "run")
	vault := filepath.Join(dir, "vault")
	for _, d := range []string{home, run, vault} {
		os.Mkdir(d, 0o755)
	}
	w, err := AgentWall(AgentView{Home: home, Binds: []string{run}, Cover: []string{vault, "/etc/passwd", "/nonexistent-cover"}, Hide: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]MountKind{}
	for _, m := range w.Mounts {
		got[m.Path] = m.Kind
	}
	if got[home] != MountRW || got[run] != MountRO || got["/etc/passwd"] != MountEmpty {
		t.Errorf("mounts %+v", w.Mounts)
	}
	if _, ok := got[vault]; ok {
		t.Errorf("the vault, under a hidden folder, needs no cover of its own: %+v", w.Mounts)
	}
	if _, ok := got["/nonexistent-cover"]; ok {
		t.Errorf("a missing path was covered")
	}
	L := w.Layers
	if !L.Mount || !L.Net || !L.NoNew || !L.Caps || L.Landlock != 0 || L.RunAs || w.Network || w.Home != "" || len(w.Hide) != 1 {
		t.Errorf("plan %+v layers %+v", w, L)
	}
	for i := 1; i < len(w.Mounts); i++ {
		if byDepth(w.Mounts[i-1].Path, w.Mounts[i].Path) > 0 {
			t.Errorf("mounts out of order: %s before %s", w.Mounts[i-1].Path, w.Mounts[i].Path)
		}
	}
	for _, v := range []AgentView{
		{Home: filepath.Join(vault, "h"), Cover: []string{vault}},
		{Home: home, Binds: []string{vault}, Cover: []string{filepath.Join(vault, "x")}},
		{Home: "rel"},
		{Home: filepath.Join(dir, "missing")},
	} {
		if _, err := AgentWall(v); err == nil || !strings.Contains(err.Error(), "sandbox: agent:") {
			t.Errorf("%+v: %v", v, err)
		}
	}
}
