package admin

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// zonesCSS is the panel's zone colours, made from the kind table so that a
// kind defined in Go is coloured without touching the page. Kind names and
// colours are checked by zones.Define, so they can't break out of a rule.
func zonesCSS() string {
	var b strings.Builder
	b.WriteString("/* zone colours, from the zone kind table */\n")
	for _, m := range zones.Kinds() {
		if c := m.Colour().CSS; c != "" {
			fmt.Fprintf(&b, ".zone[data-zone=%q] { color: %s; }\n", m.String(), c)
		}
	}
	return b.String()
}

func (s *Server) zonesStyle(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprint(w, zonesCSS())
}
