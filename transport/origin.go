package transport

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/config"
)

// originRefused is the whole answer to a request whose Origin may not call
// the server: the status and a short reason, the same for every such
// request, so it says nothing of the tokens, the agents or the paths.
const originRefused = "403 forbidden: this Origin is neither the server's own nor listed in [http] origins"

// checkOrigin says whether r may be served as far as its Origin goes, and
// why not. A request with no Origin (any client that is not a browser) may.
// One with an Origin may when it is the server's own — the request's Host,
// with the scheme the request came in on — or one of listed; both sides are
// read by config.ParseOrigin, so the scheme and host compare without case,
// a missing port is the scheme's default, and an IPv6 address in one
// spelling. "null", a malformed Origin and more than one Origin are foreign.
func checkOrigin(r *http.Request, listed []config.Origin) (ok bool, why string) {
	values, present := r.Header["Origin"]
	if !present {
		return true, ""
	}
	if len(values) != 1 {
		return false, "more than one Origin"
	}
	o, err := config.ParseOrigin(values[0])
	if err != nil {
		return false, err.Error()
	}
	// serve speaks plain HTTP; behind a proxy that ends TLS the browser's
	// Origin is https:// and the proxy's own, which [http] origins lists.
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if own, err := config.ParseOrigin(scheme + "://" + r.Host); err == nil && own == o {
		return true, ""
	}
	if slices.Contains(listed, o) {
		return true, ""
	}
	return false, fmt.Sprintf("not the server's own (%q) nor listed in [http] origins", scheme+"://"+r.Host)
}

// refuseOrigin answers a request checkOrigin refused: 403, and a line on
// the server's stderr. It is no audit line: the request never reaches the
// gate, and a page in a foreign origin is no agent's call.
func refuseOrigin(w http.ResponseWriter, r *http.Request, why string) {
	fmt.Fprintf(os.Stderr, "vaultgate: refused an HTTP request from %s: Origin %q: %s\n",
		r.RemoteAddr, strings.Join(r.Header.Values("Origin"), ", "), why)
	http.Error(w, originRefused, http.StatusForbidden)
}
