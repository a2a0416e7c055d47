package transport

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/server"
)

// minTokenLen is the shortest bearer token accepted: a guessable token is
// an open door on any port.
const minTokenLen = 16

// Endpoint is where Streamable HTTP is served.
const Endpoint = "/mcp"

// Tokens reads each agent's bearer token from its env variable or file.
// Tokens never come from flags or the config itself. An agent with no token
// is not served; it is an error when none has one, or two share one.
func Tokens(cfg *config.Config) (map[string]string, error) {
	out := map[string]string{}
	seen := map[string]string{}
	for _, name := range sortedAgents(cfg) {
		src := cfg.Agents[name].Token
		var tok string
		switch {
		case src.File != "":
			b, err := os.ReadFile(src.File)
			if err != nil {
				return nil, fmt.Errorf("agent %s: token file: %w", name, err)
			}
			tok = strings.TrimSpace(string(b))
		case src.Env != "":
			tok = strings.TrimSpace(os.Getenv(src.Env))
		}
		if tok == "" {
			continue
		}
		if len(tok) < minTokenLen {
			return nil, fmt.Errorf("agent %s: the token is %d characters; use at least %d random ones (e.g. openssl rand -hex 32)", name, len(tok), minTokenLen)
		}
		if other, dup := seen[tok]; dup {
			return nil, fmt.Errorf("agents %s and %s have the same token: each token names one agent", other, name)
		}
		seen[tok] = name
		out[name] = tok
	}
	if len(out) == 0 {
		return nil, errors.New("no bearer token is configured: set VAULTGATE_TOKEN (or [http] token_env / token_file); HTTP is never served without one")
	}
	return out, nil
}

// HTTPHandler serves each agent that has a token at Endpoint. The token
// names the agent, and the agent is the session: the protocol mcp-go speaks
// here has no sessions of its own, and a client-chosen session id is no
// identity. A request with an Origin that is neither the server's own nor
// in the config's [http] origins is answered 403 (checkOrigin); an agent's
// request whose body is over [http] max_body is answered 413.
func HTTPHandler(g *server.Gate, tokens map[string]string) http.Handler {
	type agentRoute struct {
		sum     [32]byte
		handler http.Handler
	}
	var routes []agentRoute
	for name, tok := range tokens {
		p := g.Config().Agents[name]
		session := &policy.Session{ID: "http-" + name, Agent: name, State: policy.NewState()}
		c := server.Caller{Via: server.ViaHTTP, Session: session, Policy: p}
		s := MCP(g, p, func(context.Context) (server.Caller, error) { return c, nil })
		h := mcpserver.NewStreamableHTTPServer(s, mcpserver.WithEndpointPath(Endpoint))
		routes = append(routes, agentRoute{sum: sha256.Sum256([]byte(tok)), handler: h})
	}
	origins := g.Config().HTTP.Origins
	maxBody := maxBody(g.Config())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The Origin is the first thing looked at, before the path and the
		// token: a foreign one is refused whoever's token it carries, and
		// its answer is one 403 that depends on no secret and no path, so a
		// page in a foreign origin can't learn which paths exist or whether
		// a token it guessed is right, and never reaches an agent's tools.
		// A rebound name passes this check (its Host and Origin agree);
		// what stops it on loopback is the MCP library's refusal of a
		// Host that is not a loopback name, and the token everywhere.
		if ok, why := checkOrigin(r, origins); !ok {
			refuseOrigin(w, r, why)
			return
		}
		if r.URL.Path != Endpoint {
			http.NotFound(w, r)
			return
		}
		given, ok := bearer(r)
		var match http.Handler
		if ok {
			sum := sha256.Sum256([]byte(given))
			// Compare with every token, always: the time taken says
			// nothing about which one (or how much of one) matched.
			for _, rt := range routes {
				if subtle.ConstantTimeCompare(sum[:], rt.sum[:]) == 1 {
					match = rt.handler
				}
			}
		}
		if match == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vaultgate"`)
			http.Error(w, "401 unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
		// The body's size is looked at only now, after the token: an
		// unauthenticated request is answered 401 whatever its body, without
		// reading it, so it can't learn the limit (nor make the server hold
		// anything). An agent's request gets its body held whole, to at
		// most maxBody bytes: a declared length past it is refused at once,
		// and a chunked body is cut as it arrives, with a 413 of our own
		// rather than whatever mcp-go answers a failed read with.
		if r.ContentLength > maxBody {
			tooLarge(w, maxBody)
			return
		}
		body, err := readBody(http.MaxBytesReader(w, r.Body, maxBody), r.ContentLength, maxBody)
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				tooLarge(w, maxBody)
				return
			}
			http.Error(w, "400 bad request: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		match.ServeHTTP(w, r)
	})
}

// tooLarge answers a body past [http] max_body. The connection is closed
// after it (http.MaxBytesReader, or the unread body), so the rest of the
// body is never read.
func tooLarge(w http.ResponseWriter, maxBody int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("413 request entity too large: the body is over %d bytes ([http] max_body)", maxBody), http.StatusRequestEntityTooLarge)
}

// readBody reads body, which errs past limit bytes (http.MaxBytesReader),
// into one buffer: of the declared size when there is one, else grown by
// doubling to at most limit+1, so a body cut at the limit has cost at most
// about twice the limit, whatever it would have been.
func readBody(body io.Reader, size, limit int64) ([]byte, error) {
	n := int64(64 << 10)
	if size >= 0 {
		n = size + 1 // room for the read that finds the end
	}
	buf := make([]byte, 0, min(n, limit+1))
	for {
		// len(buf) <= limit, or body would have erred: there is room.
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit+1))
			copy(grown, buf)
			buf = grown
		}
		m, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// maxBody is the config's [http] max_body, or its default for a Config
// built without Load.
func maxBody(cfg *config.Config) int64 {
	if cfg.HTTP.MaxBody > 0 {
		return cfg.HTTP.MaxBody
	}
	return config.DefaultMaxBody
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimSpace(h[len(prefix):]), true
}
