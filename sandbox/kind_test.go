package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultgate/vaultgate/zones"
)

// drop is a zone kind defined only in this test: a write-only inbox (create
// and move in, never read). The wall knows it only by its op set.
var drop, dropErr = zones.Define(zones.KindSpec{
	Name:    "drop",
	Allows:  zones.Ops(zones.OpCreate, zones.OpMoveIn),
	English: "drop new files in, never read them",
	Russian: "класть новые файлы, но не читать",
})

// TestWallPlanDefinedKind: a folder that may not be read is covered, and
// gets no Landlock right, whatever else its kind allows: no mount or
// Landlock rule can make a folder writable yet unreadable, so the wall
// fails closed and only the file tools write there.
func TestWallPlanDefinedKind(t *testing.T) {
	must(t, dropErr)
	dir := t.TempDir()
	for _, d := range []string{"inbox", "w", "notes"} {
		must(t, os.Mkdir(filepath.Join(dir, d), 0o755))
	}
	tab, err := zones.New(dir, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "inbox", Mode: drop}, {Path: "w", Mode: zones.Write}}, zones.Options{})
	must(t, err)
	w, err := BuildWall(&WallConfig{Zones: tab}, "/tmp/home")
	must(t, err)
	inbox := filepath.Join(dir, "inbox")
	var covered bool
	for _, m := range w.Mounts {
		if m.Path == inbox {
			covered = m.Kind == MountEmpty && m.Zone == "drop" && m.Dir
		}
	}
	if !covered {
		t.Errorf("inbox is not covered as zone drop: %+v", w.Mounts)
	}
	grants := map[string]Access{}
	for _, g := range w.Grants {
		grants[g.Path] = g.Access
	}
	if a, ok := grants[inbox]; ok {
		t.Errorf("inbox, which may not be read, has Landlock right %q", a)
	}
	if grants[dir] != AccessChange || grants[filepath.Join(dir, "w")] != AccessWrite {
		t.Errorf("grants = %v, want change on the edit root and write on w", grants)
	}
	if kindFor(drop) != MountEmpty || kindFor(zones.Create) != MountRW || kindFor(zones.Protected) != MountRO || kindFor(zones.Hidden) != MountEmpty {
		t.Error("mount kinds do not follow read and create")
	}
}
