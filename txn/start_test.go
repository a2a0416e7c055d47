package txn_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/afero"
	"github.com/vaultgate/vaultgate/txn"
	"github.com/vaultgate/vaultgate/vaultfs"
)

// personChanges are what the person (an editor, undo --force, a sync
// client) does to a.md, each keeping its size, so that only the time of
// the change can tell it from the state the call was judged on.
var personChanges = []struct {
	name string
	do   func(t *testing.T, v *vault, round int)
}{
	{"a write", func(t *testing.T, v *vault, round int) {
		put(t, v.dir, "a.md", fmt.Sprintf("person %03d\n", round), 0o644)
	}},
	{"a replace by rename", func(t *testing.T, v *vault, round int) {
		// what undo and an editor's save do: a new file renamed over the old
		put(t, v.dir, ".a.md.new", fmt.Sprintf("person %03d\n", round), 0o644)
		if err := os.Rename(filepath.Join(v.dir, ".a.md.new"), filepath.Join(v.dir, "a.md")); err != nil {
			t.Fatal(err)
		}
	}},
	{"a mode", func(t *testing.T, v *vault, round int) {
		if err := os.Chmod(filepath.Join(v.dir, "a.md"), 0o600|os.FileMode(round%2)<<5); err != nil {
			t.Fatal(err)
		}
	}},
}

// clocks are the two clocks Begin reads: the vault's own (a file with no
// name in it), and the state folder's, where the vault can't make one.
var clocks = []struct {
	name string
	fs   func(v *vault) afero.Fs
}{
	{"vault's clock", func(v *vault) afero.Fs { return v.fs }},
	{"state folder's clock", func(v *vault) afero.Fs { return noUnnamed{v.fs} }},
}

// noUnnamed is a vault that can't make a file with no name.
type noUnnamed struct{ *vaultfs.NoFollowFs }

func (noUnnamed) CreateUnnamed(os.FileMode) (vaultfs.UnnamedFile, error) {
	return nil, vaultfs.ErrUnnamedUnsupported
}

// TestStartChangeBeforeIsNoConflict: a change the person made before the
// call started, however close to its start, never refuses the commit.
// Repeated: a change in the same tick of the kernel's coarse clock as the
// start is the case a margin or time.Now gets wrong now and then.
func TestStartChangeBeforeIsNoConflict(t *testing.T) {
	const rounds = 30
	for _, clock := range clocks {
		for _, before := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 30 * time.Millisecond} {
			for _, pc := range personChanges {
				t.Run(fmt.Sprintf("%s/%s %v before", clock.name, pc.name, before), func(t *testing.T) {
					t.Parallel()
					n := rounds
					if before >= 30*time.Millisecond {
						n = rounds / 4
					}
					v := newVault(t)
					put(t, v.dir, "a.md", "original!!\n", 0o644)
					for round := range n {
						_, l := newLayer(t)
						pc.do(t, v, round)
						time.Sleep(before)
						start := startCall(t, clock.fs(v), l)
						body := fmt.Sprintf("agent's %03d\n", round)
						changes := []txn.Change{modifyFile(t, v, l, "a.md", "a.md", body, 0o644)}
						if err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: start}); err != nil {
							t.Fatalf("round %d: a change %v before the start refused the commit: %v", round, before, err)
						}
						if got := readFile(t, v.dir, "a.md"); got != body {
							t.Fatalf("round %d: a.md = %q, want %q", round, got, body)
						}
					}
				})
			}
		}
	}
}

// TestStartChangeDuringIsAConflict: a change the person made once the
// call started, however soon after, always refuses the commit.
func TestStartChangeDuringIsAConflict(t *testing.T) {
	const rounds = 30
	for _, clock := range clocks {
		for _, after := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond} {
			for _, pc := range personChanges {
				t.Run(fmt.Sprintf("%s/%s %v after", clock.name, pc.name, after), func(t *testing.T) {
					t.Parallel()
					v := newVault(t)
					put(t, v.dir, "a.md", "original!!\n", 0o644)
					for round := range rounds {
						_, l := newLayer(t)
						changes := []txn.Change{modifyFile(t, v, l, "a.md", "a.md", "agent's\n", 0o644)}
						start := startCall(t, clock.fs(v), l)
						time.Sleep(after)
						pc.do(t, v, round)
						changes[0].Before = stateOf(t, v.dir, "a.md") // the state matches: only the time tells
						want := readFile(t, v.dir, "a.md")
						err := txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: start})
						var conflict *txn.ConflictError
						if !errors.As(err, &conflict) || conflict.Path != "a.md" {
							t.Fatalf("round %d: a change %v after the start: Commit: %v, want a conflict on a.md", round, after, err)
						}
						if got := readFile(t, v.dir, "a.md"); got != want {
							t.Fatalf("round %d: a.md = %q, want the person's %q", round, got, want)
						}
					}
				})
			}
		}
	}
}

