package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/policy"
)

func TestListTools(t *testing.T) {
	e := newEnv(t)
	res, err := e.client.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ readOnly, destructive bool }{
		"read": {true, false}, "write": {false, true}, "edit": {false, true}, "move": {false, true},
		"delete": {false, true}, "list": {true, false}, "search": {true, false}, "bash": {false, true},
	}
	if len(res.Tools) != len(want) {
		t.Errorf("got %d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		a := tool.Annotations
		if a.ReadOnlyHint == nil || *a.ReadOnlyHint != w.readOnly || a.DestructiveHint == nil || *a.DestructiveHint != w.destructive {
			t.Errorf("%s annotations: %+v", tool.Name, a)
		}
		if a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s claims an open world", tool.Name)
		}
	}
}

func TestRead(t *testing.T) {
	e := newEnv(t)
	if got, want := e.mustOK("read", map[string]any{"path": "Welcome.md"}), e.file("Welcome.md"); got != want {
		t.Errorf("read returned %q, want the file exactly: %q", got, want)
	}
	got := e.mustOK("read", map[string]any{"path": "notes/projects/2026/plan.md", "offset": 3, "limit": 2})
	if got != "- todo: ship vaultgate\n- done: write the zone table\n" {
		t.Errorf("offset/limit: %q", got)
	}
	if big := e.mustOK("read", map[string]any{"path": "notes/big.md", "limit": 20000}); big != e.file("notes/big.md") {
		t.Errorf("the 1 MB note read with a limit past its end: %d bytes, want it whole (%d)", len(big), len(e.file("notes/big.md")))
	}
	e.mustOK("read", map[string]any{"path": e.cfg.Vault + "/мета/план.md"}) // absolute inside the vault
	e.mustFail("read", map[string]any{"path": "nope.md"}, "does not exist")
	e.mustFail("read", map[string]any{"path": "notes"}, "is a folder")
	e.mustFail("read", map[string]any{"path": "../vault.toml"}, "outside the vault")
	e.mustFail("read", map[string]any{"path": "notes/../../vault.toml"}, "outside the vault")
}

func TestWrite(t *testing.T) {
	e := newEnv(t)
	e.mustOK("write", map[string]any{"path": "notes/new/deep/n.md", "content": "hello\n"})
	if got := e.file("notes/new/deep/n.md"); got != "hello\n" {
		t.Errorf("new file: %q", got)
	}
	e.mustFail("write", map[string]any{"path": "notes/ideas.md", "content": "clobber"}, "Read it with the read tool first")
	if strings.Contains(e.file("notes/ideas.md"), "clobber") {
		t.Error("an unread file was overwritten")
	}
	e.mustOK("read", map[string]any{"path": "notes/ideas.md"})
	e.mustOK("write", map[string]any{"path": "notes/ideas.md", "content": "new ideas"})
	if got := e.file("notes/ideas.md"); got != "new ideas" {
		t.Errorf("overwrite: %q", got)
	}
	// its own write counts as seen: a second write needs no new read
	e.mustOK("write", map[string]any{"path": "notes/ideas.md", "content": "newer ideas"})
	e.mustFail("write", map[string]any{"path": "мета/new.md", "content": "x"}, `create "мета/new.md": zone protected`)
	e.mustFail("write", map[string]any{"path": ".obsidian/app.json", "content": "{}"}, "zone protected")
	e.mustOK("write", map[string]any{"path": "💬 чаты/2026-12-01.md", "content": "new chat"})
	e.mustOK("read", map[string]any{"path": "💬 чаты/2026-11-30.md"})
	e.mustFail("write", map[string]any{"path": "💬 чаты/2026-11-30.md", "content": "changed"}, "zone create (new files only)")
	e.mustOK("write", map[string]any{"path": "мета/бобер/new.md", "content": "x"})
	e.mustFail("write", map[string]any{"path": ".git/hooks/pre-commit", "content": "rm -rf ~"}, "zone protected")
	e.mustFail("write", map[string]any{"path": ".claude/settings.json", "content": "{}"}, "zone protected")
	e.mustFail("write", map[string]any{"path": ".mcp.json", "content": "{}"}, "zone protected")
	if e.exists(".git/hooks/pre-commit") || e.exists(".claude/settings.json") || e.exists(".mcp.json") {
		t.Error("a control path was written")
	}
}

