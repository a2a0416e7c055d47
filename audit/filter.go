package audit

import (
	"iter"
	"slices"
	"strings"
	"time"
)

// Filter selects records; an empty field matches everything.
type Filter struct {
	Session  string
	Tool     string // matched regardless of case: bash matches the hook's Bash
	Decision string // allow | deny | error, or failed: allowed, then failed
	// Path matches a record when any effect path, or any path argument
	// (path, source, destination, file_path, notebook_path, …), contains
	// it: "мета" matches "мета/x.md" and everything under it. It is a
	// filter for reading, so it also matches "мета2/x": it is not a zone.
	Path  string
	Since time.Time // records at or after it
}

// Match reports whether r, a line read on its own, passes the filter.
func (f Filter) Match(r *Record) bool {
	return f.MatchCall(&Call{Record: *r})
}

// MatchCall reports whether a call passes the filter: its session, tool,
// decision and time are its own line's, failed is Call.Failed, and the
// path may be in any of its lines.
func (f Filter) MatchCall(c *Call) bool {
	r := &c.Record
	if f.Session != "" && r.Session != f.Session {
		return false
	}
	if f.Tool != "" && !strings.EqualFold(r.Tool, f.Tool) {
		return false
	}
	if f.Decision == "failed" {
		if !c.Failed() {
			return false
		}
	} else if f.Decision != "" && string(r.Decision) != f.Decision {
		return false
	}
	if !f.Since.IsZero() && r.Time.Before(f.Since) {
		return false
	}
	if f.Path != "" && !slices.ContainsFunc(c.Lines(), func(l *Record) bool { return matchPath(l, f.Path) }) {
		return false
	}
	return true
}

func matchPath(r *Record, p string) bool {
	p = strings.TrimPrefix(p, "./")
	if q := strings.TrimRight(p, "/"); q != "" {
		p = q
	}
	for _, e := range r.Effects {
		if strings.Contains(e.Path, p) {
			return true
		}
	}
	for _, e := range r.Real {
		if strings.Contains(e.Path, p) || strings.Contains(e.From, p) {
			return true
		}
	}
	return argsHavePath(r.Args, p, 0)
}

// argsHavePath looks through the path-like arguments, nested ones too (the
// hook logs Claude Code's tool_input as it came).
func argsHavePath(args map[string]any, p string, depth int) bool {
	if depth > 4 {
		return false
	}
	for k, v := range args {
		switch v := v.(type) {
		case string:
			if isPathKey(k) && strings.Contains(v, p) {
				return true
			}
		case []any:
			if !isPathKey(k) {
				continue
			}
			for _, x := range v {
				if s, ok := x.(string); ok && strings.Contains(s, p) {
					return true
				}
			}
		case map[string]any:
			if argsHavePath(v, p, depth+1) {
				return true
			}
		}
	}
	return false
}

func isPathKey(k string) bool {
	k = strings.ToLower(k)
	return k == "source" || k == "destination" || strings.HasSuffix(k, "path") || strings.HasSuffix(k, "paths")
}

// Count is how many calls of one kind there were, and how they went.
type Count struct {
	Calls  int `json:"calls"`
	Denies int `json:"denies"`
	Errors int `json:"errors"` // decision error: the call could not be judged
	Failed int `json:"failed"` // allowed, then failed
}

func (c *Count) add(call *Call) {
	c.Calls++
	switch call.Decision {
	case "deny":
		c.Denies++
	case "error":
		c.Errors++
	}
	if call.Failed() {
		c.Failed++
	}
}

// Stats summarise a stretch of the log.
type Stats struct {
	Count
	ByDecision map[string]int    `json:"by_decision"`
	ByRule     map[string]int    `json:"by_rule"` // denies by the rule that denied
	ByTool     map[string]*Count `json:"by_tool"`
	BySession  map[string]*Count `json:"by_session"`
	ByAgent    map[string]*Count `json:"by_agent"`
	First      time.Time         `json:"first"` // time of the earliest record
	Last       time.Time         `json:"last"`  // and of the latest
}

// NoRule is the ByRule key for a deny that names no rule.
const NoRule = "(none)"

func (s *Stats) init() {
	if s.ByDecision == nil {
		s.ByDecision = map[string]int{}
		s.ByRule = map[string]int{}
		s.ByTool = map[string]*Count{}
		s.BySession = map[string]*Count{}
		s.ByAgent = map[string]*Count{}
	}
}

// Add counts one line in, as a call on its own.
func (s *Stats) Add(r *Record) {
	s.AddCall(&Call{Record: *r})
}

// AddCall counts one call in: once, whatever lines it has; its decision
// is its own line's, failed is Call.Failed.
func (s *Stats) AddCall(c *Call) {
	s.init()
	r := &c.Record
	s.Count.add(c)
	s.ByDecision[string(r.Decision)]++
	if r.Decision == Deny {
		rule := r.Rule
		if rule == "" {
			rule = NoRule
		}
		s.ByRule[rule]++
	}
	addTo(s.ByTool, r.Tool, c)
	addTo(s.BySession, r.Session, c)
	addTo(s.ByAgent, r.Agent, c)
	if !r.Time.IsZero() {
		if s.First.IsZero() || r.Time.Before(s.First) {
			s.First = r.Time
		}
		if r.Time.After(s.Last) {
			s.Last = r.Time
		}
	}
}

func addTo(m map[string]*Count, k string, call *Call) {
	c := m[k]
	if c == nil {
		c = &Count{}
		m[k] = c
	}
	c.add(call)
}

// Summarise counts the calls the records make, joined (Join): a line that
// continues a call adds to that call, not to the count.
func Summarise(records iter.Seq[Record]) Stats {
	var s Stats
	for c := range Join(records) {
		s.AddCall(c)
	}
	s.init() // an empty log still gives maps, not nulls
	return s
}

// SummariseFile counts the calls of the log at path that pass f: every
// line is joined (ReadCalls), then the calls are filtered. Like Read, it
// counts every call it can and reports the first damaged line as a
// *LineError alongside the stats.
func SummariseFile(path string, f Filter) (Stats, error) {
	var s Stats
	err := ReadCalls(path, func(c *Call) error {
		if f.MatchCall(c) {
			s.AddCall(c)
		}
		return nil
	})
	s.init()
	return s, err
}
