package admin

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/audit"
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
	q                  Query
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

// match reports whether an entry, whose searchable text is text, passes.
// The caller holds ix.mu.
func (ix *index) match(m *matcher, e *summary, text []byte) bool {
	q := &m.q
	switch {
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
	if m.path != nil && !bytes.Contains(text, m.path) {
		return false
	}
	for _, w := range m.words {
		if !bytes.Contains(text, w) {
			return false
		}
	}
	return true
}

func (ix *index) text(e *entry) []byte { return ix.arena[e.text:e.textEnd] }

// Row is a record as the panel sends it: the line's fields, and what the
// panel worked out of it.
type Row struct {
	audit.Record
	// Look names why the call needs a look: deny, failed, unpredicted,
	// many, delete, rule.
	Look []string `json:"look,omitempty"`
	// FailedWhy says why an allowed call failed.
	FailedWhy string `json:"failed_why,omitempty"`
	// Changes is how many paths the call changed.
	Changes int `json:"changes,omitempty"`
}

func rowOf(r audit.Record, s *summary) Row {
	return Row{Record: r, Look: s.look.Names(), FailedWhy: r.FailedWhy(), Changes: int(s.changes)}
}

// matchRecord matches a record that is not in the index yet (the live
// stream's), in the same terms.
func (ix *index) matchRecord(m *matcher, r audit.Record) (Row, bool) {
	p := derive(&r)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	s := p.sum
	s.session, s.agent, s.via = ix.strs.id(p.session), ix.strs.id(p.agent), ix.strs.id(p.via)
	s.tool, s.rule = ix.strs.id(p.tool), ix.strs.id(p.rule)
	if !ix.match(m, &s, p.text) {
		return Row{}, false
	}
	return rowOf(r, &s), true
}
