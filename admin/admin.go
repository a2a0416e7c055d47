package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/vaultid"
)

//go:embed web
var webFiles embed.FS

// MinTokenLen is the shortest token the panel accepts, as for serve --http.
const MinTokenLen = 16

// CSP is the Content-Security-Policy of every response: nothing inline,
// nothing from elsewhere, no framing, and Trusted Types so that no string
// can be assigned to innerHTML and the like at all.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; " +
	"require-trusted-types-for 'script'; trusted-types 'none'"

// Options configure a Server.
type Options struct {
	// Log is the audit log to show.
	Log string
	// History is the folder of the history store (history.Dir of the
	// state folder) whose diffs a call's record shows; "" shows none.
	History string
	// Config is the policy file named in the undo line the panel offers;
	// "" leaves --config out.
	Config string
	// Scope says, on each request, whose lines the panel shows: its
	// vault's (vaultid.Scope.Owns), never another's that shares the log;
	// and whose calls' diffs. An error answers the request with one,
	// never with every line. nil shows every line of the log (a log given
	// without its config).
	Scope func() (vaultid.Scope, error)
	// Token is the bearer token every /api/ request must carry; New
	// refuses an empty or short one.
	Token string
	// Index is the file the panel keeps its index of the log in between
	// starts (IndexFile of the state folder), so that a restart reads only
	// what was appended; "" keeps it in memory only.
	Index string
	// Now is the clock for --since durations; nil is time.Now.
	Now func() time.Time
	// Heartbeat is how often the live stream sends a comment to keep
	// proxies from closing it; 0 is 15 seconds.
	Heartbeat time.Duration
	// Undo carries out the person's undo, or on a dry run plans it,
	// through a person's gate (server.OpenPerson, Gate.Undo): the page's
	// undo buttons (POST /api/undo). nil: the panel can't undo (a log
	// given without its config) and the page offers only the command.
	Undo func(server.UndoRequest) (*server.Undone, error)
}

// Server is the panel's HTTP handler.
type Server struct {
	opt    Options
	digest [sha256.Size]byte
	static http.Handler
	mux    *http.ServeMux
	ix     *index
	// started is closed once the index is loaded or built and saved.
	started chan struct{}
	undoMu  sync.Mutex // one undo of the panel's at a time
}

// Close keeps the index for the next start (when Options.Index names a
// file) and closes the log's files. The server must not be used after.
func (s *Server) Close() error {
	<-s.started
	var err error
	if s.opt.Index != "" {
		err = s.ix.save(s.opt.Index)
	}
	s.ix.mu.Lock()
	defer s.ix.mu.Unlock()
	s.ix.reset()
	s.ix.closed = true
	return err
}

// New returns the panel for opt.Log. It fails without a usable token: the
// panel has no mode without one.
func New(opt Options) (*Server, error) {
	if opt.Log == "" {
		return nil, errors.New("admin: no audit log given")
	}
	if len(opt.Token) < MinTokenLen {
		return nil, fmt.Errorf("admin: the token must be at least %d characters", MinTokenLen)
	}
	if strings.TrimSpace(opt.Token) != opt.Token {
		return nil, errors.New("admin: the token has leading or trailing white space")
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = 15 * time.Second
	}
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, digest: sha256.Sum256([]byte(opt.Token)), static: http.FileServerFS(sub), ix: newIndex(opt.Log)}
	// Load or build the index now, so the first page need not wait for all
	// of it; a request before it is done waits for the rest.
	s.ix.mu.Lock() // taken here, so that every request comes after the build
	s.ix.indexFile = opt.Index
	s.started = make(chan struct{})
	go func() {
		defer close(s.started)
		if opt.Index != "" {
			if err := s.ix.load(opt.Index); err != nil {
				s.ix.loadErr = err
				s.ix.reset()
			}
		}
		s.ix.refresh()
		s.ix.mu.Unlock()
		if opt.Index != "" {
			s.ix.save(opt.Index) // a cache: failing to keep it costs the next start time, nothing else
		}
	}()
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /api/records", s.authed(s.records))
	s.mux.HandleFunc("GET /api/stats", s.authed(s.stats))
	s.mux.HandleFunc("GET /api/day", s.authed(s.day))
	s.mux.HandleFunc("GET /api/events", s.authed(s.events))
	s.mux.HandleFunc("GET /api/changes/{id}", s.authed(s.changes))
	s.mux.HandleFunc("POST /api/undo", s.authed(s.undo))
	s.mux.HandleFunc("GET /api/", s.authed(func(w http.ResponseWriter, r *http.Request) {
		httpError(w, http.StatusNotFound, "no such endpoint")
	}))
	s.mux.HandleFunc("GET /zones.css", s.zonesStyle)
	s.mux.HandleFunc("GET /{file...}", s.file)
	return s, nil
}

// ServeHTTP sets the security headers on every answer, refusals included,
// and refuses every method that could change something, but the one act
// the page asks for, the person's undo (POST /api/undo, undo.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
	undo := r.URL.Path == "/api/undo"
	switch {
	case undo && r.Method != http.MethodPost:
		h.Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, "undo is a POST")
		return
	case !undo && r.Method != http.MethodGet && r.Method != http.MethodHead:
		h.Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "the panel only reads, but for its undo (POST /api/undo)")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// file serves the embedded page. It holds nothing from the log, so it
// needs no token: it is what asks for one.
func (s *Server) file(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/", "/index.html", "/app.js", "/app.css", "/favicon.svg":
	default:
		httpError(w, http.StatusNotFound, "not found")
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	s.static.ServeHTTP(w, r)
}

// authed lets a request through only with the right bearer token.
func (s *Server) authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if !s.tokenOK(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vaultgate admin"`)
			httpError(w, http.StatusUnauthorized, "token required")
			return
		}
		next(w, r)
	}
}

func (s *Server) tokenOK(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return false
	}
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], s.digest[:]) == 1
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"error\":%q}\n", msg)
}
