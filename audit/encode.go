package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/internal/jsonstr"
)

// A line's body is appended field by field, in the order below, with
// strings escaped as log/slog's JSON handler escapes them (lines written
// before this encoder came from that handler, and verify and the masker
// take both as they are) and args, effects and the rest through a
// json.Encoder that does not escape HTML. TestEncodeLikeSlog holds the
// bytes to what the handler wrote.

// lineEncoder is the scratch space of one encodeBody.
type lineEncoder struct {
	buf  []byte
	js   bytes.Buffer
	json *json.Encoder
}

var lineEncoders = sync.Pool{New: func() any {
	e := &lineEncoder{}
	e.json = json.NewEncoder(&e.js)
	e.json.SetEscapeHTML(false)
	return e
}}

var errEncode = errors.New("audit: encoder produced no object")

// encodeBody returns the line for r without its seq and prev: the bytes
// from the opening brace up to, not including, the closing one. The chain
// fields come last, after masking, so a secret can never disturb them.
func encodeBody(r *Record) ([]byte, error) {
	e := lineEncoders.Get().(*lineEncoder)
	defer func() {
		if cap(e.buf) <= 64<<10 { // keep the pool's buffers small
			lineEncoders.Put(e)
		}
	}()
	e.buf = e.buf[:0]

	if y := r.Time.Year(); y < 0 || y >= 10000 {
		return nil, fmt.Errorf("time %v is outside RFC 3339's years", r.Time)
	}
	e.buf = append(e.buf, `{"time":"`...)
	e.buf = r.Time.AppendFormat(e.buf, time.RFC3339Nano)
	e.buf = append(e.buf, '"')
	e.str("id", r.ID)
	if r.Vault != "" {
		e.str("vault", r.Vault) // absent from lines before vaults were named, which verify unchanged
	}
	e.str("session", r.Session)
	e.str("agent", r.Agent)
	e.str("via", string(r.Via))
	if r.Run != "" {
		e.str("run", r.Run) // absent from other lines, which verify unchanged
	}
	if r.Event != "" {
		e.str("event", r.Event) // absent from older lines, which verify unchanged
	}
	if r.ToolUseID != "" {
		e.str("tool_use_id", r.ToolUseID) // likewise
	}
	if r.Continues != "" {
		e.str("continues", r.Continues) // likewise
	}
	e.str("tool", r.Tool)
	var args any = r.Args
	if r.Args == nil {
		args = map[string]any{}
	}
	if err := e.value("args", args); err != nil {
		return nil, fmt.Errorf("args cannot be written as JSON: %w", err)
	}
	var effects any = r.Effects
	if r.Effects == nil {
		effects = []Effect{}
	}
	if err := e.value("effects", effects); err != nil {
		return nil, err
	}
	if len(r.Real) > 0 {
		if err := e.value("real", r.Real); err != nil { // absent from other lines, which verify unchanged
			return nil, err
		}
	}
	e.str("decision", string(r.Decision))
	for _, f := range [...]struct{ k, v string }{
		{"rule", r.Rule}, {"reason", r.Reason}, {"outcome", string(r.Outcome)}, {"error", r.Error},
	} {
		if f.v != "" {
			e.str(f.k, f.v)
		}
	}
	dur := r.DurationMS
	if math.IsNaN(dur) || math.IsInf(dur, 0) {
		dur = 0 // JSON has no NaN; a reader could not parse the line back
	}
	if err := e.value("duration_ms", dur); err != nil {
		return nil, err
	}
	if r.ExitCode != nil {
		e.int("exit_code", int64(*r.ExitCode))
	}
	// Why a bash call ended and the head of its output: absent from other
	// lines and from lines before them, which verify unchanged.
	if r.TimedOut {
		e.key("timed_out")
		e.buf = append(e.buf, "true"...)
	}
	if r.Signal != 0 {
		e.int("signal", int64(r.Signal))
	}
	for _, f := range [...]struct{ k, v string }{{"stdout", r.Stdout}, {"stderr", r.Stderr}} {
		if f.v != "" {
			e.str(f.k, f.v)
		}
	}
	if len(r.Wall) > 0 {
		if err := e.value("wall", r.Wall); err != nil {
			return nil, err
		}
	}
	return bytes.Clone(e.buf), nil
}

func (e *lineEncoder) key(k string) {
	e.buf = append(e.buf, ',', '"')
	e.buf = append(e.buf, k...)
	e.buf = append(e.buf, '"', ':')
}

