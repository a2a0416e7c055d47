package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultgate/vaultgate/zones"
)

// TestCoveredUnder: the index's covered paths inside one folder, as the
// zones spell them: none from a sibling, the folder itself not, a folder
// named in another case still taken in, and a path made a moment before
// the question there in the answer.
func TestCoveredUnder(t *testing.T) {
	vault := t.TempDir()
	for _, d := range []string{"notes/deep", "notesx", "other", ".git"} {
		os.MkdirAll(filepath.Join(vault, d), 0o755)
	}
	for _, f := range []string{"notes/deep/.env", "notesx/.env", "other/a.md"} {
		os.WriteFile(filepath.Join(vault, f), []byte("x"), 0o644)
	}
	tab, err := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Edit}, {Path: "**/.env", Mode: zones.Hidden}}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := WatchNames(vault, []*zones.Table{tab})
	defer x.Close()
	under := func(dir string) string {
		t.Helper()
		at, err := zones.Normalize(vault, dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.CoveredUnder(tab, at)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(got)
	}
	for dir, want := range map[string]string{
		".": "[.git notes/deep/.env notesx/.env]", "notes": "[notes/deep/.env]", "NOTES": "[notes/deep/.env]",
		"notes/deep/.env": "[]", "other": "[]",
	} {
		if got := under(dir); got != want {
			t.Errorf("CoveredUnder(%s) = %s, want %s", dir, got, want)
		}
	}
	os.WriteFile(filepath.Join(vault, "other/.env"), []byte("x"), 0o644)
	if got := under("other"); got != "[other/.env]" {
		t.Errorf("after other/.env was made: %s", got)
	}
	other, _ := zones.New(vault, []zones.Entry{{Path: ".", Mode: zones.Edit}}, zones.Options{})
	if _, err := x.CoveredUnder(other, zones.VaultRoot()); err == nil {
		t.Error("a table the index was not opened for got an answer")
	}
}
