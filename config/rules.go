package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// denyFile is one [[rules.deny]] entry as written. Its `when` is a CEL
// expression, compiled by package rules; here it is only text.
type denyFile struct {
	Name     string        `toml:"name"`
	When     string        `toml:"when"`
	Reason   string        `toml:"reason"`
	ReasonRU string        `toml:"reason_ru"`
	Examples []exampleFile `toml:"examples"`
}

type exampleFile struct {
	Deny  *exampleCall `toml:"deny"`
	Allow *exampleCall `toml:"allow"`
}

type exampleCall struct {
	Tool    string          `toml:"tool"`
	Args    map[string]any  `toml:"args"`
	Via     string          `toml:"via"`
	Now     *time.Time      `toml:"now"`
	Session *exampleSession `toml:"session"`
}

type exampleSession struct {
	Read    []string       `toml:"read"`
	Changed []string       `toml:"changed"`
	Count   map[string]int `toml:"count"`
	Calls   int            `toml:"calls"`
	Started *time.Time     `toml:"started"`
}

// DenyRule is a [[rules.deny]] rule of one agent, as declared: package
// rules compiles When, and refuses to start on any fault in it.
type DenyRule struct {
	Name     string
	When     string // a CEL expression: true denies
	Reason   string // English
	ReasonRU string // Russian; Reason when not given
	Examples []Example
	// Key is where the rule is declared ("rules.deny[0]",
	// "agents.bot.rules.deny[1]"); Pos is where its `when` text begins in
	// File (zero when it can't be found), so that a compile error can
	// point at the line and column.
	Key  string
	File string
	Pos  Pos
}

// Pos is a line and column in the config file, both from 1.
type Pos struct{ Line, Col int }

// Example is a call a rule's author says it must deny (Deny) or let
// through; every one is judged at start-up.
type Example struct {
	Deny bool
	Tool string
	Args map[string]any // as JSON would carry them (numbers are float64)
	Via  string         // "" is check's
	Now  time.Time      // zero: the time of the check
	// Session is what the session has been allowed before the call.
	Session ExampleSession
	Key     string // "rules.deny[0].examples[1]"
	Line    int    // of its [[…examples]] header, 0 if not found
}

// ExampleSession is the session an example's call is judged in.
type ExampleSession struct {
	Read, Changed []string
	Count         map[string]int
	Calls         int
	Started       time.Time
}

// ReasonIn returns the rule's reason in lang ("ru" or anything else).
func (r *DenyRule) ReasonIn(lang string) string {
	if lang == "ru" && r.ReasonRU != "" {
		return r.ReasonRU
	}
	return r.Reason
}

// denyRules validates the declared rules of one agent (prefix "" for the
// top level) and places them in the file.
func (c *Config) denyRules(prefix string, list []denyFile, pos *positions) ([]DenyRule, error) {
	out := make([]DenyRule, 0, len(list))
	for i, d := range list {
		key := fmt.Sprintf("%srules.deny[%d]", prefix, i)
		fail := func(sub string, err error) error { return &Error{File: c.File, Key: key + sub, Err: err} }
		switch {
		case strings.TrimSpace(d.Name) == "":
			return nil, fail(".name", errors.New("required: the rule's name, which refusals and the audit log show"))
		case strings.TrimSpace(d.When) == "":
			return nil, fail(".when", fmt.Errorf("rule %q: required: a CEL expression that is true for what the rule denies", d.Name))
		case strings.TrimSpace(d.Reason) == "":
			return nil, fail(".reason", fmt.Errorf("rule %q: required: what the model reads when the rule denies", d.Name))
		}
		r := DenyRule{Name: d.Name, When: d.When, Reason: d.Reason, ReasonRU: d.ReasonRU, Key: key, File: c.File}
		r.Pos = pos.when(prefix, i)
		for j, x := range d.Examples {
			ekey := fmt.Sprintf("%s.examples[%d]", key, j)
			call, deny := x.Allow, false
			switch {
			case x.Deny != nil && x.Allow != nil:
				return nil, &Error{File: c.File, Key: ekey, Err: fmt.Errorf("rule %q: give deny or allow, not both", d.Name)}
			case x.Deny != nil:
				call, deny = x.Deny, true
			case x.Allow == nil:
				return nil, &Error{File: c.File, Key: ekey, Err: fmt.Errorf("rule %q: give deny = {tool = …, args = {…}} or allow = {…}", d.Name)}
			}
			if call.Tool == "" {
				return nil, &Error{File: c.File, Key: ekey, Err: fmt.Errorf("rule %q: the example names no tool", d.Name)}
			}
			args, err := jsonArgs(call.Args)
			if err != nil {
				return nil, &Error{File: c.File, Key: ekey + ".args", Err: err}
			}
			ex := Example{Deny: deny, Tool: call.Tool, Args: args, Via: call.Via, Key: ekey, Line: pos.example(prefix, i, j)}
			if call.Now != nil {
				ex.Now = *call.Now
			}
			if s := call.Session; s != nil {
				ex.Session = ExampleSession{Read: s.Read, Changed: s.Changed, Count: s.Count, Calls: s.Calls}
				if s.Started != nil {
					ex.Session.Started = *s.Started
				}
			}
			r.Examples = append(r.Examples, ex)
		}
		out = append(out, r)
	}
	return out, nil
}