func (e *lineEncoder) str(k, v string) {
	e.key(k)
	e.buf = appendJSONString(e.buf, v)
}

func (e *lineEncoder) int(k string, v int64) {
	e.key(k)
	e.buf = strconv.AppendInt(e.buf, v, 10)
}

func (e *lineEncoder) value(k string, v any) error {
	e.js.Reset()
	if err := e.json.Encode(v); err != nil {
		return err
	}
	e.key(k)
	e.buf = append(e.buf, bytes.TrimSuffix(e.js.Bytes(), []byte{'\n'})...)
	return nil
}

// appendJSONString appends s as a quoted JSON string, escaped as slog's
// JSON handler escapes it: the lines before this encoder were written so,
// and their hashes are of those bytes.
func appendJSONString(buf []byte, s string) []byte { return jsonstr.Append(buf, s, jsonstr.AsSlog) }

// finishLine closes a body from encodeBody with the chain fields and a newline.
func finishLine(body []byte, seq int64, prev string) []byte {
	line := make([]byte, 0, len(body)+len(prev)+40)
	line = append(line, body...)
	line = append(line, `,"seq":`...)
	line = strconv.AppendInt(line, seq, 10)
	line = append(line, `,"prev":"`...)
	line = append(line, prev...)
	line = append(line, "\"}\n"...)
	return line
}

// masker replaces secret values inside the JSON strings of a line.
type masker struct {
	forms [][]byte // each secret as it appears inside a JSON string, longest first
}

const maskText = "[masked]"

func newMasker(secrets []string) *masker {
	seen := map[string]bool{}
	m := &masker{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			m.forms = append(m.forms, []byte(s))
		}
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		// slog writes strings itself and args through a json.Encoder that
		// does not escape HTML; the two agree except on \b and \f, so
		// mask both spellings. json.Marshal's HTML-escaped spelling is
		// covered too, for args a caller pre-encoded that way.
		var h bytes.Buffer
		enc := json.NewEncoder(&h)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		hb := bytes.TrimRight(h.Bytes(), "\n")
		form := hb[1 : len(hb)-1]
		add(string(form))
		alt := bytes.ReplaceAll(form, []byte(`\b`), []byte(`\u0008`))
		alt = bytes.ReplaceAll(alt, []byte(`\f`), []byte(`\u000c`))
		add(string(alt))
		q, _ := json.Marshal(s)
		add(string(q[1 : len(q)-1]))
	}
	sort.SliceStable(m.forms, func(i, j int) bool { return len(m.forms[i]) > len(m.forms[j]) })
	return m
}

// mask returns body with every secret form replaced by maskText. It
// replaces only inside string values and inside keys below the top level,
// and only where a JSON escape begins, so the object stays valid and its
// own field names stay intact.
func (m *masker) mask(body []byte) []byte {
	if m == nil || len(m.forms) == 0 {
		return body
	}
	found := false
	for _, f := range m.forms {
		if bytes.Contains(body, f) {
			found = true
			break
		}
	}
	if !found {
		return body
	}
	out := make([]byte, 0, len(body))
	var stack []byte // '{' or '['
	expectKey := false
	inString, protected := false, false
	for i := 0; i < len(body); {
		c := body[i]
		if !inString {
			switch c {
			case '{':
				stack = append(stack, c)
				expectKey = true
			case '[':
				stack = append(stack, c)
				expectKey = false
			case '}', ']':
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				expectKey = false
			case ',':
				expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
			case '"':
				inString = true
				isKey := expectKey && len(stack) > 0 && stack[len(stack)-1] == '{'
				protected = isKey && len(stack) == 1
				expectKey = false
			}
			out = append(out, c)
			i++
			continue
		}
		// Inside a string, i is at the start of a character or an escape.
		if c == '"' {
			inString = false
			out = append(out, c)
			i++
			continue
		}
		if !protected {
			if n := m.match(body[i:]); n > 0 {
				out = append(out, maskText...)
				i += n
				continue
			}
		}
		n := 1
		if c == '\\' && i+1 < len(body) {
			n = 2
			if body[i+1] == 'u' {
				n = 6
			}
		}
		n = min(n, len(body)-i)
		out = append(out, body[i:i+n]...)
		i += n
	}
	return out
}

func (m *masker) match(b []byte) int {
	for _, f := range m.forms {
		if bytes.HasPrefix(b, f) {
			return len(f)
		}
	}
	return 0
}
