package tools

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/history"
)

// keepHistory gives a walled set a history store in its state folder.
func keepHistory(t *testing.T, s *Set) *history.Store {
	t.Helper()
	st, err := history.Open(history.Dir(s.Vault.StateDir), s.Vault.Fs, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s.History = st
	return st
}

// TestWallTxnUndo: each change a bash commit makes is kept before it is
// applied, keyed by the call's id, and undo of the calls gives the vault
// back as it was.
func TestWallTxnUndo(t *testing.T) {
	requireOverlay(t)
	s, root := txnVault(t)
	st := keepHistory(t, s)
	before := tree(t, root)
	var ids []string
	for i, command := range []string{
		"sed -i 's/bee/BEE/' notes/b.md",   // an edit zone, by rename
		"rm write/w.md",                    // a write zone
		"mv notes/sub/c.md notes/moved.md", // a move
	} {
		s.CallID = fmt.Sprintf("call-%d", i)
		ids = append(ids, s.CallID)
		o := runBash(t, s, command, 0)
		if o.deny != nil || o.err != nil || o.res.NotApplied != "" {
			t.Fatalf("%s: deny %v, err %v, result %+v", command, o.deny, o.err, o.res)
		}
		es, err := st.Call(s.CallID)
		if err != nil {
			t.Fatalf("%s: no history: %v", command, err)
		}
		for _, e := range es {
			if e.State != history.Applied {
				t.Errorf("%s: %s is %s, want applied", command, e.Path, e.State)
			}
		}
	}
	if got := changed(before, tree(t, root)); len(got) == 0 {
		t.Fatal("the commands changed nothing")
	}
	var diff strings.Builder
	if err := st.Diff(&diff, ids[0]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(diff.String(), "-bee") || !strings.Contains(diff.String(), "+BEE") {
		t.Errorf("diff of the sed call:\n%s", diff.String())
	}
	p, err := st.PlanUndo(ids, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Conflicts) > 0 {
		t.Fatalf("conflicts: %v", p.Conflicts)
	}
	if err := st.Apply(p, "undo-1", history.Meta{Via: "cli"}, s.Vault.Fs); err != nil {
		t.Fatal(err)
	}
	if got := changed(before, tree(t, root)); len(got) > 0 {
		t.Errorf("after undo these differ from before the calls: %v", got)
	}
}

// failingBegin is a history that can keep nothing.
type failingBegin struct{}

func (failingBegin) Begin(string, history.Meta, []history.Target) (*history.Change, error) {
	return nil, errors.New("no space left on device")
}

// TestWallTxnHistoryFailed: a commit whose pre-images can't be kept is
// refused, and nothing of it reaches the vault.
func TestWallTxnHistoryFailed(t *testing.T) {
	requireOverlay(t)
	s, root := txnVault(t)
	s.History, s.CallID = failingBegin{}, "call-1"
	before := tree(t, root)
	o := runBash(t, s, "sed -i 's/bee/BEE/' notes/b.md", 0)
	if o.deny != nil || o.err != nil {
		t.Fatalf("deny %v, err %v", o.deny, o.err)
	}
	if !strings.Contains(o.res.NotApplied, "no space left on device") || !strings.Contains(o.res.NotApplied, "could not be kept") {
		t.Errorf("not applied = %q, want the history's reason", o.res.NotApplied)
	}
	if got := changed(before, tree(t, root)); len(got) > 0 {
		t.Errorf("changed %v", got)
	}
	if left := layersLeft(t, s); len(left) > 0 {
		t.Errorf("layers left: %v", left)
	}
}