func TestEdit(t *testing.T) {
	e := newEnv(t)
	p := "notes/projects/2026/plan.md"
	e.mustFail("edit", map[string]any{"path": p, "old_string": "ship", "new_string": "release"}, "Read it")
	e.mustOK("read", map[string]any{"path": p})
	e.mustOK("edit", map[string]any{"path": p, "old_string": "ship", "new_string": "release"})
	if !strings.Contains(e.file(p), "release vaultgate") {
		t.Errorf("edit not applied: %q", e.file(p))
	}
	e.mustFail("edit", map[string]any{"path": p, "old_string": "no such text", "new_string": "x"}, "does not occur")
	e.mustFail("edit", map[string]any{"path": p, "old_string": "- ", "new_string": "* "}, "occurs 2 times")
	e.mustOK("edit", map[string]any{"path": p, "old_string": "- ", "new_string": "* ", "replace_all": true})
	if strings.Contains(e.file(p), "- ") {
		t.Errorf("replace_all left some: %q", e.file(p))
	}
	e.mustOK("read", map[string]any{"path": "мета/план.md"})
	e.mustFail("edit", map[string]any{"path": "мета/план.md", "old_string": "План", "new_string": "x"}, "zone protected")
	e.mustFail("edit", map[string]any{"path": p, "old_string": "", "new_string": "x"}, "must not be empty")
}

