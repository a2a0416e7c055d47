package transport

import (
	"testing"

	"github.com/spf13/afero"
)

// TestZoneCellsEndToEnd drives each effect into a file of each zone through
// the real tools, on a vault of its own on disk for each zone, and checks
// the files afterwards: the zone table of the README, as the model meets
// it.
func TestZoneCellsEndToEnd(t *testing.T) {
	zonesDirs := map[string]string{"write": "w", "edit": "e", "create": "c", "protected": "p", "hidden": "h", "none": "n"}
	// read create modify delete move-out move-in
	want := map[string][6]bool{
		"write":     {true, true, true, true, true, true},
		"edit":      {true, true, true, false, true, true},
		"create":    {true, true, false, false, false, true},
		"protected": {true, false, false, false, false, false},
		"hidden":    {false, false, false, false, false, false},
		"none":      {false, false, false, false, false, false},
	}
	for zone, dir := range zonesDirs {
		vault := t.TempDir()
		fsys := afero.NewBasePathFs(afero.NewOsFs(), vault)
		for _, d := range zonesDirs {
			fsys.MkdirAll(d, 0o755)
			afero.WriteFile(fsys, d+"/f.md", []byte("old"), 0o644)
		}
		// the move partner is a write zone: never laundering, never refused for its own sake
		afero.WriteFile(fsys, "w/src.md", []byte("src"), 0o644)
		cfg := loadConfig(t, `vault = "`+vault+`"
[zones]
write = ["w"]
edit = ["e"]
create = ["c"]
protected = ["p"]
hidden = ["h"]
`)
		e := newEnvWith(t, cfg)
		f := dir + "/f.md"
		ok := func(tool string, args map[string]any) bool {
			_, isErr := e.call(tool, args)
			return !isErr
		}
		got := [6]bool{}
		got[0] = ok("read", map[string]any{"path": f})
		got[1] = ok("write", map[string]any{"path": dir + "/new.md", "content": "new"})
		got[2] = ok("write", map[string]any{"path": f, "content": "changed"}) // read above, if it was allowed
		got[3] = ok("delete", map[string]any{"path": dir + "/new.md"}) || (!got[1] && ok("delete", map[string]any{"path": f}))
		afero.WriteFile(fsys, dir+"/m.md", []byte("m"), 0o644)
		got[4] = ok("move", map[string]any{"source": dir + "/m.md", "destination": "e/moved-" + zone + ".md"})
		got[5] = ok("move", map[string]any{"source": "w/src.md", "destination": dir + "/in.md"})
		names := []string{"read", "create", "modify", "delete", "move-out", "move-in"}
		for i := range got {
			if got[i] != want[zone][i] {
				t.Errorf("%s in zone %s: allowed=%v, want %v", names[i], zone, got[i], want[zone][i])
			}
		}
		// the files agree with the decisions
		content, _ := afero.ReadFile(fsys, f)
		if changed := string(content) == "changed"; changed != want[zone][2] {
			t.Errorf("zone %s: file content %q after modify (allowed=%v)", zone, content, want[zone][2])
		}
		_, err := fsys.Stat(dir + "/in.md")
		if (err == nil) != want[zone][5] {
			t.Errorf("zone %s: moved-in file present=%v", zone, err == nil)
		}
		if !want[zone][1] {
			if _, err := fsys.Stat(dir + "/new.md"); err == nil {
				t.Errorf("zone %s: a refused create left a file", zone)
			}
		}
	}
}
