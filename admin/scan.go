package admin

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/vaultgate/vaultgate/audit"
)

// scanLine reads what the index needs of one line without building the
// whole record: encoding/json spends most of its time validating and
// allocating what the index never looks at (the arguments' bodies, the
// chain's hashes, the output). It is the fast path only: a line it can't
// read is read again by encoding/json, which either reads it (the same
// fields: slimLine) or says why it is not a record.
func scanLine(line []byte) (audit.Record, error) {
	var r audit.Record
	l := lexer{b: line}
	if l.object(func(key string) bool { return l.topField(&r, key) }) && l.end() {
		return r, nil
	}
	var s slimLine
	if err := json.Unmarshal(line, &s); err != nil {
		return r, err
	}
	return s.record(), nil
}

type lexer struct {
	b   []byte
	i   int
	bad bool
}

func (l *lexer) ws() {
	for l.i < len(l.b) && (l.b[l.i] == ' ' || l.b[l.i] == '\t' || l.b[l.i] == '\n' || l.b[l.i] == '\r') {
		l.i++
	}
}

func (l *lexer) end() bool { l.ws(); return !l.bad && l.i == len(l.b) }

func (l *lexer) eat(c byte) bool {
	l.ws()
	if l.i < len(l.b) && l.b[l.i] == c {
		l.i++
		return true
	}
	return false
}

func (l *lexer) peek() byte {
	l.ws()
	if l.i < len(l.b) {
		return l.b[l.i]
	}
	return 0
}

// object reads {"key": value, …}, calling field for each key with the
// lexer at its value; field must consume the value.
func (l *lexer) object(field func(key string) bool) bool {
	if !l.eat('{') {
		return false
	}
	if l.eat('}') {
		return true
	}
	for {
		key, ok := l.str()
		if !ok || !l.eat(':') || !field(key) {
			return false
		}
		if l.eat('}') {
			return true
		}
		if !l.eat(',') {
			return false
		}
	}
}

// array reads [value, …], calling item with the lexer at each value.
func (l *lexer) array(item func() bool) bool {
	if !l.eat('[') {
		return false
	}
	if l.eat(']') {
		return true
	}
	for {
		if !item() {
			return false
		}
		if l.eat(']') {
			return true
		}
		if !l.eat(',') {
			return false
		}
	}
}

