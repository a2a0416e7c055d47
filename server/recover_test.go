package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
)

// stopAtRename is a vault's file system on which a call stops between
// making a temporary name and renaming it into place, as a kill would
// stop it: the rename fails, and so does every removal of a temporary
// name, so nothing cleans up after it. It has none of the production
// file system's capabilities (no O_TMPFILE, no pinning), so the file
// tools take their temporary name at once.
type stopAtRename struct{ afero.Fs }

var errStopped = errors.New("stopped between the temporary name and its rename")

func isTemp(name string) bool { return strings.HasPrefix(path.Base(name), history.TempPrefix) }

func (s stopAtRename) Rename(from, to string) error {
	if isTemp(from) {
		return errStopped
	}
	return s.Fs.Rename(from, to)
}

func (s stopAtRename) Remove(name string) error {
	if isTemp(name) {
		return errStopped
	}
	return s.Fs.Remove(name)
}

func (s stopAtRename) RemoveAll(name string) error {
	if isTemp(name) {
		return errStopped
	}
	return s.Fs.RemoveAll(name)
}

func (s stopAtRename) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	return s.Fs.(afero.Lstater).LstatIfPossible(name)
}

func (s stopAtRename) ReadlinkIfPossible(name string) (string, error) {
	return s.Fs.(afero.LinkReader).ReadlinkIfPossible(name)
}

func (s stopAtRename) SymlinkIfPossible(oldname, newname string) error {
	return s.Fs.(afero.Linker).SymlinkIfPossible(oldname, newname)
}

