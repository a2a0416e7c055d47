package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	code := 1
	want := []Record{
		{
			Time: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC), ID: "id-1", Session: "s1", Agent: "default", Via: "stdio",
			Tool: "write", Args: map[string]any{"path": "notes/a.md", "content": Body("hello")},
			Effects:  []Effect{{Op: "create", Path: "notes/a.md", Zone: "edit"}},
			Decision: "allow", Outcome: "ok", DurationMS: 1.25,
		},
		{
			Time: time.Date(2026, 3, 1, 12, 0, 1, 0, time.FixedZone("MSK", 3*3600)), ID: "id-2", Vault: "0123456789abcdef", Session: "s1", Agent: "default", Via: "hook",
			Tool: "delete", Args: map[string]any{"path": "мета/план.md"},
			Effects:  []Effect{{Op: "delete", Path: "мета/план.md", Zone: "protected"}},
			Decision: "deny", Rule: "zones", Reason: `delete "мета/план.md": zone protected (read only). <b>&</b>`,
		},
		{
			Time: time.Date(2026, 3, 1, 12, 0, 2, 0, time.UTC), ID: "id-3", Session: "s2", Agent: "ops", Via: "exec", Continues: "id-2",
			Tool: "bash", Args: map[string]any{"command": "false"}, Decision: "allow", Outcome: "failed",
			Error: "exit status 1", ExitCode: &code, Wall: []string{"mount", "landlock"}, DurationMS: 12,
		},
		{
			Time: time.Date(2026, 3, 1, 12, 0, 3, 0, time.UTC), ID: "id-4", Session: "s2", Agent: "ops", Via: "http",
			Tool: "bash", Args: map[string]any{"command": "sed -i s/a/b/ notes/a.md; python3 x.py"}, Decision: "allow", Outcome: "ok",
			Effects: []Effect{{Op: "modify", Path: "notes/a.md", Zone: "edit"}},
			Real: []RealEffect{
				{Op: "modify", Path: "notes/a.md", Zone: "edit",
					Before: &FileState{Mode: "-rw-r--r--", Size: 2, SHA256: strings.Repeat("a", 64)},
					After:  &FileState{Mode: "-rw-r--r--", Size: 3, SHA256: strings.Repeat("b", 64)}},
				{Op: "move-in", Path: "write/x.md", Zone: "write", From: "notes/x.md", After: &FileState{Mode: "-rw-------", Size: 1}, Unpredicted: true, Refused: true},
			},
			ExitCode: &code, DurationMS: 30,
		},
		{Tool: "nope", Decision: "error", Error: "unknown tool"},
	}
	for i := range want {
		if err := w.Write(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Record{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close = %v, want ErrClosed", err)
	}
	got := readAll(t, path)
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		wr, gr := want[i], got[i]
		if wr.ID == "" || wr.Time.IsZero() || wr.Seq != int64(i+1) {
			t.Errorf("record %d: Write did not fill id, time or seq: %+v", i, wr)
		}
		if !gr.Time.Equal(wr.Time) {
			t.Errorf("record %d: time %v, want %v", i, gr.Time, wr.Time)
		}
		gr.Time, wr.Time = time.Time{}, time.Time{}
		// JSON numbers come back as float64; compare args through JSON.
		wa, _ := json.Marshal(wr.Args)
		ga, _ := json.Marshal(gr.Args)
		if wr.Args == nil {
			wa = []byte("{}")
		}
		if !bytes.Equal(wa, ga) {
			t.Errorf("record %d: args %s, want %s", i, ga, wa)
		}
		gr.Args, wr.Args = nil, nil
		if wr.Effects == nil {
			wr.Effects = []Effect{}
		}
		if !reflect.DeepEqual(gr, wr) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, gr, wr)
		}
	}

	// The line holds the contract's fields and nothing of slog's own.
	line := readLines(t, path)[1]
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"level", "msg"} {
		if _, ok := m[k]; ok {
			t.Errorf("line has slog's %q: %s", k, line)
		}
	}
	if !bytes.HasPrefix(line, []byte(`{"time":"2026-03-01T12:00:01+03:00","id":"id-2",`)) {
		t.Errorf("line does not start with time and id: %s", line)
	}
	if !bytes.Contains(line, []byte(`<b>&</b>`)) {
		t.Errorf("reason was HTML-escaped: %s", line)
	}
	for _, k := range []string{"outcome", "exit_code", "wall", "error"} {
		if _, ok := m[k]; ok {
			t.Errorf("a deny has an empty %q: %s", k, line)
		}
	}
	verifyOK(t, path, len(want))
}

