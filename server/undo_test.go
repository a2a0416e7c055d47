package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
)

// historyGate opens a gate as the server does (OpenServer: no-follow file
// system, audit log, history, start-up) over a small vault of its own in a
// write zone. The tests undo as the person does, through a gate of their
// own beside it (undo).
func historyGate(t testing.TB) (g *Gate, vault, state string) {
	t.Helper()
	dir := t.TempDir()
	vault, state = filepath.Join(dir, "vault"), filepath.Join(dir, "state")
	files := map[string]string{
		"a.md":            "alpha\nbeta\ngamma\n",
		"b.md":            "bee\n",
		"tree/x.md":       "x one\n",
		"tree/sub/y.bin":  "\x00\x01\x02 binary",
		"tree/sub/z.md":   "zed\n",
		"other/keep.md":   "kept\n",
		"empty/.gitkeep":  "",
		"деревня/дом.md":  "изба\n",
		"tree/sub/mode.x": "#!/bin/sh\n",
	}
	for p, body := range files {
		full := filepath.Join(vault, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(filepath.Join(vault, "tree/sub/mode.x"), 0o755)
	os.Symlink("x.md", filepath.Join(vault, "tree/link"))
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+filepath.Join(state, "audit.jsonl")+`"
[rules]
read_before_write = false
[zones]
write = ["."]
`)
	return serverGate(t, cfg), vault, state
}

// tree is a vault's content: each path with its kind, mode and body.
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = fmt.Sprintf("dir %o", fi.Mode().Perm())
		default:
			body, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("file %o %q", fi.Mode().Perm(), body)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %s is %q, want %q", what, p, got[p], w)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s (%s) should not be there", what, p, g)
		}
	}
}

type toolCall struct {
	tool string
	args map[string]any
}

func call(t testing.TB, g *Gate, session string, c toolCall) *Outcome {
	t.Helper()
	s := &policy.Session{ID: session, Agent: "tester", State: policy.NewState()}
	o := g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}, c.tool, c.args, Serve)
	if o.Decision != Allow || o.Err != nil {
		t.Fatalf("%s %v: %s %s", c.tool, c.args, o.Decision, o.Text())
	}
	return o
}

