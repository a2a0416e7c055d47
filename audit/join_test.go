package audit

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Lines as the hook, exec and the servers write them, for the join tests.
func hookBash(id, session, use, decision string) Record {
	return Record{ID: id, Session: session, Agent: "claude", Via: "hook", ToolUseID: use, Tool: "Bash",
		Args: map[string]any{"command": "make"}, Effects: []Effect{{Op: "exec", Path: "make"}}, Decision: Decision(decision)}
}

func execLine(id, session, continues string, exit int) Record {
	outcome := "ok"
	if exit != 0 {
		outcome = "failed"
	}
	return Record{ID: id, Session: session, Agent: "claude", Via: "exec", Continues: continues, Tool: "bash",
		Args: map[string]any{"command": "make"}, Decision: "allow", Outcome: Outcome(outcome), ExitCode: &exit,
		Real: []RealEffect{{Op: "create", Path: "notes/" + id + ".md", Zone: "edit"}}, Wall: []string{"landlock"}}
}

func afterLine(id, session, use, tool, outcome string) Record {
	return Record{ID: id, Session: session, Agent: "claude", Via: "hook", Event: EventAfter, ToolUseID: use, Tool: tool,
		Decision: "allow", Outcome: Outcome(outcome)}
}

// shape names a call by the ids of its lines: "h1+e1+a1".
func shape(c *Call) string {
	s := c.ID
	if c.Exec != nil {
		s += "+" + c.Exec.ID
	}
	if c.After != nil {
		s += "+" + c.After.ID
	}
	return s
}

func joined(recs []Record) []string {
	var out []string
	for c := range Join(slices.Values(recs)) {
		out = append(out, shape(c))
	}
	return out
}

func TestJoin(t *testing.T) {
	write := Record{ID: "w1", Session: "a", Via: "hook", ToolUseID: "tw", Tool: "Write", Decision: "allow", Outcome: "ok"}
	mcp := Record{ID: "m1", Session: "a", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok"}
	for _, c := range []struct {
		name  string
		lines []Record
		want  []string
	}{
		{"a Bash: judgement, run, after", []Record{
			hookBash("h1", "a", "t1", "allow"), execLine("e1", "a", "h1", 0), afterLine("a1", "a", "t1", "Bash", "ok"),
		}, []string{"h1+e1+a1"}},
		{"exec without its hook line: rotated away", []Record{
			execLine("e1", "a", "gone", 0), mcp,
		}, []string{"e1", "m1"}},
		{"exec run by hand: continues nothing", []Record{
			execLine("e1", "", "", 0),
		}, []string{"e1"}},
		{"a hook line without exec: allowed, never ran", []Record{
			hookBash("h1", "a", "t1", "allow"), mcp,
		}, []string{"h1", "m1"}},
		{"a denied Bash: nothing continues a deny", []Record{
			hookBash("h1", "a", "t1", "deny"), execLine("e1", "a", "h1", 0), afterLine("a1", "a", "t1", "Bash", "ok"),
		}, []string{"h1", "e1", "a1"}},
		{"interleaved sessions", []Record{
			hookBash("h1", "a", "t1", "allow"), hookBash("h2", "b", "t2", "allow"), mcp,
			execLine("e2", "b", "h2", 0), execLine("e1", "a", "h1", 1),
			afterLine("a2", "b", "t2", "Bash", "ok"), afterLine("a1", "a", "t1", "Bash", "ok"),
		}, []string{"h1+e1+a1", "h2+e2+a2", "m1"}},
		{"another tool the hook let through, and its after line", []Record{
			write, mcp, afterLine("aw", "a", "tw", "Write", "ok"),
		}, []string{"w1+aw", "m1"}},
		{"an after line of another session stands alone", []Record{
			write, afterLine("aw", "b", "tw", "Write", "ok"),
		}, []string{"w1", "aw"}},
		{"each part joins once: a second exec stands alone", []Record{
			hookBash("h1", "a", "t1", "allow"), execLine("e1", "a", "h1", 0), execLine("e2", "a", "h1", 0),
		}, []string{"h1+e1", "e2"}},
		{"a background command: after before exec", []Record{
			hookBash("h1", "a", "t1", "allow"), afterLine("a1", "a", "t1", "Bash", "ok"), mcp, execLine("e1", "a", "h1", 0),
		}, []string{"h1+e1+a1", "m1"}},
		{"an after line is not an exec's call", []Record{
			afterLine("a1", "a", "t1", "Bash", "ok"), execLine("e1", "a", "a1", 0),
		}, []string{"a1", "e1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := joined(c.lines); !reflect.DeepEqual(got, c.want) {
				t.Errorf("calls %q, want %q", got, c.want)
			}
			// Every line is in exactly one call.
			n := 0
			for call := range Join(slices.Values(c.lines)) {
				n += len(call.Lines())
			}
			if n != len(c.lines) {
				t.Errorf("%d lines in the calls, %d read", n, len(c.lines))
			}
		})
	}
}