func TestOpenPermissions(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 1)
	for name, want := range map[string]os.FileMode{filepath.Dir(path): 0o700 | os.ModeDir, path: 0o600, headPath(path): 0o600, lockPath(path): 0o600} {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != want {
			t.Errorf("%s: mode %v, want %v", name, st.Mode(), want)
		}
	}
}

func TestBody(t *testing.T) {
	b := Body("hello")
	want := map[string]any{"bytes": 5, "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("Body = %v, want %v", b, want)
	}
	if got := Body("")["bytes"]; got != 0 {
		t.Fatalf("Body(\"\") bytes = %v", got)
	}
	// Neither the body nor an edit string reaches the log.
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(&Record{Tool: "edit", Args: map[string]any{"path": "a.md", "old_string": Body("the old words"), "new_string": Body("the new words")}}); err != nil {
		t.Fatal(err)
	}
	if line := readLines(t, path)[0]; bytes.Contains(line, []byte("words")) {
		t.Fatalf("an edit string reached the log: %s", line)
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := NewID()
		if len(id) != 36 || id[14] != '7' || seen[id] {
			t.Fatalf("NewID = %q (repeated: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

func TestMask(t *testing.T) {
	secrets := []string{"ghp_TOKEN123", `pa"ss\word<&>`, "tool", "ключ"}
	path := testPath(t)
	w, err := Open(path, Options{Mask: secrets})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := &Record{
		Tool: "bash", Session: "s-ghp_TOKEN123",
		Args: map[string]any{
			"command":      "curl -H 'Authorization: ghp_TOKEN123' https://x",
			"nested":       map[string]any{"list": []any{"x ghp_TOKEN123 y", `pa"ss\word<&>`}},
			"ghp_TOKEN123": "as a key",
			"ru":           "мой ключ",
		},
		Effects:  []Effect{{Op: "exec", Path: "ghp_TOKEN123", Zone: "edit"}},
		Decision: "allow", Error: "failed with pa\"ss\\word<&>", Reason: "no tool",
	}
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	line := readLines(t, path)[0]
	if !json.Valid(line) {
		t.Fatalf("masked line is not JSON: %s", line)
	}
	for _, s := range []string{"ghp_TOKEN123", `pa\"ss\\word<&>`, "ключ"} {
		if bytes.Contains(line, []byte(s)) {
			t.Errorf("secret %q still in %s", s, line)
		}
	}
	var got Record
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	// A secret that happens to be a field name masks values, never the
	// record's own keys.
	if got.Tool != "bash" || got.Session != "s-[masked]" || got.Effects[0].Path != "[masked]" || got.Reason != "no [masked]" {
		t.Errorf("masked record = %+v", got)
	}
	if got.Args["[masked]"] != "as a key" || got.Args["ru"] != "мой [masked]" {
		t.Errorf("masked args = %v", got.Args)
	}
	verifyOK(t, path, 1)
}

func TestMaskEscapes(t *testing.T) {
	m := newMasker([]string{"n", "u00"})
	// "n" must not be masked inside the escape \n, nor "u00" inside \u0001.
	body := []byte(`{"a":"x\ny\u0001n"`)
	got := m.mask(body)
	if want := `{"a":"x\ny\u0001[masked]"`; string(got) != want {
		t.Fatalf("mask = %s, want %s", got, want)
	}
}

func TestWriteErrorFailsClosed(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(sample(0)); err != nil {
		t.Fatal(err)
	}
	w.f.Close() // the disk goes away under the writer
	if err := w.Write(sample(1)); err == nil {
		t.Fatal("Write to a closed file returned nil")
	}
	verifyOK(t, path, 1)
}

func TestFilter(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := &Record{
		Time: since.Add(time.Minute), Session: "s1", Tool: "move", Decision: "deny",
		Args:    map[string]any{"source": "notes/a.md", "destination": "мета/бобер/a.md", "content": "мета/inside-body"},
		Effects: []Effect{{Op: "move-out", Path: "notes/a.md"}, {Op: "move-in", Path: "мета/бобер/a.md"}},
	}
	hook := &Record{Tool: "Write", Args: map[string]any{"tool_input": map[string]any{"file_path": "/v/.obsidian/app.json"}}}
	for _, c := range []struct {
		f    Filter
		r    *Record
		want bool
	}{
		{Filter{}, r, true},
		{Filter{Session: "s1"}, r, true},
		{Filter{Session: "s2"}, r, false},
		{Filter{Tool: "move"}, r, true},
		{Filter{Tool: "mov"}, r, false},
		{Filter{Decision: "deny"}, r, true},
		{Filter{Decision: "allow"}, r, false},
		{Filter{Since: since}, r, true},
		{Filter{Since: since.Add(time.Minute)}, r, true},
		{Filter{Since: since.Add(time.Hour)}, r, false},
		{Filter{Path: "мета"}, r, true},
		{Filter{Path: "мета/бобер/"}, r, true},
		{Filter{Path: "./notes"}, r, true},
		{Filter{Path: "elsewhere"}, r, false},
		{Filter{Path: "inside-body"}, r, false}, // only path arguments count
		{Filter{Path: ".obsidian"}, hook, true},
		{Filter{Session: "s1", Tool: "move", Decision: "deny", Path: "notes", Since: since}, r, true},
		{Filter{Session: "s1", Tool: "move", Decision: "allow", Path: "notes", Since: since}, r, false},
	} {
		if got := c.f.Match(c.r); got != c.want {
			t.Errorf("%+v.Match(%s) = %v, want %v", c.f, c.r.Tool, got, c.want)
		}
	}
}

func TestStats(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 40)
	s, err := SummariseFile(path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// sample(i): tool by i%4 (read, write, delete, bash), decision by i%4
	// (allow, deny, allow, error), session by i%4.
	if s.Calls != 40 || s.Denies != 10 || s.Errors != 10 {
		t.Fatalf("stats = %+v", s.Count)
	}
	if !reflect.DeepEqual(s.ByDecision, map[string]int{"allow": 20, "deny": 10, "error": 10}) {
		t.Errorf("by decision = %v", s.ByDecision)
	}
	if !reflect.DeepEqual(s.ByRule, map[string]int{"zones": 10}) {
		t.Errorf("by rule = %v", s.ByRule)
	}
	if c := s.ByTool["write"]; c == nil || *c != (Count{Calls: 10, Denies: 10}) {
		t.Errorf("by tool write = %+v", c)
	}
	if c := s.BySession["s3"]; c == nil || *c != (Count{Calls: 10, Errors: 10}) {
		t.Errorf("by session s3 = %+v", c)
	}
	if c := s.ByAgent["claude"]; c == nil || c.Calls != 40 {
		t.Errorf("by agent = %+v", c)
	}
	if !s.First.Equal(sample(0).Time) || !s.Last.Equal(sample(39).Time) {
		t.Errorf("first %v last %v", s.First, s.Last)
	}

	s, err = SummariseFile(path, Filter{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Calls != 10 || s.Denies != 10 || s.ByRule["zones"] != 10 || len(s.ByTool) != 1 {
		t.Errorf("stats for s1 = %+v, %v", s.Count, s.ByTool)
	}

	var none Stats = Summarise(func(func(Record) bool) {})
	if b, _ := json.Marshal(none); bytes.Contains(b, []byte("null")) {
		t.Errorf("empty stats marshal with nulls: %s", b)
	}
	s = Summarise(func(yield func(Record) bool) { yield(Record{Decision: "deny"}) })
	if s.ByRule[NoRule] != 1 {
		t.Errorf("a deny without a rule: %v", s.ByRule)
	}
}

// TestEvent: a hook's after line says so right after via, and a hook's
// line gives Claude Code's tool_use_id; a line without them has no such
// keys, so lines written before them verify unchanged.
func TestEvent(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		{Via: "hook", Tool: "Write", Decision: "allow"},
		{Via: "hook", Event: EventAfter, ToolUseID: "toolu_01", Tool: "Write", Decision: "allow"},
	} {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], `"event"`) || strings.Contains(lines[0], `"tool_use_id"`) ||
		!strings.Contains(lines[1], `"via":"hook","event":"after","tool_use_id":"toolu_01","tool":"Write"`) {
		t.Fatalf("lines:\n%s", data)
	}
	var got []string
	if err := Read(path, func(r Record) error { got = append(got, r.Event, r.ToolUseID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"", "", EventAfter, "toolu_01"}) {
		t.Errorf("events read back: %q", got)
	}
	if r, err := Verify(path); err != nil || !r.OK {
		t.Errorf("verify: %+v %v", r, err)
	}
}

// TestVault: a line names its vault right after its id; a line without
// one has no such key, so lines written before vaults were named verify
// unchanged beside the new ones.
func TestVault(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		{ID: "old", Via: "stdio", Tool: "write", Decision: "allow"},
		{ID: "new", Vault: "0123456789abcdef", Via: "stdio", Tool: "write", Decision: "allow"},
	} {
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], `"vault"`) ||
		!strings.Contains(lines[1], `"id":"new","vault":"0123456789abcdef","session":""`) {
		t.Fatalf("lines:\n%s", data)
	}
	var got []string
	if err := Read(path, func(r Record) error { got = append(got, r.ID, r.Vault); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"old", "", "new", "0123456789abcdef"}) {
		t.Errorf("vaults read back: %q", got)
	}
	if r, err := Verify(path); err != nil || !r.OK {
		t.Errorf("verify: %+v %v", r, err)
	}
}