// tempNames are the names beginning with the temporary prefix anywhere
// in the vault, vault-relative.
func tempNames(t *testing.T, vault string) []string {
	t.Helper()
	var out []string
	for p := range tree(t, vault) {
		if strings.HasPrefix(filepath.Base(p), history.TempPrefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// recoverLines are the audit lines of start-up's recovery.
func recoverLines(t *testing.T, cfg *config.Config) []audit.Record {
	t.Helper()
	var out []audit.Record
	if err := audit.Read(cfg.AuditPath, func(r audit.Record) error {
		if r.Tool == "recover" {
			out = append(out, r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// restart opens cfg's vault as the next `vaultgate serve` does, start-up
// and all, and closes it; it returns what the start-up told the person.
func restart(t *testing.T, cfg *config.Config) string {
	t.Helper()
	var log strings.Builder
	g, err := OpenServer(cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	return log.String()
}

// TestStartUpKeepsNamesItDidNotMake: a note and a folder (a git
// repository in it) under names with vaultgate's temporary prefix, which
// vaultgate's journal does not note, survive restarts whole, and no
// audit line is written for them. Such names were once swept by their
// pattern at every start.
func TestStartUpKeepsNamesItDidNotMake(t *testing.T) {
	g, vault, _ := historyGate(t)
	for p, body := range map[string]string{
		".vaultgate-tmp-note.md":                  "the agent's note\n",
		"tree/.vaultgate-tmp-0011":                "a note\n",
		"tree/.vaultgate-tmp-repo/.git/HEAD":      "ref: refs/heads/main\n",
		"tree/.vaultgate-tmp-repo/.git/config":    "[core]\n",
		"tree/.vaultgate-tmp-repo/notes/inner.md": "inside\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, p)), 0o755)
		if err := os.WriteFile(filepath.Join(vault, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, vault)
	g.Close()
	for range 2 {
		restart(t, g.cfg)
		sameTree(t, "after a restart", tree(t, vault), before)
	}
	if lines := recoverLines(t, g.cfg); len(lines) != 0 {
		t.Errorf("start-up recorded recovering names it did not make: %+v", lines)
	}
}

// TestStartUpRemovesWhatAStopLeft: a write stopped between making its
// temporary file and renaming it leaves that file, noted in the journal;
// the next start removes it, by a call through the gate whose audit line
// (tool "recover", via "start-up", agent "vaultgate") names it as a
// delete, and leaves the rest of the vault alone — an unnoted name of the
// same prefix beside it included. A second start finds nothing to do.
func TestStartUpRemovesWhatAStopLeft(t *testing.T) {
	g, vault, _ := historyGate(t)
	os.WriteFile(filepath.Join(vault, "tree/.vaultgate-tmp-mine"), []byte("the person's\n"), 0o644)
	g.vault.Fs = stopAtRename{g.vault.Fs}
	for _, p := range []string{"a.md", "tree/new.md"} { // a replace and a create
		s := &policy.Session{ID: "s", State: policy.NewState()}
		o := g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)},
			"write", map[string]any{"path": p, "content": "new body of " + p + "\n"}, Serve)
		if o.Err == nil || !strings.Contains(o.Text(), "stopped") {
			t.Fatalf("write %s: %q, want the stop", p, o.Text())
		}
	}
	left := tempNames(t, vault)
	var ours []string
	for _, p := range left {
		if p != "tree/.vaultgate-tmp-mine" {
			ours = append(ours, p)
		}
	}
	if len(ours) != 2 || !strings.HasPrefix(ours[0], history.TempPrefix) || !strings.HasPrefix(ours[1], "tree/"+history.TempPrefix) {
		t.Fatalf("the stops left %v, want a temporary file beside a.md and one in tree", left)
	}
	for _, p := range ours {
		if b, _ := os.ReadFile(filepath.Join(vault, p)); !strings.HasPrefix(string(b), "new body of ") {
			t.Fatalf("%s holds %q, want the stopped write's body", p, b)
		}
	}
	g.Close()

	log := restart(t, g.cfg)
	if got := tempNames(t, vault); !slices.Equal(got, []string{"tree/.vaultgate-tmp-mine"}) {
		t.Errorf("after the start: temporary names %v, want only the unnoted one", got)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "tree/.vaultgate-tmp-mine")); string(b) != "the person's\n" {
		t.Errorf("the unnoted name holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "b.md")); string(b) != "bee\n" {
		t.Errorf("b.md holds %q", b)
	}
	lines := recoverLines(t, g.cfg)
	if len(lines) != 1 {
		t.Fatalf("%d recovery lines, want 1: %+v", len(lines), lines)
	}
	r := lines[0]
	if r.Via != ViaStartUp || r.Agent != "vaultgate" || r.Decision != Allow || r.Outcome != audit.OK {
		t.Errorf("recovery line: via %q agent %q decision %q outcome %q", r.Via, r.Agent, r.Decision, r.Outcome)
	}
	var deleted []string
	for _, e := range r.Effects {
		if e.Op == "delete" {
			deleted = append(deleted, e.Path)
		}
	}
	slices.Sort(deleted)
	if !slices.Equal(deleted, ours) {
		t.Errorf("the line's deletes %v, want %v", deleted, ours)
	}
	if !strings.Contains(log, "removed 2 temporary name(s)") || !strings.Contains(log, r.ID) {
		t.Errorf("start-up told the person %q", log)
	}
	restart(t, g.cfg)
	if n := len(recoverLines(t, g.cfg)); n != 1 {
		t.Errorf("a second start wrote %d recovery lines in all, want the first alone", n)
	}
}

// TestStartUpRemovesAStoppedRestore: an undo stopped before it renames
// the folder it rebuilt leaves that folder (a temporary name, noted with
// the very folder made); the next start removes it whole, with its audit
// line. The undo's own folder comes back when the undo is run again.
func TestStartUpRemovesAStoppedRestore(t *testing.T) {
	g, vault, _ := historyGate(t)
	before := tree(t, vault)
	o := call(t, g, "s", toolCall{"delete", map[string]any{"path": "tree", "recursive": true}})
	g.Close()
	p := personGate(t, g.cfg)
	p.vault.Fs = stopAtRename{p.vault.Fs}
	if _, err := p.Undo(UndoRequest{IDs: []string{o.ID}}); err == nil {
		t.Fatal("the stopped undo came to no error")
	}
	p.Close()
	left := tempNames(t, vault)
	if len(left) == 0 || !strings.HasPrefix(left[0], history.TempPrefix) {
		t.Fatalf("the stopped undo left %v, want its folder", left)
	}
	restart(t, g.cfg)
	if got := tempNames(t, vault); len(got) != 0 {
		t.Errorf("after the start: %v", got)
	}
	lines := recoverLines(t, g.cfg)
	if len(lines) != 1 || len(lines[0].Effects) != 1 || lines[0].Effects[0].Path != left[0]+"/**" || lines[0].Effects[0].Op != "delete" {
		t.Fatalf("recovery lines %+v, want one deleting %s/**", lines, left[0])
	}
	if _, err := undo(t, g, UndoRequest{IDs: []string{o.ID}, Force: true}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "undone at last", tree(t, vault), before)
}

// TestStartUpKeepsANotedNameNowSomeoneElses: a noted temporary name that
// no longer holds the file vaultgate made there (replaced by another
// file under the same name) is not removed: its note is dropped, and the
// audit line says what was kept and why.
func TestStartUpKeepsANotedNameNowSomeoneElses(t *testing.T) {
	g, vault, _ := historyGate(t)
	g.vault.Fs = stopAtRename{g.vault.Fs}
	s := &policy.Session{ID: "s", State: policy.NewState()}
	g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)},
		"write", map[string]any{"path": "a.md", "content": "x\n"}, Serve)
	g.Close()
	left := tempNames(t, vault)
	if len(left) != 1 {
		t.Fatalf("the stop left %v", left)
	}
	full := filepath.Join(vault, left[0])
	os.WriteFile(full+"-other", []byte("y\n"), 0o644) // another file, the same size
	if err := os.Rename(full+"-other", full); err != nil {
		t.Fatal(err)
	}
	restart(t, g.cfg)
	if b, err := os.ReadFile(full); err != nil || string(b) != "y\n" {
		t.Errorf("%s: %q %v, want it kept", left[0], b, err)
	}
	lines := recoverLines(t, g.cfg)
	if len(lines) != 1 || len(lines[0].Effects) != 0 || !strings.Contains(fmt.Sprint(lines[0].Args["keep"]), left[0]) {
		t.Fatalf("recovery lines %+v, want one keeping %s and deleting nothing", lines, left[0])
	}
	restart(t, g.cfg)
	if n := len(recoverLines(t, g.cfg)); n != 1 {
		t.Errorf("the note was not dropped: %d recovery lines", n)
	}
}

// TestReservedNamesRefused: no file tool makes, fills or moves anything to
// a name vaultgate reserves, nor removes one, in a write zone: the zones
// cap it at protected, as they do a control path. Names near it are
// ordinary notes (the positive controls).
func TestReservedNamesRefused(t *testing.T) {
	g, vault, _ := historyGate(t)
	os.WriteFile(filepath.Join(vault, "tree/.vaultgate-tmp-old"), []byte("old\n"), 0o644)
	do := func(tool string, args map[string]any) *Outcome {
		s := &policy.Session{ID: "s", State: policy.NewState()}
		return g.Call(context.Background(), Caller{Via: ViaStdio, Session: s, Policy: g.cfg.Policy(config.DefaultAgent)}, tool, args, Serve)
	}
	for _, c := range []toolCall{
		{"write", map[string]any{"path": ".vaultgate-tmp-x", "content": "x"}},
		{"write", map[string]any{"path": "tree/.VaultGate-Tmp-x.md", "content": "x"}},
		{"write", map[string]any{"path": "tree/.vaultgate-txn-abc-0", "content": "x"}},
		{"write", map[string]any{"path": ".vaultgate-tmp-d/inner.md", "content": "x"}},
		{"move", map[string]any{"source": "a.md", "destination": "tree/.vaultgate-tmp-a"}},
		{"move", map[string]any{"source": "tree", "destination": ".vaultgate-tmp-tree"}},
		{"edit", map[string]any{"path": "tree/.vaultgate-tmp-old", "old_string": "old", "new_string": "new"}},
		{"delete", map[string]any{"path": "tree/.vaultgate-tmp-old"}},
	} {
		if o := do(c.tool, c.args); o.Decision != Deny {
			t.Errorf("%s %v: %s %q, want a refusal", c.tool, c.args, o.Decision, o.Text())
		}
	}
	for _, c := range []toolCall{
		{"write", map[string]any{"path": ".vaultgate.md", "content": "x"}},
		{"write", map[string]any{"path": "tree/vaultgate-tmp-x.md", "content": "x"}},
		{"move", map[string]any{"source": "a.md", "destination": "tree/vaultgate-tmp-a.md"}},
		{"read", map[string]any{"path": "tree/.vaultgate-tmp-old"}},
	} {
		if o := do(c.tool, c.args); o.Decision != Allow || o.IsError() {
			t.Errorf("%s %v: %s %q, want it done", c.tool, c.args, o.Decision, o.Text())
		}
	}
}