// TestStartThroughOverlay: a command on a real overlay. A note changed
// just before the call is the command's to change; one the person writes
// while the command runs (the command waits for it) refuses the commit.
func TestStartThroughOverlay(t *testing.T) {
	privileged := os.Geteuid() == 0
	const rounds = 8
	for _, during := range []bool{false, true} {
		t.Run(map[bool]string{false: "changed before", true: "changed during"}[during], func(t *testing.T) {
			base := txn.TestBase(t)
			vdir := filepath.Join(base, "vault")
			put(t, vdir, "a.md", "original!!\n", 0o644)
			v := &vault{dir: vdir, fs: newVaultFs(t, vdir)}
			for round := range rounds {
				l, err := txn.NewLayer(filepath.Join(base, "state"))
				if err != nil {
					t.Fatal(err)
				}
				go1 := filepath.Join(base, fmt.Sprintf("go-%d", round))
				script := "echo agent >> a.md"
				wrote := make(chan error, 1)
				if during {
					// The command writes its copy, then waits until the person
					// has saved the note in the vault.
					script += fmt.Sprintf("; while [ ! -e %q ]; do sleep 0.01; done", go1)
					stop := make(chan struct{})
					t.Cleanup(func() { close(stop) })
					go func() {
						for !exists(filepath.Join(l.Upper, "a.md")) {
							select {
							case <-stop:
								wrote <- errors.New("the command never wrote its copy")
								return
							case <-time.After(time.Millisecond):
							}
						}
						err := os.WriteFile(filepath.Join(vdir, "a.md"), fmt.Appendf(nil, "person %03d\n", round), 0o644)
						if err == nil {
							err = os.WriteFile(go1, nil, 0o644)
						}
						wrote <- err
					}()
				} else {
					put(t, vdir, "a.md", fmt.Sprintf("person %03d\n", round), 0o644)
					wrote <- nil
				}
				start := startCall(t, v.fs, l)
				txn.ThroughOverlay(t, base, vdir, l, privileged, script)
				if err := <-wrote; err != nil {
					t.Fatal(err)
				}
				changes, err := txn.Diff(l, vdir, txn.DiffOptions{Privileged: privileged})
				if err != nil {
					t.Fatal(err)
				}
				person := readFile(t, vdir, "a.md")
				err = txn.Commit(v.fs, l, changes, txn.CommitOptions{Start: start})
				got := readFile(t, vdir, "a.md")
				if during {
					var conflict *txn.ConflictError
					if !errors.As(err, &conflict) || conflict.Path != "a.md" || got != person {
						t.Fatalf("round %d: Commit: %v, a.md %q; want a conflict on a.md, and the person's %q", round, err, got, person)
					}
				} else if err != nil || got != person+"agent\n" {
					t.Fatalf("round %d: Commit: %v, a.md %q; want the command's change committed", round, err, got)
				}
				if err := l.Remove(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestBeginLeavesNothing: taking a start names nothing in the vault or
// in the state folder, and changes nothing in the vault.
func TestBeginLeavesNothing(t *testing.T) {
	v := newVault(t)
	put(t, v.dir, "a.md", "alpha", 0o644)
	stateDir, l := newLayer(t)
	vault, state := snapshot(t, v.dir), snapshot(t, stateDir)
	rootBefore, err := os.Stat(v.dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		startCall(t, v.fs, l)
	}
	sameTree(t, snapshot(t, v.dir), vault)
	sameTree(t, snapshot(t, stateDir), state)
	rootAfter, err := os.Stat(v.dir)
	if err != nil {
		t.Fatal(err)
	}
	if !rootAfter.ModTime().Equal(rootBefore.ModTime()) {
		t.Error("the vault's root folder was modified")
	}
}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