// TestJoinWindow: an exec line JoinWindow lines after its hook line still
// joins it; one line later it stands alone.
func TestJoinWindow(t *testing.T) {
	for _, gap := range []int{JoinWindow - 1, JoinWindow} {
		recs := []Record{hookBash("h1", "a", "t1", "allow")}
		for i := range gap {
			recs = append(recs, Record{ID: fmt.Sprint("m", i), Via: "stdio", Tool: "read", Decision: "allow"})
		}
		recs = append(recs, execLine("e1", "a", "h1", 0))
		got := joined(recs)
		first, last := got[0], got[len(got)-1]
		if gap < JoinWindow && (first != "h1+e1" || len(got) != gap+1) {
			t.Errorf("gap %d: first call %q, %d calls", gap, first, len(got))
		}
		if gap == JoinWindow && (first != "h1" || last != "e1") {
			t.Errorf("gap %d: first call %q, last %q", gap, first, last)
		}
	}
}

// TestJoinOrderAndFollowOn: Calls yields in the order of the calls' lines
// even when a later call is whole first, and a call still open at the end
// of what was read is joined by a line added after.
func TestJoinOrderAndFollowOn(t *testing.T) {
	var j Joiner
	recs := []Record{
		hookBash("h1", "a", "t1", "allow"),
		{ID: "m1", Via: "stdio", Tool: "read", Decision: "allow"},
		execLine("e1", "a", "h1", 0),
		hookBash("h2", "a", "t2", "allow"),
	}
	var got []string
	var open []*Call
	for c := range j.Calls(slices.Values(recs)) {
		got = append(got, shape(c))
		if c.Open() {
			open = append(open, c)
		}
	}
	// h1 waits for its after line too, so it comes out only at the end,
	// still before m1.
	if !reflect.DeepEqual(got, []string{"h1+e1", "m1", "h2"}) || len(open) != 2 {
		t.Fatalf("calls %q, %d open", got, len(open))
	}
	c, part := j.Add(execLine("e2", "a", "h2", 2))
	if part != PartExec || c != open[1] || shape(c) != "h2+e2" || !c.Failed() || c.FailedWhy() != "exit code 2" {
		t.Errorf("the exec after the read: %v %q failed %v %q", part, shape(c), c.Failed(), c.FailedWhy())
	}
	c, part = j.Add(afterLine("a1", "a", "t1", "Bash", "ok"))
	if part != PartAfter || c != open[0] || c.Open() {
		t.Errorf("the after line: %v %q open %v", part, shape(c), c.Open())
	}
	if c, part := j.Add(hookBash("h3", "a", "t3", "allow")); part != PartCall || !c.Open() || part.String() != "call" {
		t.Errorf("a new hook line: %v open %v", part, c.Open())
	}
}

// TestCallMeaning: the call's decision is its judgement's, its outcome
// the run's, its real changes exec's.
func TestCallMeaning(t *testing.T) {
	refused := execLine("e1", "a", "h1", 0)
	refused.Decision, refused.Rule, refused.Reason, refused.Outcome, refused.ExitCode = "deny", "zones", "protected", "", nil
	badAfter := afterLine("a1", "a", "t1", "Bash", "failed")
	badAfter.Error = "not read"
	for _, c := range []struct {
		name      string
		lines     []Record
		failed    string // FailedWhy
		real      string // the first real effect's path
		decision  string
		nLines    int
		ranViaExe bool
	}{
		{"ran and exited 0", []Record{hookBash("h1", "a", "t1", "allow"), execLine("e1", "a", "h1", 0)}, "", "notes/e1.md", "allow", 2, true},
		{"ran and exited 1", []Record{hookBash("h1", "a", "t1", "allow"), execLine("e1", "a", "h1", 1)}, "exit code 1", "notes/e1.md", "allow", 2, true},
		{"refused as it ran", []Record{hookBash("h1", "a", "t1", "allow"), refused}, "refused as it ran: [zones] protected", "notes/e1.md", "allow", 2, true},
		{"the after line says it failed", []Record{hookBash("h1", "a", "t1", "allow"), badAfter}, "not read", "", "allow", 2, false},
		{"denied: the run's lines do not make it fail", []Record{hookBash("h1", "a", "t1", "deny")}, "", "", "deny", 1, false},
	} {
		calls := slices.Collect(Join(slices.Values(c.lines)))
		if len(calls) != 1 {
			t.Fatalf("%s: %d calls", c.name, len(calls))
		}
		call := calls[0]
		real := ""
		if r := call.RealEffects(); len(r) > 0 {
			real = r[0].Path
		}
		if call.FailedWhy() != c.failed || call.Failed() != (c.failed != "") || real != c.real || call.Decision != Decision(c.decision) ||
			len(call.Lines()) != c.nLines || (call.Ran() == call.Exec) != c.ranViaExe {
			t.Errorf("%s: failed %v %q, real %q, decision %s, %d lines", c.name, call.Failed(), call.FailedWhy(), real, call.Decision, len(call.Lines()))
		}
	}
}