// str reads a string; one with an escape is unquoted by encoding/json.
func (l *lexer) str() (string, bool) {
	if !l.eat('"') {
		return "", false
	}
	start, escaped := l.i, false
	for l.i < len(l.b) {
		switch c := l.b[l.i]; {
		case c == '"':
			raw := l.b[start:l.i]
			l.i++
			if !escaped {
				return string(raw), true
			}
			var s string
			if err := json.Unmarshal(l.b[start-1:l.i], &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			l.i += 2
		case c < 0x20:
			return "", false
		default:
			l.i++
		}
	}
	return "", false
}

// number reads an integer.
func (l *lexer) number() (int64, bool) {
	l.ws()
	start := l.i
	for l.i < len(l.b) && (l.b[l.i] == '-' || l.b[l.i] >= '0' && l.b[l.i] <= '9') {
		l.i++
	}
	n, err := strconv.ParseInt(string(l.b[start:l.i]), 10, 64)
	return n, err == nil
}

func (l *lexer) boolean() (bool, bool) {
	l.ws()
	switch {
	case hasAt(l.b, l.i, "true"):
		l.i += 4
		return true, true
	case hasAt(l.b, l.i, "false"):
		l.i += 5
		return false, true
	}
	return false, false
}

func hasAt(b []byte, i int, s string) bool { return len(b)-i >= len(s) && string(b[i:i+len(s)]) == s }

// skip passes over any value.
func (l *lexer) skip() bool {
	switch c := l.peek(); {
	case c == '"':
		_, ok := l.str()
		return ok
	case c == '{':
		return l.object(func(string) bool { return l.skip() })
	case c == '[':
		return l.array(l.skip)
	case c == 't' || c == 'f':
		_, ok := l.boolean()
		return ok
	case c == 'n':
		if hasAt(l.b, l.i, "null") {
			l.i += 4
			return true
		}
		return false
	case c == '-' || c >= '0' && c <= '9':
		start := l.i
		for l.i < len(l.b) && (l.b[l.i] == '-' || l.b[l.i] == '+' || l.b[l.i] == '.' || l.b[l.i] == 'e' || l.b[l.i] == 'E' || l.b[l.i] >= '0' && l.b[l.i] <= '9') {
			l.i++
		}
		return l.i > start
	}
	return false
}

// strTo reads a string into *dst, or a null as "".
func (l *lexer) strTo(dst *string) bool {
	if l.peek() == 'n' {
		return l.skip()
	}
	s, ok := l.str()
	*dst = s
	return ok
}

// wordTo is strTo for one of the audit log's typed words.
func wordTo[W ~string](l *lexer, dst *W) bool {
	var s string
	ok := l.strTo(&s)
	*dst = W(s)
	return ok
}

func (l *lexer) topField(r *audit.Record, key string) bool {
	switch key {
	case "time":
		var s string
		if !l.strTo(&s) {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		r.Time = t
		return err == nil
	case "vault":
		return l.strTo(&r.Vault)
	case "session":
		return l.strTo(&r.Session)
	case "agent":
		return l.strTo(&r.Agent)
	case "via":
		return wordTo(l, &r.Via)
	case "event":
		return l.strTo(&r.Event)
	case "tool_use_id":
		return l.strTo(&r.ToolUseID)
	case "id": // with continues, tool_use_id and session: what the join reads
		return l.strTo(&r.ID)
	case "continues":
		return l.strTo(&r.Continues)
	case "tool":
		return l.strTo(&r.Tool)
	case "decision":
		return wordTo(l, &r.Decision)
	case "rule":
		return l.strTo(&r.Rule)
	case "reason":
		return l.strTo(&r.Reason)
	case "outcome":
		return wordTo(l, &r.Outcome)
	case "error":
		return l.strTo(&r.Error)
	case "seq":
		n, ok := l.number()
		r.Seq = n
		return ok
	case "exit_code":
		n, ok := l.number()
		code := int(n)
		r.ExitCode = &code
		return ok
	case "signal":
		n, ok := l.number()
		r.Signal = int(n)
		return ok
	case "timed_out":
		b, ok := l.boolean()
		r.TimedOut = b
		return ok
	case "args":
		if l.peek() != '{' {
			return l.skip()
		}
		r.Args = map[string]any{}
		return l.object(func(k string) bool { return l.argField(r.Args, k) })
	case "effects":
		return l.array(func() bool {
			var e audit.Effect
			ok := l.object(func(k string) bool {
				switch k {
				case "op":
					return l.strTo(&e.Op)
				case "path":
					return l.strTo(&e.Path)
				case "zone":
					return l.strTo(&e.Zone)
				}
				return l.skip()
			})
			r.Effects = append(r.Effects, e)
			return ok
		})
	case "real":
		return l.array(func() bool {
			var e audit.RealEffect
			ok := l.object(func(k string) bool {
				var ok bool
				switch k {
				case "op":
					return l.strTo(&e.Op)
				case "path":
					return l.strTo(&e.Path)
				case "from":
					return l.strTo(&e.From)
				case "unpredicted":
					e.Unpredicted, ok = l.boolean()
					return ok
				case "refused":
					e.Refused, ok = l.boolean()
					return ok
				}
				return l.skip()
			})
			r.Real = append(r.Real, e)
			return ok
		})
	}
	return l.skip()
}

// argField keeps the string arguments derive reads (a path or a command)
// and lists of strings; it skips the rest, bodies' sizes and hashes
// among them.
func (l *lexer) argField(args map[string]any, k string) bool {
	switch l.peek() {
	case '"':
		if k != "command" && !pathKey(k) {
			return l.skip()
		}
		s, ok := l.str()
		args[k] = s
		return ok
	case '[':
		if !pathKey(k) {
			return l.skip()
		}
		var list []any
		ok := l.array(func() bool {
			if l.peek() != '"' {
				return l.skip()
			}
			s, ok := l.str()
			list = append(list, s)
			return ok
		})
		args[k] = list
		return ok
	case '{':
		sub := map[string]any{}
		args[k] = sub
		return l.object(func(k string) bool { return l.argField(sub, k) })
	}
	return l.skip()
}
