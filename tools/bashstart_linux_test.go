package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// personSaves is what the person does to notes/a.md ("b\na\nc\n") outside
// the wall: an editor's write, or a new file renamed over it (an editor's
// save, undo --force). Each keeps the note's size, so that only when it
// changed tells it from the state the call's changes were judged on.
var personSaves = []struct {
	name string
	save func(root string, round int) error
}{
	{"a write", func(root string, round int) error {
		return os.WriteFile(filepath.Join(root, "notes/a.md"), fmt.Appendf(nil, "p\n%d\nc\n", round%10), 0o644)
	}},
	{"a rename over it", func(root string, round int) error {
		tmp := filepath.Join(root, "notes/.a.md.swp")
		if err := os.WriteFile(tmp, fmt.Appendf(nil, "r\n%d\nc\n", round%10), 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(root, "notes/a.md"))
	}},
}

// TestWallTxnChangedBeforeTheCall: a note the person saved a moment
// before a walled bash call starts (1 ms, 5 ms, 30 ms, or at once) is the
// call's to change: its commit is never refused as a change made while
// the command ran. Repeated, on a memory and a disk layer: a save in the
// same tick of the kernel's coarse clock as the start is what a margin
// gets wrong now and then.
func TestWallTxnChangedBeforeTheCall(t *testing.T) {
	requireOverlay(t)
	const rounds = 6
	for _, disk := range []bool{false, true} {
		for _, before := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 30 * time.Millisecond} {
			for _, ps := range personSaves {
				name := fmt.Sprintf("%s/%s %v before", map[bool]string{false: "memory", true: "disk"}[disk], ps.name, before)
				t.Run(name, func(t *testing.T) {
					s, root := txnVault(t)
					s.diskLayer = disk
					for round := range rounds {
						if err := ps.save(root, round); err != nil {
							t.Fatal(err)
						}
						saved := read(t, root, "notes/a.md")
						time.Sleep(before)
						o := runBash(t, s, "echo agent >> notes/a.md", 0)
						if o.deny != nil || o.err != nil || o.res.NotApplied != "" {
							t.Fatalf("round %d: deny %v, err %v, result %+v", round, o.deny, o.err, o.res)
						}
						if got := read(t, root, "notes/a.md"); got != saved+"agent\n" {
							t.Fatalf("round %d: notes/a.md = %q, want %q", round, got, saved+"agent\n")
						}
					}
				})
			}
		}
	}
}

// TestWallTxnChangedDuringTheCall: a note the person saves while the
// command runs refuses the whole commit, every round. The command writes
// its copy and waits; the person saves the note in the vault, and only
// then lets the command go on (by ending its sleep), so the save is
// during the call however slow the machine is.
func TestWallTxnChangedDuringTheCall(t *testing.T) {
	requireOverlay(t)
	const rounds = 5
	for _, disk := range []bool{false, true} {
		for _, ps := range personSaves {
			t.Run(map[bool]string{false: "memory", true: "disk"}[disk]+"/"+ps.name, func(t *testing.T) {
				s, root := txnVault(t)
				s.diskLayer = disk
				for round := range rounds {
					// a sleep of its own, which nothing else runs
					nap := fmt.Sprintf("%d.%03d", 60+round, 100+os.Getpid()%900)
					saved := make(chan error, 1)
					go func() {
						pid, err := waitForSleep(nap, time.Minute)
						if err == nil {
							err = ps.save(root, round)
						}
						if pid > 0 {
							if kerr := syscall.Kill(pid, syscall.SIGKILL); err == nil {
								err = kerr
							}
						}
						saved <- err
					}()
					o := runBash(t, s, "echo mine > notes/a.md; echo new > notes/new.md; sleep "+nap+"; true", 0)
					if err := <-saved; err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					if o.deny != nil || o.err != nil || !strings.Contains(o.res.Text, `"notes/a.md" changed in the vault while the command ran`) {
						t.Fatalf("round %d: deny %v, err %v, result %+v", round, o.deny, o.err, o.res)
					}
					if got := read(t, root, "notes/a.md"); got == "mine\n" || strings.HasPrefix(got, "<") {
						t.Fatalf("round %d: notes/a.md = %q, want the person's", round, got)
					}
					if got := read(t, root, "notes/new.md"); !strings.HasPrefix(got, "<") {
						t.Fatalf("round %d: notes/new.md was applied: %q", round, got)
					}
					if left := layersLeft(t, s); len(left) > 0 {
						t.Fatalf("round %d: layers left in the state folder: %v", round, left)
					}
				}
			})
		}
	}
}

// waitForSleep finds the process running `sleep nap`, for up to limit.
func waitForSleep(nap string, limit time.Duration) (int, error) {
	want := "sleep\x00" + nap + "\x00"
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			if c, _ := os.ReadFile(p); string(c) == want {
				pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
				return pid, err
			}
		}
	}
	return 0, fmt.Errorf("no process ran sleep %s", nap)
}
