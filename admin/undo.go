package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/vaultid"
)

// The panel's one act: the person's undo of a call or of a session, asked
// for with POST /api/undo, first as a dry run (the preview), then for
// real once the person confirms. The panel does not undo by itself: it
// hands the request to Options.Undo, which carries it out through a
// person's gate (server.OpenPerson, Gate.Undo): the same planner, the
// same conflict rules and the same words as vaultgate undo, and one audit
// line, the person's, via "panel".

// maxUndoBody bounds a request's body: a list of call ids, or a session.
const maxUndoBody = 64 << 10

// maxUndoIDs bounds how many calls one request names.
const maxUndoIDs = 1000

// UndoRequest is the body of POST /api/undo: the calls to undo, by id or
// as a session, and whether only to preview it.
type UndoRequest struct {
	IDs     []string `json:"ids,omitempty"`
	Session string   `json:"session,omitempty"`
	DryRun  bool     `json:"dry_run,omitempty"`
}

// UndoAnswer is what /api/undo answers: each path and what the undo does
// (on a dry run, would do) to it, and what vaultgate undo prints for the
// same request, line by line (Lines; Problem lines are its stderr).
type UndoAnswer struct {
	DryRun bool `json:"dry_run"`
	// ID is the undo's own audit id, by which it is undone in turn (not
	// on a dry run, nor when nothing was put back).
	ID      string            `json:"id,omitempty"`
	Calls   int               `json:"calls"`
	Paths   []server.UndoPath `json:"paths"`
	Nothing []string          `json:"nothing,omitempty"`
	Already []string          `json:"already,omitempty"`
	Unnamed []string          `json:"unnamed,omitempty"`
	Lines   []server.UndoLine `json:"lines"`
	Command string            `json:"command"` // the same undo at a terminal
	Error   string            `json:"error,omitempty"`
}

// undo answers POST /api/undo. The token was checked (authed) before the
// body is read; then the request must be the page's own: JSON, from this
// origin. Every check refuses; none lets a doubt through.
func (s *Server) undo(w http.ResponseWriter, r *http.Request) {
	if s.opt.Undo == nil {
		httpError(w, http.StatusNotFound, "this panel was started without --config, so it can't undo: run vaultgate undo")
		return
	}
	if why := notThePage(r); why != "" {
		httpError(w, http.StatusForbidden, why)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		// A form or a text/plain POST is what another page can send
		// without asking the browser first: never read one.
		httpError(w, http.StatusUnsupportedMediaType, "want Content-Type: application/json")
		return
	}
	req, err := readUndo(w, r)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.undoMu.Lock() // one undo of the panel's at a time; the gate's vault lock holds against the rest
	u, err := s.opt.Undo(server.UndoRequest{IDs: req.IDs, Session: req.Session, DryRun: req.DryRun, Via: server.ViaPanel})
	s.undoMu.Unlock()
	a := UndoAnswer{DryRun: req.DryRun, Paths: []server.UndoPath{}, Lines: []server.UndoLine{}, Command: s.undoCommand(req)}
	if u != nil {
		a.ID, a.Calls, a.Nothing, a.Already, a.Unnamed = u.ID, u.Calls, u.Nothing, u.Already, u.Unnamed
		a.Paths = append(a.Paths, u.Paths...)
		a.Lines = append(a.Lines, u.Lines()...)
		if len(u.Restored) == 0 {
			a.ID = "" // nothing was put back: no undo to undo
		}
	}
	code := http.StatusOK
	switch {
	case errors.Is(err, history.ErrUnknownID) || errors.Is(err, vaultid.ErrOtherVault):
		// As the command line says it: nothing was done.
		code, a.Error = http.StatusBadRequest, err.Error()+" (nothing was undone)"
	case err != nil:
		code, a.Error = http.StatusInternalServerError, err.Error()
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	b, merr := json.Marshal(a)
	if merr != nil {
		httpError(w, http.StatusInternalServerError, "could not encode the answer")
		return
	}
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// notThePage says why a request is not the panel page's own, "" when it
// may be: a browser names the site that sends it (Sec-Fetch-Site, and
// Origin), and only this origin's is taken. The token is the guard; this
// refuses, besides, what another page makes a browser send. The browser's
// own Sec-Fetch-Site is taken first: a proxy in front of the panel (TLS)
// may rewrite Host, which Origin is checked against when there is none.
func notThePage(r *http.Request) string {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return ""
	case "":
	default:
		return "the request comes from another site's page"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "" // no browser's cross-origin request: a browser sends Origin with every cross-origin POST
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
		return "the request comes from another origin's page"
	}
	return ""
}

// readUndo reads the request's body, strictly: a JSON object of the known
// fields alone, the ids or the session (one of them), within bounds.
func readUndo(w http.ResponseWriter, r *http.Request) (UndoRequest, error) {
	var req UndoRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUndoBody))
	if err != nil {
		return req, fmt.Errorf("the body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("the body: want {\"ids\": [...]} or {\"session\": \"...\"}, and \"dry_run\": true for a preview (%v)", err)
	}
	if dec.More() {
		return req, errors.New("the body: one JSON object, nothing after it")
	}
	switch {
	case len(req.IDs) > 0 && req.Session != "":
		return req, errors.New("give ids or a session, not both")
	case len(req.IDs) == 0 && req.Session == "":
		return req, errors.New("give the ids of the calls to undo, or a session")
	case len(req.IDs) > maxUndoIDs:
		return req, fmt.Errorf("at most %d ids at once", maxUndoIDs)
	}
	for _, id := range req.IDs {
		if id == "" {
			return req, errors.New("an empty id")
		}
	}
	return req, nil
}

// undoCommand is the same undo at a terminal, ready to paste: with
// --dry-run for a preview.
func (s *Server) undoCommand(req UndoRequest) string {
	line := "vaultgate undo "
	if s.opt.Config != "" {
		line += "--config " + shellQuote(s.opt.Config) + " "
	}
	if req.DryRun {
		line += "--dry-run "
	}
	if req.Session != "" {
		return line + "--session " + shellQuote(req.Session)
	}
	for i, id := range req.IDs {
		if i > 0 {
			line += " "
		}
		line += shellQuote(id)
	}
	return line
}
