package admin

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/vaultid"
)

// Query is the panel's filter, as the page's URL keeps it: every field
// empty matches everything.
type Query struct {
	Session, Agent, Via string // exact
	Tool                string // in any case: bash matches the hook's Bash
	Decision            string // allow | deny | error | failed (allowed, then failed)
	Look                Look   // any of these reasons
	Text                string // words that must all be in a path, command, rule, reason or error, in any case
	Path                string // a substring of a path, in any case
	Since, Until        time.Time
}

// ParseQuery reads a Query from the page's parameters: session, agent,
// via, tool, decision, look (any, or a comma list), q, path, since and
// until (RFC 3339, a date, today, or a duration back).
func ParseQuery(v url.Values, now time.Time) (Query, error) {
	q := Query{Session: v.Get("session"), Agent: v.Get("agent"), Via: v.Get("via"),
		Tool: strings.TrimSpace(v.Get("tool")), Decision: v.Get("decision"),
		Text: v.Get("q"), Path: strings.TrimSpace(v.Get("path"))}
	switch q.Decision {
	case "", "allow", "deny", "error", "failed":
	default:
		return Query{}, fmt.Errorf("decision %q: want allow, deny, error or failed", q.Decision)
	}
	var err error
	if q.Look, err = parseLook(v.Get("look")); err != nil {
		return Query{}, err
	}
	if q.Since, err = audit.ParseSince(v.Get("since"), now); err != nil {
		return Query{}, err
	}
	if u := v.Get("until"); u != "" {
		if q.Until, err = audit.ParseSince(u, now); err != nil {
			return Query{}, fmt.Errorf("until: %w", err)
		}
	}
	return q, nil
}

// matcher is a Query made ready to run over entries.
type matcher struct {
	q Query
	// scope, when scoped, is the vault whose lines alone pass
	// (Options.Scope): never a line of another vault.
	scope              vaultid.Scope
	scoped             bool
	words              [][]byte
	path               []byte
	since, until       int64
	hasSince, hasUntil bool
}

func compile(q Query) *matcher {
	m := &matcher{q: q}
	for w := range strings.FieldsSeq(strings.ToLower(q.Text)) {
		m.words = append(m.words, []byte(w))
	}
	if p := strings.TrimPrefix(q.Path, "./"); p != "" {
		if t := strings.TrimRight(p, "/"); t != "" {
			p = t
		}
		m.path = []byte(strings.ToLower(p))
	}
	if !q.Since.IsZero() {
		m.since, m.hasSince = q.Since.UnixMilli(), true
	}
	if !q.Until.IsZero() {
		m.until, m.hasUntil = q.Until.UnixMilli(), true
	}
	return m
}

// match reports whether a call, whose summary is e and whose lines'
// searchable texts are texts, passes: every word in one of them. A part of
// a call never does. The caller holds ix.mu.
func (ix *index) match(m *matcher, e *summary, texts ...[]byte) bool {
	q := &m.q
	switch {
	case e.part:
		return false
	case m.scoped && !m.scope.Owns(ix.strs.name(e.vault)):
		return false
	case m.hasSince && e.ms < m.since, m.hasUntil && e.ms >= m.until:
		return false
	case m.q.Look != 0 && e.look&m.q.Look == 0:
		return false
	case q.Session != "" && ix.strs.name(e.session) != q.Session,
		q.Agent != "" && ix.strs.name(e.agent) != q.Agent,
		q.Via != "" && ix.strs.name(e.via) != q.Via:
		return false
	case q.Tool != "" && !strings.EqualFold(ix.strs.name(e.tool), q.Tool):
		return false
	}
	switch q.Decision {
	case "":
	case "allow":
		if e.decision != decAllow {
			return false
		}
	case "deny":
		if e.decision != decDeny {
			return false
		}
	case "error":
		if e.decision != decError {
			return false
		}
	case "failed":
		if !e.failed {
			return false
		}
	}
	if m.path != nil && !anyContains(texts, m.path) {
		return false
	}
	for _, w := range m.words {
		if !anyContains(texts, w) {
			return false
		}
	}
	return true
}

func anyContains(texts [][]byte, w []byte) bool {
	for _, t := range texts {
		if bytes.Contains(t, w) {
			return true
		}
	}
	return false
}

func (ix *index) text(e *entry) []byte { return ix.arena[e.text:e.textEnd] }

// Row is a call as the panel sends it: its line's fields (the judgement),
// under "exec" the line of the vaultgate exec that ran it (the run and
// what it really changed) and under "after" the hook's line after Claude
// Code ran it, when the call has them (audit.Call); and what the panel
// worked out of them all.
type Row struct {
	audit.Call
	// Look names why the call needs a look: deny, failed, unpredicted,
	// many, delete, rule.
	Look []string `json:"look,omitempty"`
	// FailedWhy says why an allowed call failed.
	FailedWhy string `json:"failed_why,omitempty"`
	// Changes is how many paths the call changed.
	Changes int `json:"changes,omitempty"`
}

func rowOf(c audit.Call, s *summary) Row {
	return Row{Call: c, Look: s.look.Names(), FailedWhy: c.FailedWhy(), Changes: int(s.changes)}
}
