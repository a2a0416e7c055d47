package audit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"
)

// slogEncoder is the encoder lines were written with before encodeBody
// appended fields itself: a slog.JSONHandler: the level and message slog adds are dropped, so the
// object holds only the Record's fields.
type slogEncoder struct {
	buf bytes.Buffer
	h   slog.Handler
}

func newSlogEncoder() *slogEncoder {
	e := &slogEncoder{}
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

// slogEncodeBody is encodeBody as it was.
func slogEncodeBody(r *Record) ([]byte, error) {
	e := newSlogEncoder()

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
	)
	if r.Vault != "" {
		attrs = append(attrs, slog.String("vault", r.Vault)) // absent from lines before vaults were named
	}
	attrs = append(attrs,
		slog.String("session", r.Session),
		slog.String("agent", r.Agent),
		slog.String("via", string(r.Via)),
	)
	if r.Run != "" {
		attrs = append(attrs, slog.String("run", r.Run)) // absent from other lines, which verify unchanged
	}
	if r.Event != "" {
		attrs = append(attrs, slog.String("event", r.Event)) // absent from older lines, which verify unchanged
	}
	if r.ToolUseID != "" {
		attrs = append(attrs, slog.String("tool_use_id", r.ToolUseID))
	}
	if r.Continues != "" {
		attrs = append(attrs, slog.String("continues", r.Continues))
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
		slog.String("decision", string(r.Decision)),
	)
	for _, f := range [...]struct{ k, v string }{
		{"rule", r.Rule}, {"reason", r.Reason}, {"outcome", string(r.Outcome)}, {"error", r.Error},
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

// encodeBody must write the bytes the slog handler wrote, so that old and
// new lines read, mask and verify alike.
func TestEncodeLikeSlog(t *testing.T) {
	code := 3
	recs := []*Record{
		{},
		{Time: time.Date(2026, 12, 2, 13, 4, 5, 600, time.UTC), ID: "01J", Session: "s", Agent: "a", Via: "stdio", Tool: "read",
			Args: map[string]any{"path": "notes/a.md", "n": 3.5, "list": []any{"x", 1}}, Effects: []Effect{{Op: "read", Path: "notes/a.md", Zone: "edit"}},
			Decision: "allow", Outcome: "ok", DurationMS: 0.0000012},
		{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3*3600)), Vault: "0123456789abcdef", Run: "r1", Event: EventAfter, ToolUseID: "toolu_01\"x", Continues: "01J\u2028\x01", Tool: "bash",
			Args:     map[string]any{"command": "echo \"<&>\"\b\f\x00\x1f\u2028\u2029\xff tab\t"},
			Real:     []RealEffect{{Op: "modify", Path: "p", Zone: "edit", Before: &FileState{Mode: "0644", Size: 1, SHA256: "ab"}, Unpredicted: true}},
			Decision: "deny", Rule: "r\n", Reason: "why <b> & \u00e9 \U0001F600", Error: "e\r", DurationMS: 1e21,
			ExitCode: &code, TimedOut: true, Signal: 9, Stdout: "out\x7f", Stderr: "err\xc3", Wall: []string{"landlock", "layer:memory"}},
		sample(1), sample(2), benchRecord(),
	}
	for i, r := range recs {
		want, werr := slogEncodeBody(r)
		got, gerr := encodeBody(r)
		if werr != nil || gerr != nil || !bytes.Equal(got, want) {
			t.Errorf("record %d:\n got %s (%v)\nwant %s (%v)", i, got, gerr, want, werr)
		}
	}
}

func FuzzEncodeLikeSlog(f *testing.F) {
	f.Add("notes/a.md", "why", "cmd", 1.5, int64(0))
	f.Add("\x00\xff\u2028\"\\", "<>&", "\b\f", 1e-7, int64(1e18))
	f.Fuzz(func(t *testing.T, path, reason, command string, dur float64, nanos int64) {
		r := &Record{
			Time: time.Unix(0, nanos).UTC(), ID: path, Vault: command, Session: reason, Continues: path, Agent: command, Via: "stdio", Tool: path,
			Args:     map[string]any{path: command, "n": dur},
			Effects:  []Effect{{Op: command, Path: path, Zone: reason}},
			Decision: Decision(reason), Reason: reason, Error: command, DurationMS: dur, Stdout: path, Stderr: command, Wall: []string{reason},
		}
		want, werr := slogEncodeBody(r)
		got, gerr := encodeBody(r)
		if werr != nil || gerr != nil {
			if (werr == nil) == (gerr == nil) {
				return // both refuse
			}
			if y := r.Time.Year(); gerr != nil && (y < 0 || y >= 10000) {
				return // slog wrote no valid line for such a time either
			}
			t.Fatalf("slog: %v, encodeBody: %v", werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}
