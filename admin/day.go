package admin

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// Counts are a stretch of calls in brief.
type Counts struct {
	Calls   int `json:"calls"`
	Changes int `json:"changes"` // calls that changed the vault
	Denies  int `json:"denies"`
	Failed  int `json:"failed"` // allowed, then failed
	Errors  int `json:"errors"` // could not be judged
	Look    int `json:"look"`   // need a look, for any reason
}

// add counts one call in: its entry, whose parts (exec's line, the
// hook's after line) are in its summary already.
func (c *Counts) add(e *entry) {
	c.Calls++
	if e.changes > 0 {
		c.Changes++
	}
	switch e.decision {
	case decDeny:
		c.Denies++
	case decError, decOther:
		c.Errors++
	}
	if e.failed {
		c.Failed++
	}
	if e.look != 0 {
		c.Look++
	}
}

// AgentDay is one agent's calls.
type AgentDay struct {
	Agent string `json:"agent"`
	Counts
}

// SessionDay is one session: who, when, how long, what it changed.
type SessionDay struct {
	ID    string   `json:"id"`
	Agent string   `json:"agent"`
	Via   []string `json:"via"`
	// Client is what the session came through, in words (clientOf), for
	// a label a person knows it by rather than its id.
	Client string    `json:"client"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Counts
	// Changed is the first paths it changed (at most maxChanged), in
	// order; ChangedPaths how many in all. A call that changed several
	// counts with the first of them.
	Changed      []string `json:"changed"`
	ChangedPaths int      `json:"changed_paths"`
}

// DayPage is the answer of /api/day: the matching calls (usually a day's)
// in brief, per agent and per session, sessions newest first.
type DayPage struct {
	Counts
	Agents   []AgentDay   `json:"agents"`
	Sessions []SessionDay `json:"sessions"`
	// More is how many sessions were left out past maxSessions.
	More    int    `json:"more,omitempty"`
	LastSeq int64  `json:"last_seq"`
	Damaged string `json:"damaged,omitempty"`
	// CanUndo says the page may offer its undo buttons (Options.Undo).
	CanUndo bool `json:"can_undo"`
}

const (
	maxSessions = 200
	maxChanged  = 5
)

func (s *Server) day(w http.ResponseWriter, r *http.Request) {
	m, unlock, ok := s.query(w, r)
	if !ok {
		return
	}
	defer unlock()
	ix := s.ix
	page := DayPage{Agents: []AgentDay{}, Sessions: []SessionDay{}, LastSeq: ix.lastSeq, Damaged: s.damaged(), CanUndo: s.opt.Undo != nil}
	agents := map[uint32]*AgentDay{}
	type sess struct {
		SessionDay
		vias  map[uint32]bool
		paths map[uint32]bool
	}
	sessions := map[uint32]*sess{}
	for i := range ix.entries {
		e := &ix.entries[i]
		if !ix.matchEntry(m, e) {
			continue
		}
		page.Counts.add(e)
		a := agents[e.agent]
		if a == nil {
			a = &AgentDay{Agent: ix.strs.name(e.agent)}
			agents[e.agent] = a
		}
		a.add(e)
		t := time.UnixMilli(e.ms).UTC()
		ss := sessions[e.session]
		if ss == nil {
			ss = &sess{SessionDay: SessionDay{ID: ix.strs.name(e.session), Agent: ix.strs.name(e.agent), Start: t, End: t, Changed: []string{}},
				vias: map[uint32]bool{}, paths: map[uint32]bool{}}
			sessions[e.session] = ss
		}
		ss.add(e)
		if t.Before(ss.Start) {
			ss.Start = t
		}
		if t.After(ss.End) {
			ss.End = t
		}
		if !ss.vias[e.via] {
			ss.vias[e.via] = true
			ss.Via = append(ss.Via, ix.strs.name(e.via))
		}
		if e.path != 0 && !ss.paths[e.path] {
			ss.paths[e.path] = true
			if len(ss.Changed) < maxChanged {
				ss.Changed = append(ss.Changed, ix.strs.name(e.path))
			}
		}
	}
	for _, a := range agents {
		page.Agents = append(page.Agents, *a)
	}
	slices.SortFunc(page.Agents, func(a, b AgentDay) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Agent, b.Agent))
	})
	for _, ss := range sessions {
		ss.ChangedPaths = len(ss.paths)
		ss.Client = clientOf(ss.Via, ss.ID)
		page.Sessions = append(page.Sessions, ss.SessionDay)
	}
	slices.SortFunc(page.Sessions, func(a, b SessionDay) int {
		return cmp.Or(b.Start.Compare(a.Start), cmp.Compare(a.ID, b.ID))
	})
	if len(page.Sessions) > maxSessions {
		page.More = len(page.Sessions) - maxSessions
		page.Sessions = page.Sessions[:maxSessions]
	}
	writeJSON(w, page)
}

// clientOf says in words what a session's calls came through, by the
// vias its lines name: Claude Code (its hook, or the stdio server Claude
// Code started, which takes Claude Code's session id rather than making
// a "stdio-" one), vaultgate run, an MCP client, the person.
func clientOf(vias []string, session string) string {
	has := func(v audit.Via) bool { return slices.Contains(vias, string(v)) }
	switch {
	case has(audit.ViaHook), has(audit.ViaStdio) && !strings.HasPrefix(session, "stdio-"):
		return "Claude Code"
	case has(audit.ViaRun):
		return "vaultgate run"
	case has(audit.ViaStdio):
		return "an MCP client over stdio"
	case has(audit.ViaHTTP):
		return "an MCP client over HTTP"
	case has(audit.ViaExec):
		return "vaultgate exec"
	case has(audit.ViaPanel):
		return "you, in this panel"
	case has(audit.ViaCLI):
		return "you, at the command line"
	case has(audit.ViaStartUp):
		return "vaultgate's start-up"
	}
	return strings.Join(vias, ", ")
}