// jsonArgs makes an example's TOML arguments what a client's JSON would
// be, so the tool plans them as it plans a real call.
func jsonArgs(m map[string]any) (map[string]any, error) {
	if m == nil {
		return map[string]any{}, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(b, &out)
	return out, err
}

// positions finds in the file's text where each [[rules.deny]] rule's
// `when` begins and where its examples are, which the TOML decoder does
// not tell. It reads headers and keys line by line; a rule written
// another way (inline tables) gets no position, and its errors then give
// the expression's own line and column.
type positions struct {
	whens    map[string]Pos // "prefix#i"
	examples map[string]int // "prefix#i#j"
}

func findPositions(text string) *positions {
	p := &positions{whens: map[string]Pos{}, examples: map[string]int{}}
	denies := map[string]int{}   // prefix -> rules seen
	examples := map[string]int{} // prefix#i -> examples seen
	current := ""                // "prefix#i" of the rule whose table we are in
	inMulti := ""                // the delimiter of a multi-line string being skipped
	lines := strings.Split(text, "\n")
	for n, line := range lines {
		if inMulti != "" {
			if strings.Contains(line, inMulti) {
				inMulti = ""
			}
			continue
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			current = ""
			h := headerName(t)
			switch {
			case strings.HasSuffix(h, "rules.deny.examples") && strings.HasPrefix(t, "[["):
				prefix := strings.TrimSuffix(h, "rules.deny.examples")
				i := denies[prefix] - 1
				if i >= 0 {
					k := fmt.Sprintf("%s#%d", prefix, i)
					p.examples[fmt.Sprintf("%s#%d", k, examples[k])] = n + 1
					examples[k]++
				}
			case strings.HasSuffix(h, "rules.deny") && strings.HasPrefix(t, "[["):
				prefix := strings.TrimSuffix(h, "rules.deny")
				current = fmt.Sprintf("%s#%d", prefix, denies[prefix])
				denies[prefix]++
			}
			continue
		}
		key, rest, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		value := strings.TrimLeft(rest, " \t")
		for _, delim := range []string{"'''", `"""`} {
			if strings.HasPrefix(value, delim) && !strings.Contains(value[3:], delim) {
				inMulti = delim
			}
		}
		if current == "" || strings.TrimSpace(key) != "when" {
			continue
		}
		col := len(line) - len(value) + 1 // of the opening quote
		switch {
		case inMulti != "" && strings.TrimSpace(value[3:]) == "":
			// The newline after an opening ''' is not part of the string.
			p.whens[current] = Pos{Line: n + 2, Col: 1}
		case inMulti != "":
			p.whens[current] = Pos{Line: n + 1, Col: col + 3}
		default:
			p.whens[current] = Pos{Line: n + 1, Col: col + 1}
		}
	}
	return p
}

// headerName is a table header without brackets, spaces or quotes, with
// the trailing dot of an agent's prefix kept: "agents.bot.rules.deny".
func headerName(t string) string {
	t = strings.TrimLeft(t, "[")
	if i := strings.Index(t, "]"); i >= 0 {
		t = t[:i]
	}
	return strings.NewReplacer(" ", "", "\t", "", `"`, "", "'", "").Replace(t)
}

func (p *positions) when(prefix string, i int) Pos {
	if p == nil {
		return Pos{}
	}
	return p.whens[fmt.Sprintf("%s#%d", prefix, i)]
}

func (p *positions) example(prefix string, i, j int) int {
	if p == nil {
		return 0
	}
	return p.examples[fmt.Sprintf("%s#%d#%d", prefix, i, j)]
}

// uniqueNames refuses two rules of one agent with one name: a refusal
// and the audit log name the rule, which must then say which one it was.
func uniqueNames(rules []DenyRule) error {
	seen := map[string]string{}
	for _, r := range rules {
		if other, ok := seen[r.Name]; ok {
			return fmt.Errorf("%s and %s are both named %q (an agent inherits the top level's rules unless it sets rules.inherit = false)", other, r.Key, r.Name)
		}
		seen[r.Name] = r.Key
	}
	return nil
}
