package admin

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/zones"
)

// drop is a zone kind defined only in this test.
var _, dropErr = zones.Define(zones.KindSpec{
	Name:    "drop",
	Allows:  zones.Ops(zones.OpCreate, zones.OpMoveIn),
	Colour:  zones.Colour{CSS: "#7b1fa2"},
	English: "drop new files in, never read them",
	Russian: "класть новые файлы, но не читать",
})

// The panel colours every kind from the kind table, a kind defined in Go
// included, with no token (it is part of the page, not of the log).
func TestZonesStyleFollowsTheKindTable(t *testing.T) {
	if dropErr != nil {
		t.Fatal(dropErr)
	}
	srv := newPanel(t, filepath.Join(t.TempDir(), "audit.jsonl"))
	res, body := get(t, srv.URL+"/zones.css", "")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("zones.css: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{`.zone[data-zone="protected"] { color: #c62828; }`, `.zone[data-zone="hidden"] { color: #c62828; }`, `.zone[data-zone="drop"] { color: #7b1fa2; }`} {
		if !strings.Contains(body, want) {
			t.Errorf("zones.css lacks %s:\n%s", want, body)
		}
	}
	if res.Header.Get("Content-Security-Policy") != CSP {
		t.Error("zones.css is served without the CSP")
	}
}