func TestMove(t *testing.T) {
	e := newEnv(t)
	e.mustOK("move", map[string]any{"source": "notes/ideas.md", "destination": "notes/archive/ideas.md"})
	if e.exists("notes/ideas.md") || !e.exists("notes/archive/ideas.md") {
		t.Error("move did not move")
	}
	// laundering: edit → write
	e.mustFail("move", map[string]any{"source": "Welcome.md", "destination": "мета/бобер/Welcome.md"}, "from zone edit to zone write")
	// write → edit is fine
	e.mustOK("move", map[string]any{"source": "мета/бобер/x.md", "destination": "notes/x.md"})
	e.mustFail("move", map[string]any{"source": "мета/план.md", "destination": "notes/план.md"}, "zone protected")
	e.mustFail("move", map[string]any{"source": "💬 чаты/2026-11-30.md", "destination": "notes/c.md"}, "zone create")
	e.mustFail("move", map[string]any{"source": "notes/x.md", "destination": "notes/projects"}, "never merges or replaces folders")
	e.mustFail("move", map[string]any{"source": "notes/x.md", "destination": "Welcome.md"}, "set overwrite")
	e.mustOK("move", map[string]any{"source": "notes/x.md", "destination": "Welcome.md", "overwrite": true})
	if got := e.file("Welcome.md"); got != "scratch file the agent may delete\n" {
		t.Errorf("overwrite move: %q", got)
	}
	e.mustFail("move", map[string]any{"source": "мета/бобер", "destination": "notes/бобер"}, "root of a zone")
	e.mustFail("move", map[string]any{"source": "notes", "destination": "notes/sub/notes"}, "into itself")
	e.mustOK("move", map[string]any{"source": "notes/projects", "destination": "notes/old-projects"})
	if !e.exists("notes/old-projects/2026/plan.md") {
		t.Error("folder move lost its content")
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	e.mustFail("delete", map[string]any{"path": "мета/x.md"}, "Deleting is allowed in: мета/бобер")
	if !e.exists("мета/x.md") {
		t.Fatal("a protected file was deleted")
	}
	e.mustFail("delete", map[string]any{"path": "notes/ideas.md"}, "zone edit (create, change and move, but never delete)")
	e.mustOK("delete", map[string]any{"path": "мета/бобер/x.md"})
	if e.exists("мета/бобер/x.md") {
		t.Error("file in a write zone not deleted")
	}
	e.mustOK("write", map[string]any{"path": "мета/бобер/sub/a.md", "content": "a"})
	e.mustFail("delete", map[string]any{"path": "мета/бобер/sub"}, "not empty")
	e.mustOK("delete", map[string]any{"path": "мета/бобер/sub", "recursive": true})
	e.mustFail("delete", map[string]any{"path": "мета/бобер", "recursive": true}, "root of a zone")
	e.mustFail("delete", map[string]any{"path": ".", "recursive": true}, "zone edit")
	e.mustFail("delete", map[string]any{"path": "мета/бобер/none.md"}, "does not exist")
}

func TestListAndSearchHideHidden(t *testing.T) {
	cfg := loadConfig(t, `vault = "../testdata/vault"
[zones]
edit = ["."]
protected = ["мета"]
hidden = ["notes/projects"]
`)
	e := newEnvWith(t, cfg)
	list := e.mustOK("list", map[string]any{"depth": 3})
	for _, want := range []string{"notes/  [edit]", "мета/  [protected]", "notes/ideas.md", "💬 чаты/2026-11-30.md"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "projects") {
		t.Errorf("list shows a hidden path:\n%s", list)
	}
	found := e.mustOK("search", map[string]any{"query": "todo:"})
	if !strings.Contains(found, "Welcome.md:6: - [ ] todo: read the README") || !strings.Contains(found, "мета/план.md:5:") {
		t.Errorf("search:\n%s", found)
	}
	if strings.Contains(found, "projects") {
		t.Errorf("search shows a hidden file:\n%s", found)
	}
	e.mustFail("read", map[string]any{"path": "notes/projects/2026/plan.md"}, "zone hidden")
	e.mustFail("list", map[string]any{"path": "notes/projects"}, "zone hidden")
	e.mustFail("search", map[string]any{"query": "todo", "path": "notes/projects"}, "zone hidden")
	got := e.mustOK("search", map[string]any{"query": "^- (todo|done)", "regex": true, "glob": "*.md", "max_results": 1})
	if strings.Count(got, "\n") != 2 || !strings.Contains(got, "stopped at 1") {
		t.Errorf("max_results 1: %q", got)
	}
	e.mustFail("search", map[string]any{"query": "(", "regex": true}, "not a valid regular expression")
}

func TestMalformedCalls(t *testing.T) {
	e := newEnv(t)
	e.mustFail("read", map[string]any{}, `"path" is required`)
	e.mustFail("read", map[string]any{"path": 7}, "must be a string")
	e.mustFail("read", map[string]any{"path": "a", "offset": 1.5}, "whole number")
	e.mustFail("read", map[string]any{"path": "a\x00b"}, "NUL")
	e.mustFail("read", map[string]any{"path": ""}, "empty path")
	e.mustFail("delete", map[string]any{"path": "x", "force": true}, "is not an argument")
	r := e.lastRecord()
	if r["decision"] != "error" || r["tool"] != "delete" {
		t.Errorf("malformed call audited as %v", r)
	}
}

func TestAuditLines(t *testing.T) {
	e := newEnv(t)
	secret := "TOP-SECRET-BODY-4711"
	e.mustOK("write", map[string]any{"path": "notes/s.md", "content": secret})
	e.mustFail("delete", map[string]any{"path": "мета/x.md"}, "protected")
	e.mustFail("read", map[string]any{}, "required")
	e.mustOK("read", map[string]any{"path": "notes/s.md"})
	e.mustOK("edit", map[string]any{"path": "notes/s.md", "old_string": secret, "new_string": "OTHER-SECRET-0815"})
	e.mustFail("read", map[string]any{"path": "missing.md"}, "does not exist")
	recs := e.records()
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	check := func(i int, decision, outcome string) {
		t.Helper()
		r := recs[i]
		if r["decision"] != decision || (outcome != "" && r["outcome"] != outcome) {
			t.Errorf("record %d: decision %v outcome %v, want %s %s", i, r["decision"], r["outcome"], decision, outcome)
		}
		for _, k := range []string{"time", "id", "session", "agent", "via", "tool", "args", "effects", "decision", "duration_ms", "prev"} {
			if _, ok := r[k]; !ok {
				t.Errorf("record %d lacks %q", i, k)
			}
		}
	}
	check(0, "allow", "ok")
	check(1, "deny", "")
	check(2, "error", "")
	check(4, "allow", "ok")
	check(5, "allow", "failed")
	if recs[1]["rule"] != "zones" || !strings.Contains(fmt.Sprint(recs[1]["reason"]), "protected") {
		t.Errorf("deny record: %v", recs[1])
	}
	eff := recs[1]["effects"].([]any)[0].(map[string]any)
	if eff["op"] != "delete" || eff["path"] != "мета/x.md" || eff["zone"] != "protected" {
		t.Errorf("effect: %v", eff)
	}
	body := recs[0]["args"].(map[string]any)["content"].(map[string]any)
	if body["bytes"] != float64(len(secret)) || len(body["sha256"].(string)) != 64 {
		t.Errorf("content stand-in: %v", body)
	}
	raw, _ := json.Marshal(recs)
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), "OTHER-SECRET") {
		t.Error("a file body reached the audit log")
	}
	if recs[0]["session"] != "test-session" || recs[0]["via"] != "stdio" || recs[0]["agent"] != "default" {
		t.Errorf("caller fields: %v", recs[0])
	}
	if recs[1]["prev"] == "" || recs[1]["prev"] == recs[2]["prev"] {
		t.Errorf("prev chain: %v, %v", recs[1]["prev"], recs[2]["prev"])
	}
}

func TestPanickingRuleIsAuditedDeny(t *testing.T) {
	boom := policy.Rule{Name: "my_rule", Check: func(c *policy.ToolCall) *policy.Deny {
		if c.Tool == "delete" {
			panic("nil map")
		}
		return nil
	}}
	e := newEnv(t, boom)
	e.mustFail("delete", map[string]any{"path": "мета/бобер/x.md"}, "my_rule")
	if !e.exists("мета/бобер/x.md") {
		t.Error("a call whose rule panicked ran")
	}
	if r := e.lastRecord(); r["decision"] != "deny" || r["rule"] != "my_rule" {
		t.Errorf("record: %v", r)
	}
	e.mustOK("read", map[string]any{"path": "Welcome.md"})
}