// TestUndoEachTool changes the vault with each file tool, then undoes the
// call by its id: the vault is as it was, byte for byte, mode for mode.
func TestUndoEachTool(t *testing.T) {
	cases := []struct {
		name string
		call toolCall
	}{
		{"write a new file", toolCall{"write", map[string]any{"path": "new.md", "content": "fresh\n"}}},
		{"write a new file in new folders", toolCall{"write", map[string]any{"path": "a/b/c.md", "content": "deep\n"}}},
		{"write over a file", toolCall{"write", map[string]any{"path": "a.md", "content": "replaced\n"}}},
		{"write over a script keeps its mode back", toolCall{"write", map[string]any{"path": "tree/sub/mode.x", "content": "echo\n"}}},
		{"edit", toolCall{"edit", map[string]any{"path": "a.md", "old_string": "beta", "new_string": "BETA"}}},
		{"edit a Cyrillic path", toolCall{"edit", map[string]any{"path": "деревня/дом.md", "old_string": "изба", "new_string": "терем"}}},
		{"move a file", toolCall{"move", map[string]any{"source": "b.md", "destination": "moved/b.md"}}},
		{"move over a file", toolCall{"move", map[string]any{"source": "b.md", "destination": "a.md", "overwrite": true}}},
		{"move a folder", toolCall{"move", map[string]any{"source": "tree", "destination": "forest"}}},
		{"delete a file", toolCall{"delete", map[string]any{"path": "a.md"}}},
		{"delete a link", toolCall{"delete", map[string]any{"path": "tree/link"}}},
		{"delete an empty-ish folder's file", toolCall{"delete", map[string]any{"path": "empty/.gitkeep"}}},
		{"delete a tree", toolCall{"delete", map[string]any{"path": "tree", "recursive": true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, vault, _ := historyGate(t)
			before := tree(t, vault)
			o := call(t, g, "s1", c.call)
			changed := tree(t, vault)
			if fmt.Sprint(changed) == fmt.Sprint(before) {
				t.Fatal("the call changed nothing")
			}
			u, err := undo(t, g, UndoRequest{IDs: []string{o.ID}})
			if err != nil {
				t.Fatal(err)
			}
			if len(u.Conflicts) > 0 || len(u.Restored) == 0 {
				t.Errorf("undo: %+v", u)
			}
			after := tree(t, vault)
			sameTree(t, "after undo", after, before)
			// the undo is undoable: undoing it puts the change back
			if _, err := undo(t, g, UndoRequest{IDs: []string{u.ID}}); err != nil {
				t.Fatal(err)
			}
			sameTree(t, "after undoing the undo", tree(t, vault), changed)
		})
	}
}

// TestUndoSession makes 100 mixed changes in one session among another
// session's, and undoes the first session whole: its paths are as they
// were, the other's changes stay.
func TestUndoSession(t *testing.T) {
	g, vault, _ := historyGate(t)
	before := tree(t, vault)
	for i := range 100 {
		n := fmt.Sprintf("s1/n%d.md", i%10)
		var c toolCall
		switch i % 5 {
		case 0, 1:
			c = toolCall{"write", map[string]any{"path": n, "content": fmt.Sprintf("v%d\nline\n", i)}}
		case 2:
			c = toolCall{"edit", map[string]any{"path": n, "old_string": "line", "new_string": fmt.Sprintf("line %d", i)}}
			if _, err := os.Stat(filepath.Join(vault, n)); err != nil {
				c = toolCall{"write", map[string]any{"path": n, "content": "line\n"}}
			}
		case 3:
			c = toolCall{"move", map[string]any{"source": n, "destination": n + ".moved", "overwrite": true}}
			if _, err := os.Stat(filepath.Join(vault, n)); err != nil {
				c = toolCall{"write", map[string]any{"path": n, "content": "again\n"}}
			}
		case 4:
			c = toolCall{"delete", map[string]any{"path": n + ".moved"}}
			if _, err := os.Stat(filepath.Join(vault, n+".moved")); err != nil {
				c = toolCall{"edit", map[string]any{"path": "a.md", "old_string": "alpha", "new_string": fmt.Sprintf("alpha%d", i)}}
			}
		}
		call(t, g, "s1", c)
		if i%10 == 0 {
			call(t, g, "s2", toolCall{"write", map[string]any{"path": fmt.Sprintf("other/s2-%d.md", i), "content": "s2\n"}})
		}
	}
	if i := i100(t, g); i < 100 {
		t.Fatalf("the history holds %d calls of s1", i)
	}
	u, err := undo(t, g, UndoRequest{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Conflicts) > 0 {
		t.Errorf("conflicts: %v", u.Conflicts)
	}
	want := maps(before)
	for i := 0; i < 100; i += 10 {
		want[filepath.Join("other", fmt.Sprintf("s2-%d.md", i))] = fmt.Sprintf("file 644 %q", "s2\n")
	}
	got := tree(t, vault)
	sameTree(t, "after undoing s1", got, want)
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// i100 counts the calls of session s1 the history holds.
func i100(t *testing.T, g *Gate) int {
	all, err := g.keep.(*history.Store).All()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, e := range all {
		if e.Session == "s1" {
			ids[e.ID] = true
		}
	}
	return len(ids)
}

// TestUndoConflict: a path changed since the call is left alone and named,
// and the audit line says so; --force puts it back.
func TestUndoConflict(t *testing.T) {
	g, vault, state := historyGate(t)
	o := call(t, g, "s1", toolCall{"write", map[string]any{"path": "a.md", "content": "agent\n"}})
	o2 := call(t, g, "s1", toolCall{"write", map[string]any{"path": "b.md", "content": "agent b\n"}})
	if err := os.WriteFile(filepath.Join(vault, "a.md"), []byte("person\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := undo(t, g, UndoRequest{IDs: []string{o.ID, o2.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Conflicts) != 1 || u.Conflicts[0].Path != "a.md" || u.Conflicts[0].ID != o.ID {
		t.Errorf("conflicts %+v, want a.md of %s", u.Conflicts, o.ID)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "a.md")); string(body) != "person\n" {
		t.Errorf("a.md was touched: %q", body)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "b.md")); string(body) != "bee\n" {
		t.Errorf("b.md was not put back: %q", body)
	}
	var last audit.Record
	audit.Read(filepath.Join(state, "audit.jsonl"), func(r audit.Record) error { last = r; return nil })
	if last.Via != ViaCLI || last.Tool != "undo" || last.Outcome != "failed" || !strings.Contains(last.Error, "a.md") {
		t.Errorf("undo's audit line: %+v", last)
	}
	if _, err := undo(t, g, UndoRequest{IDs: []string{o.ID}, Force: true}); err != nil {
		t.Fatal(err)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "a.md")); string(body) != "alpha\nbeta\ngamma\n" {
		t.Errorf("--force did not put a.md back: %q", body)
	}
}

// TestUndoAlreadyDone: a call undone once, then again, then with its
// whole session, is not a conflict the second and third time (its path
// holds its pre-image again: nothing to put back, nothing to protect),
// and a path the person put back by hand is the same; the session's other
// calls are still undone.
func TestUndoAlreadyDone(t *testing.T) {
	g, vault, _ := historyGate(t)
	before := tree(t, vault)
	x := call(t, g, "s1", toolCall{"write", map[string]any{"path": "a.md", "content": "x\n"}})
	mv := call(t, g, "s1", toolCall{"move", map[string]any{"source": "tree", "destination": "forest"}})
	y := call(t, g, "s1", toolCall{"write", map[string]any{"path": "b.md", "content": "y\n"}})
	if u, err := undo(t, g, UndoRequest{IDs: []string{x.ID, mv.ID}}); err != nil || len(u.Restored) != 3 || len(u.Already) != 0 {
		t.Fatalf("first undo: %+v %v", u, err)
	}
	u, err := undo(t, g, UndoRequest{IDs: []string{x.ID, mv.ID}})
	if err != nil || len(u.Conflicts) != 0 || len(u.Restored) != 0 || len(u.Nothing) != 0 || !slices.Equal(slices.Sorted(slices.Values(u.Already)), slices.Sorted(slices.Values([]string{x.ID, mv.ID}))) {
		t.Errorf("undo again: %+v %v", u, err)
	}
	// b.md put back by hand: y is undone already too
	if err := os.WriteFile(filepath.Join(vault, "b.md"), []byte("bee\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	z := call(t, g, "s1", toolCall{"write", map[string]any{"path": "new.md", "content": "z\n"}})
	u, err = undo(t, g, UndoRequest{Session: "s1"})
	if err != nil || len(u.Conflicts) != 0 || !slices.Equal(u.Restored, []string{"new.md"}) || len(u.Already) != 3 {
		t.Errorf("undo of the session: %+v %v (z is %s, y %s)", u, err, z.ID, y.ID)
	}
	sameTree(t, "after the session's undo", tree(t, vault), before)
	// a call whose path is neither its pre-image nor what it left is still a conflict
	w := call(t, g, "s1", toolCall{"write", map[string]any{"path": "a.md", "content": "w\n"}})
	os.WriteFile(filepath.Join(vault, "a.md"), []byte("person\n"), 0o644)
	if u, err = undo(t, g, UndoRequest{IDs: []string{w.ID}}); err != nil || len(u.Conflicts) != 1 || len(u.Already) != 0 {
		t.Errorf("undo of a changed path: %+v %v", u, err)
	}
}

// TestUndoIDs: an id of a call that changed nothing says so; an id no one
// knows is an error, and nothing is done.
func TestUndoIDs(t *testing.T) {
	g, vault, _ := historyGate(t)
	read := call(t, g, "s1", toolCall{"read", map[string]any{"path": "a.md"}})
	w := call(t, g, "s1", toolCall{"write", map[string]any{"path": "a.md", "content": "new\n"}})
	u, err := undo(t, g, UndoRequest{IDs: []string{read.ID}})
	if err != nil || len(u.Nothing) != 1 || u.Nothing[0] != read.ID || len(u.Restored) != 0 {
		t.Errorf("undo of a read: %+v %v", u, err)
	}
	_, err = undo(t, g, UndoRequest{IDs: []string{w.ID, "0190aaaa-0000-7000-8000-000000000000"}})
	if !errors.Is(err, history.ErrUnknownID) {
		t.Errorf("unknown id: %v", err)
	}
	if body, _ := os.ReadFile(filepath.Join(vault, "a.md")); string(body) != "new\n" {
		t.Errorf("an undo with an unknown id did something: %q", body)
	}
}

// failingRecorder can keep nothing, as a full disk can't.
type failingRecorder struct{}

func (failingRecorder) Begin(string, history.Meta, []history.Target) (*history.Change, error) {
	return nil, errors.New("no space left on device")
}

// TestChangeRefusedWhenNotKept: a pre-image that can't be kept refuses the
// change (fail closed), with the reason.
func TestChangeRefusedWhenNotKept(t *testing.T) {
	g, vault, _ := historyGate(t)
	g.keep = failingRecorder{}
	before := tree(t, vault)
	for _, c := range []toolCall{
		{"write", map[string]any{"path": "a.md", "content": "x"}},
		{"write", map[string]any{"path": "new.md", "content": "x"}},
		{"edit", map[string]any{"path": "a.md", "old_string": "beta", "new_string": "b"}},
		{"move", map[string]any{"source": "a.md", "destination": "c.md"}},
		{"delete", map[string]any{"path": "tree", "recursive": true}},
	} {
		s := &policy.Session{ID: "s", State: policy.NewState()}
		o := g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}, c.tool, c.args, Serve)
		if o.Err == nil || !strings.Contains(o.Text(), "could not be kept") || !strings.Contains(o.Text(), "no space left") {
			t.Errorf("%s: %q, want a refusal naming the reason", c.tool, o.Text())
		}
		if o.Record.Outcome != "failed" {
			t.Errorf("%s: audit outcome %q", c.tool, o.Record.Outcome)
		}
	}
	sameTree(t, "after refused changes", tree(t, vault), before)
}

// TestUndoOrderIsTheLocksOrder: calls sent at once (a client that does
// not wait for each answer) change the vault in the order they take the
// vault lock, not the order they started in. The history times each
// change under the lock, so undo walks them back in the order they were
// made: a call held at the lock is timed when it gets it, and a burst of
// calls on the same notes, undone together, leaves the vault as it was.
func TestUndoOrderIsTheLocksOrder(t *testing.T) {
	g, vault, _ := historyGate(t)
	before := tree(t, vault)
	unlock, err := g.lockVault()
	if err != nil {
		t.Fatal(err)
	}
	// each call its own session state (no read before write here), all
	// one session for undo
	do := func(tool string, args map[string]any) *Outcome {
		s := &policy.Session{ID: "s", State: policy.NewState()}
		o := g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}, tool, args, Serve)
		if o.IsError() && tool != "delete" { // a delete may find its note gone
			t.Errorf("%s %v: %s", tool, args["path"], o.Text())
		}
		return o
	}
	held := make(chan *Outcome)
	go func() { held <- do("write", map[string]any{"path": "a.md", "content": "held\n"}) }()
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	unlock()
	o := <-held
	es, err := g.keep.(*history.Store).Call(o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Time.Before(released) {
		t.Errorf("a call held at the lock is timed %v, before the lock let it go at %v", es[0].Time, released)
	}

	var wg sync.WaitGroup
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := fmt.Sprintf("burst/n%d.md", i%3)
			if i%4 == 3 {
				do("delete", map[string]any{"path": n})
				return
			}
			do("write", map[string]any{"path": n, "content": fmt.Sprintf("%d\n%s", i, strings.Repeat("x", i*1000))})
		}()
	}
	wg.Wait()
	u, err := undo(t, g, UndoRequest{Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Conflicts) > 0 {
		t.Errorf("undo of the burst found conflicts, as if walked back out of order: %v", u.Conflicts)
	}
	sameTree(t, "after undoing the burst", tree(t, vault), before)
}

