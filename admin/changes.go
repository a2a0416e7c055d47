package admin

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/visible"
)

// maxDiffText bounds the diff text of one call the panel is sent; the
// rest is cut with a notice pointing at "vaultgate diff".
const maxDiffText = 64 << 10

// ChangesPage is the answer of /api/changes/{id}: what history kept of
// one call's changes, and the command that takes them back.
type ChangesPage struct {
	ID      string       `json:"id"`
	Undo    string       `json:"undo"`
	Changes []PathChange `json:"changes"`
	// Cut says the diffs were cut at maxDiffText.
	Cut bool `json:"cut,omitempty"`
	// CanUndo says the page may offer to undo the call here (Options.Undo).
	CanUndo bool `json:"can_undo"`
}

// PathChange is one changed path: its op, sizes, and the diff text (a
// line for a binary file, a link or a folder's non-files).
type PathChange struct {
	Path   string   `json:"path"`
	From   string   `json:"from,omitempty"`
	To     string   `json:"to,omitempty"`
	Op     string   `json:"op"`
	State  string   `json:"state"`
	Before SizeInfo `json:"before"`
	After  SizeInfo `json:"after"`
	Diff   string   `json:"diff"`
}

// SizeInfo is a path's state in brief.
type SizeInfo struct {
	Exists bool   `json:"exists"`
	Kind   string `json:"kind,omitempty"`
	Size   int64  `json:"size"`
	Text   string `json:"text"` // as vaultgate history prints it
}

func sizeInfo(st history.State) SizeInfo {
	return SizeInfo{Exists: st.Exists, Kind: st.Kind, Size: st.Size, Text: st.SizeText()}
}

// changes answers what one call changed. The store is opened read-only on
// each request: the panel never creates, locks or sweeps the history.
func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.opt.History == "" {
		httpError(w, http.StatusNotFound, "the panel has no history to show")
		return
	}
	store, err := history.OpenReadOnly(s.opt.History)
	if errors.Is(err, fs.ErrNotExist) {
		httpError(w, http.StatusNotFound, "no change of that id is kept")
		return
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "could not open the history")
		return
	}
	entries, err := store.Call(id)
	if errors.Is(err, history.ErrUnknownID) {
		httpError(w, http.StatusNotFound, "no change of that id is kept")
		return
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "could not read the history")
		return
	}
	if s.opt.Scope != nil {
		sc, err := s.opt.Scope()
		if err != nil {
			httpError(w, http.StatusInternalServerError, "could not tell this vault's changes from another's")
			return
		}
		for _, e := range entries {
			if err := sc.Check(id, e.Vault, "vaultgate admin"); err != nil {
				httpError(w, http.StatusNotFound, err.Error())
				return
			}
		}
	}
	page := ChangesPage{ID: id, Undo: s.undoLine(id), Changes: make([]PathChange, 0, len(entries)), CanUndo: s.opt.Undo != nil}
	budget := maxDiffText
	diffs, errs := store.EntryDiffs(entries)
	for i, e := range entries {
		c := PathChange{Path: e.Path, From: e.From, To: e.To, Op: string(e.Op), State: e.State,
			Before: sizeInfo(e.Before), After: sizeInfo(e.After)}
		text := diffs[i]
		if errs[i] != nil {
			// A body pruned by GC, or unreadable: say so, keep the rest.
			text = fmt.Sprintf("(the kept content of %s could not be read)\n", e.Path)
		}
		c.Diff, budget = cutText(text, budget, &page.Cut)
		page.Changes = append(page.Changes, c)
	}
	writeJSON(w, page)
}

// cutText keeps what fits in budget, cut at a line's end, and returns the
// budget left; a cut text ends with a notice.
func cutText(text string, budget int, cut *bool) (string, int) {
	if len(text) <= budget {
		return text, budget - len(text)
	}
	*cut = true
	if budget <= 0 {
		return "… not shown: the diff was cut above\n", 0
	}
	kept := text[:budget]
	if i := strings.LastIndexByte(kept, '\n'); i >= 0 {
		kept = kept[:i+1]
	} else {
		kept = ""
	}
	return kept + fmt.Sprintf("… cut: the panel shows at most %d KiB of a call's diff; vaultgate diff shows it whole\n", maxDiffText>>10), 0
}

// undoLine is the command that takes the call back, ready to paste into a
// shell: the config named when the panel knows it.
func (s *Server) undoLine(id string) string {
	return s.undoCommand(UndoRequest{IDs: []string{id}})
}

// shellQuote is s as one word to paste into bash: the shell parser's own
// quoting, which leaves a plain word alone.
func shellQuote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		// A NUL, which no shell word holds: shown through the one escape
		// (package visible), and quoted, so that a paste runs nothing.
		q, _ = syntax.Quote(visible.Line.Escape(s), syntax.LangBash)
	}
	return q
}