// TestJoinAcrossRotation writes a log that rotates between a hook line
// and its exec line: read whole, the two are one call; with the older
// file gone, exec's line stands alone.
func TestJoinAcrossRotation(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{MaxSize: 600})
	if err != nil {
		t.Fatal(err)
	}
	h := hookBash("h1", "a", "t1", "allow")
	write := func(r Record) {
		t.Helper()
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	write(h)
	for i := 0; ; i++ {
		rotated, _, err := rotated(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(rotated) > 0 {
			break
		}
		write(Record{ID: fmt.Sprint("m", i), Session: "b", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok"})
	}
	write(execLine("e1", "a", "h1", 0))
	write(afterLine("a1", "a", "t1", "Bash", "ok"))
	w.Close()
	var got []string
	if err := ReadCalls(path, func(c *Call) error { got = append(got, shape(c)); return nil }); err != nil {
		t.Fatal(err)
	}
	if got[0] != "h1+e1+a1" || slices.Contains(got, "e1") {
		t.Errorf("across a rotation: %q", got)
	}
	s, err := SummariseFile(path, Filter{Session: "a"})
	if err != nil || s.Calls != 1 || s.ByTool["Bash"].Calls != 1 || s.ByTool["bash"] != nil {
		t.Errorf("stats of session a: %+v %v %v", s.Count, s.ByTool, err)
	}
	if err := os.Remove(path + ".1"); err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := ReadCalls(path, func(c *Call) error { got = append(got, shape(c)); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "e1") || !slices.Contains(got, "a1") || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "h1") }) {
		t.Errorf("with the hook's file gone: %q", got)
	}
}

// TestStatsCountCalls: a Bash through the hook is one call, whose decision
// is the hook's and whose failure is exec's; filters apply to calls.
func TestStatsCountCalls(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		hookBash("h1", "a", "t1", "allow"), execLine("e1", "a", "h1", 2), afterLine("a1", "a", "t1", "Bash", "ok"),
		hookBash("h2", "a", "t2", "deny"),
		execLine("e9", "a", "", 0), // by hand
		{ID: "w1", Session: "b", Via: "hook", ToolUseID: "tw", Tool: "Write", Decision: "allow", Outcome: "ok"},
		afterLine("aw", "b", "tw", "Write", "ok"),
	}
	for i := range recs {
		recs[i].Time = t0.Add(time.Duration(i) * time.Second)
	}
	s := Summarise(slices.Values(recs))
	if s.Calls != 4 || s.Denies != 1 || s.Failed != 1 || s.ByTool["Bash"].Calls != 2 || s.ByTool["bash"].Calls != 1 ||
		s.ByTool["Bash"].Failed != 1 || s.BySession["b"].Calls != 1 || !s.Last.Equal(t0.Add(5*time.Second)) {
		t.Errorf("stats: %+v by tool %+v %+v", s.Count, *s.ByTool["Bash"], s.ByTool["bash"])
	}
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	for _, c := range []struct {
		f    Filter
		want int
	}{
		{Filter{}, 4},
		{Filter{Decision: "failed"}, 1},         // the hook's allow, exec's exit 2
		{Filter{Path: "notes/e1.md"}, 1},        // exec's real change, found from the hook's call
		{Filter{Tool: "bash"}, 3},               // the hook's Bash and the exec by hand
		{Filter{Since: t0.Add(time.Second)}, 3}, // the call's time is its own line's
	} {
		s, err := SummariseFile(path, c.f)
		if err != nil || s.Calls != c.want {
			t.Errorf("%+v: %d calls, want %d (%v)", c.f, s.Calls, c.want, err)
		}
	}
}

// TestContinues: exec's line names the hook line it continues right after
// tool_use_id; a line without it has no such key, so lines written before
// it verify unchanged.
func TestContinues(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		hookBash("h1", "a", "toolu_01", "allow"),
		execLine("e1", "a", "h1", 0),
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
	if len(lines) != 2 || strings.Contains(lines[0], `"continues"`) || !strings.Contains(lines[1], `"via":"exec","continues":"h1","tool":"bash"`) {
		t.Fatalf("lines:\n%s", data)
	}
	var got []string
	if err := Read(path, func(r Record) error { got = append(got, r.Continues); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"", "h1"}) {
		t.Errorf("continues read back: %q", got)
	}
	verifyOK(t, path, 2)
}