// TestUndoDryRunIsThePlan: a dry run is the undo's own plan, taken no
// further: it changes no file, writes no audit line and keeps no history,
// and the undo that follows does to each path what the dry run said, its
// lines the same but for their tense.
func TestUndoDryRunIsThePlan(t *testing.T) {
	g, vault, state := historyGate(t)
	before := tree(t, vault)
	call(t, g, "s1", toolCall{"write", map[string]any{"path": "a.md", "content": "agent\n"}})
	call(t, g, "s1", toolCall{"write", map[string]any{"path": "new.md", "content": "new\n"}})
	call(t, g, "s1", toolCall{"delete", map[string]any{"path": "tree", "recursive": true}})
	if err := os.WriteFile(filepath.Join(vault, "b.md"), []byte("person\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, g, "s2", toolCall{"write", map[string]any{"path": "other/keep.md", "content": "s2\n"}})
	changed := tree(t, vault)
	logPath := filepath.Join(state, "audit.jsonl")
	logBefore, _ := os.ReadFile(logPath)
	entries := func() int {
		all, err := g.keep.(*history.Store).All()
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	kept := entries()

	plan, err := undo(t, g, UndoRequest{Session: "s1", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []UndoPath{{Path: "a.md", Action: UndoPutBack}, {Path: "new.md", Action: UndoRemove}, {Path: "tree", Action: UndoPutBack}}
	if !slices.Equal(plan.Paths, want) || !plan.DryRun || plan.ID != "" || plan.Calls != 3 {
		t.Errorf("the plan: %+v, want paths %+v", plan, want)
	}
	sameTree(t, "after the dry run", tree(t, vault), changed)
	if logNow, _ := os.ReadFile(logPath); string(logNow) != string(logBefore) {
		t.Error("the dry run wrote an audit line")
	}
	if n := entries(); n != kept {
		t.Errorf("the dry run kept history: %d entries, were %d", n, kept)
	}
	var planned []string
	for _, l := range plan.Lines() {
		planned = append(planned, l.Text)
	}
	if !slices.Equal(planned, []string{"would put back a.md", "would remove new.md", "would put back tree"}) {
		t.Errorf("the plan's lines: %q", planned)
	}

	// A path changed since its call: the plan says it would leave it alone.
	o := call(t, g, "s3", toolCall{"write", map[string]any{"path": "b.md", "content": "s3\n"}})
	os.WriteFile(filepath.Join(vault, "b.md"), []byte("person again\n"), 0o644)
	left, err := undo(t, g, UndoRequest{IDs: []string{o.ID}, DryRun: true})
	if err != nil || len(left.Paths) != 1 || left.Paths[0] != (UndoPath{Path: "b.md", Action: UndoLeaveAlone, Call: o.ID}) {
		t.Fatalf("the plan of a conflict: %+v %v", left, err)
	}
	if l := left.Lines(); len(l) != 1 || !l[0].Problem || l[0].Text != "b.md changed since call "+o.ID+"; it would be left alone (--force puts it back)" {
		t.Errorf("the plan's line for a conflict: %+v", l)
	}

	done, err := undo(t, g, UndoRequest{Session: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(done.Paths, plan.Paths) || done.DryRun || done.ID == "" {
		t.Errorf("the undo did %+v, its plan said %+v", done.Paths, plan.Paths)
	}
	var did []string
	for _, l := range done.Lines() {
		did = append(did, l.Text)
	}
	if !slices.Equal(did[:3], []string{"put back a.md", "removed new.md", "put back tree"}) || did[3] != "undo "+done.ID+" (vaultgate undo "+done.ID+" takes it back)" {
		t.Errorf("the undo's lines: %q", did)
	}
	now := tree(t, vault)
	for p := range before {
		if p != "b.md" && p != "other/keep.md" && now[p] != before[p] {
			t.Errorf("%s is not back: %q", p, now[p])
		}
	}
	if _, ok := now["new.md"]; ok {
		t.Error("new.md was not removed")
	}
}

// TestUndoVia: the panel's undo is the person's act via "panel", in its
// audit line and in its history, whose --since leaves it out as it leaves
// out the command line's; no other via undoes.
func TestUndoVia(t *testing.T) {
	g, vault, state := historyGate(t)
	call(t, g, "s1", toolCall{"write", map[string]any{"path": "a.md", "content": "agent\n"}})
	start := time.Now().Add(-time.Minute)
	if _, err := undo(t, g, UndoRequest{Session: "s1", Via: ViaStdio}); err == nil {
		t.Error("an undo via stdio was taken")
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "a.md")); string(b) != "agent\n" {
		t.Errorf("a refused via undid: %q", b)
	}
	u, err := undo(t, g, UndoRequest{Session: "s1", Via: ViaPanel})
	if err != nil || len(u.Restored) != 1 {
		t.Fatalf("the panel's undo: %+v %v", u, err)
	}
	var last audit.Record
	audit.Read(filepath.Join(state, "audit.jsonl"), func(r audit.Record) error { last = r; return nil })
	if last.ID != u.ID || last.Via != ViaPanel || last.Session != "panel" || last.Agent != "person" || last.Tool != "undo" {
		t.Errorf("the panel's undo's line: %+v", last)
	}
	es, err := g.keep.(*history.Store).Call(u.ID)
	if err != nil || len(es) == 0 || es[0].Via != "panel" || es[0].Session != "panel" || es[0].Agent != "person" {
		t.Errorf("the panel's undo's history: %+v %v", es, err)
	}
	// --since leaves it out, unless asked.
	scope, err := g.scope()
	if err != nil {
		t.Fatal(err)
	}
	store := g.keep.(*history.Store)
	sel, err := SelectCalls(store, scope, "", start, false)
	if err != nil || slices.Contains(sel.IDs, u.ID) || sel.LeftOutUndos != 1 || len(sel.IDs) != 1 {
		t.Errorf("since, without the person's undos: %+v %v", sel, err)
	}
	if sel, err = SelectCalls(store, scope, "", start, true); err != nil || !slices.Contains(sel.IDs, u.ID) || sel.LeftOutUndos != 0 {
		t.Errorf("since, with the person's undos: %+v %v", sel, err)
	}
	// A session names them: the panel's is "panel".
	if sel, err = SelectCalls(store, scope, "panel", time.Time{}, false); err != nil || !slices.Equal(sel.IDs, []string{u.ID}) {
		t.Errorf("the panel's session: %+v %v", sel, err)
	}
}