func TestCustomRule(t *testing.T) {
	noTodo := policy.Rule{Name: "no_todo_files", Check: func(c *policy.ToolCall) *policy.Deny {
		for _, e := range c.Effects {
			if strings.Contains(e.Path.String(), "todo") {
				return &policy.Deny{Effect: &e, Reason: "no files named todo"}
			}
		}
		return nil
	}}
	e := newEnv(t, noTodo)
	e.mustFail("write", map[string]any{"path": "notes/todo.md", "content": "x"}, "no files named todo")
	e.mustOK("write", map[string]any{"path": "notes/done.md", "content": "x"})
}

func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.mustOK("write", map[string]any{"path": fmt.Sprintf("notes/c%d.md", i), "content": "x"})
			e.mustOK("read", map[string]any{"path": fmt.Sprintf("notes/c%d.md", i)})
			e.mustOK("search", map[string]any{"query": "todo"})
		}()
	}
	wg.Wait()
	if n := len(e.records()); n != 48 {
		t.Errorf("%d records, want 48", n)
	}
}

func TestUnknownToolIsAudited(t *testing.T) {
	e := newEnv(t)
	req := mcp.CallToolRequest{}
	req.Params.Name = "format_disk"
	req.Params.Arguments = map[string]any{"path": "/"}
	if _, err := e.client.CallTool(context.Background(), req); err == nil {
		t.Error("an unknown tool answered")
	}
	r := e.lastRecord()
	if r["tool"] != "format_disk" || r["decision"] != "error" || !strings.Contains(fmt.Sprint(r["error"]), "unknown tool") {
		t.Errorf("record: %v", r)
	}
}

// A read without limit returns at most 2,000 lines or 40 KB, cut at a
// line's end, and a note saying where to read on; reading on as the note
// says gives back the whole file, byte for byte.
func TestReadBounded(t *testing.T) {
	e := newEnv(t)
	var short, long strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&short, "%d\n", i)
	}
	long.WriteString("head\n")
	long.WriteString(strings.Repeat("жж", 60<<10)) // one 240 KB line of 2-byte letters
	long.WriteString("\ntail\n")
	for name, body := range map[string]string{"notes/short-lines.md": short.String(), "notes/one-long-line.md": long.String()} {
		if err := afero.WriteFile(e.fs, name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	next := regexp.MustCompile(`"offset": (\d+), "limit": 2000\}`)
	for _, c := range []struct {
		path      string
		firstLast int // the last line of the first part
	}{
		{"notes/big.md", 0}, // the byte bound comes first: about 1,200 lines
		{"notes/short-lines.md", 2000},
		{"notes/one-long-line.md", 1},
	} {
		whole := e.file(c.path)
		var got strings.Builder
		offset, parts := 0, 0
		for {
			args := map[string]any{"path": c.path}
			if offset > 0 {
				args["offset"] = offset
			}
			text := e.mustOK("read", args)
			parts++
			body, note, cut := strings.Cut(text, "\n[vaultgate: shown lines ")
			if !cut {
				got.WriteString(text)
				break
			}
			if len(body) > 40<<10+1 || strings.Count(body, "\n") > 2000 {
				t.Fatalf("%s: a part of %d bytes, %d lines", c.path, len(body), strings.Count(body, "\n"))
			}
			m := next.FindStringSubmatch(note)
			if m == nil {
				t.Fatalf("%s: the note says nothing of where to read on: %q", c.path, note)
			}
			n, _ := strconv.Atoi(m[1])
			if parts == 1 && c.firstLast > 0 && n != c.firstLast+1 {
				t.Errorf("%s: the first part ends before line %d, want %d", c.path, n, c.firstLast+1)
			}
			if n <= offset {
				t.Fatalf("%s: reading on from %d goes back to %d", c.path, offset, n)
			}
			// a part ends at a line's end; a cut line is its head
			if strings.Contains(note, "was cut") {
				body = strings.TrimSuffix(body, "\n") // the newline the note put after the cut
				line := strings.Split(whole, "\n")[n-2]
				if !strings.HasPrefix(line, body[strings.LastIndex(body, "\n")+1:]) {
					t.Fatalf("%s: the cut line is not the line's head", c.path)
				}
				got.WriteString(body[:strings.LastIndex(body, "\n")+1])
				got.WriteString(line + "\n")
			} else {
				got.WriteString(body)
			}
			offset = n
		}
		if got.String() != whole {
			t.Errorf("%s: read on part by part gives %d bytes, want the file's %d exactly", c.path, got.Len(), len(whole))
		}
		if parts < 2 {
			t.Errorf("%s: read whole in one part", c.path)
		}
	}
	// a short file is still read exactly, with no note
	if got := e.mustOK("read", map[string]any{"path": "Welcome.md"}); got != e.file("Welcome.md") {
		t.Errorf("a short note: %q", got)
	}
}
