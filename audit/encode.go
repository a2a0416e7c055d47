package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"sync"
	"time"
)

// encoder turns a Record into the body of its line through a
// slog.JSONHandler: the level and message slog adds are dropped, so the
// object holds only the Record's fields.
type encoder struct {
	buf bytes.Buffer
	h   slog.Handler
}

func newEncoder() *encoder {
	e := &encoder{}
	e.h = slog.NewJSONHandler(&e.buf, &slog.HandlerOptions{ReplaceAttr: dropBuiltins})
	return e
}

// dropBuiltins removes slog's own level and msg keys; the record's time is
// one of our attributes, and slog omits its own time when it is zero.
func dropBuiltins(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && (a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
		return slog.Attr{}
	}
	return a
}

var timeZero time.Time

var encoders = sync.Pool{New: func() any { return newEncoder() }}

var errEncode = errors.New("audit: encoder produced no object")

// encodeBody returns the line for r without its seq and prev: the bytes
// from the opening brace up to, not including, the closing one. The chain
// fields come last, after masking, so a secret can never disturb them.
func encodeBody(r *Record) ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	e.buf.Reset()

	args := r.Args
	if args == nil {
		args = map[string]any{}
	}
	effects := r.Effects
	if effects == nil {
		effects = []Effect{}
	}
	dur := r.DurationMS
	if math.IsNaN(dur) || math.IsInf(dur, 0) {
		dur = 0 // JSON has no NaN; a reader could not parse the line back
	}
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.Time("time", r.Time),
		slog.String("id", r.ID),
		slog.String("session", r.Session),
		slog.String("agent", r.Agent),
		slog.String("via", r.Via),
	)
	if r.Run != "" {
		attrs = append(attrs, slog.String("run", r.Run)) // absent from other lines, which verify unchanged
	}
	if r.Event != "" {
		attrs = append(attrs, slog.String("event", r.Event)) // absent from older lines, which verify unchanged
	}
	attrs = append(attrs,
		slog.String("tool", r.Tool),
		slog.Any("args", args),
		slog.Any("effects", effects),
	)
	if len(r.Real) > 0 {
		attrs = append(attrs, slog.Any("real", r.Real)) // absent from other lines, which verify unchanged
	}
	attrs = append(attrs,
		slog.String("decision", r.Decision),
	)
	for _, f := range [...]struct{ k, v string }{
		{"rule", r.Rule}, {"reason", r.Reason}, {"outcome", r.Outcome}, {"error", r.Error},
	} {
		if f.v != "" {
			attrs = append(attrs, slog.String(f.k, f.v))
		}
	}
	attrs = append(attrs, slog.Float64("duration_ms", dur))
	if r.ExitCode != nil {
		attrs = append(attrs, slog.Int("exit_code", *r.ExitCode))
	}
	// Why a bash call ended and the head of its output: absent from other
	// lines and from lines before them, which verify unchanged.
	if r.TimedOut {
		attrs = append(attrs, slog.Bool("timed_out", true))
	}
	if r.Signal != 0 {
		attrs = append(attrs, slog.Int("signal", r.Signal))
	}
	for _, f := range [...]struct{ k, v string }{{"stdout", r.Stdout}, {"stderr", r.Stderr}} {
		if f.v != "" {
			attrs = append(attrs, slog.String(f.k, f.v))
		}
	}
	if len(r.Wall) > 0 {
		attrs = append(attrs, slog.Any("wall", r.Wall))
	}
	rec := slog.NewRecord(timeZero, slog.LevelInfo, "", 0)
	rec.AddAttrs(attrs...)
	if err := e.h.Handle(context.Background(), rec); err != nil {
		return nil, err
	}
	b := bytes.TrimRight(e.buf.Bytes(), "\n")
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, errEncode
	}
	// slog writes a value it cannot marshal as a "!ERROR:" string; args
	// that are not an object could not be read back, so refuse them.
	if i := bytes.Index(b, []byte(`"args":"!ERROR:`)); i >= 0 {
		return nil, fmt.Errorf("args cannot be written as JSON: %s", truncate(b[i+8:], 120))
	}
	return bytes.Clone(b[:len(b)-1]), nil
}

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
