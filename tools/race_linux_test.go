//go:build linux

package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// swapVault builds a vault where two folders can be swapped for links into
// the protected zone:
//
//	notes/        edit
//	  sub/e.md    "edit me"        the folder being swapped
//	  sub/m.md    "move me"
//	  .swap       -> ../мета       exchanged with sub, again and again
//	w/            write
//	  sub/        (empty)          swapped too
//	  .swap       -> ../мета
//	мета/         protected, holding every name the workers use, so that
//	              any call that went through a link would change something
func swapVault(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"notes/sub", "w/sub", "мета/dir"} {
		must(os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	files := map[string]string{
		"notes/sub/e.md": "edit me\n", "notes/sub/m.md": "move me\n",
		"мета/e.md": "edit me\n", "мета/m.md": "move me\n", "мета/o.md": "overwrite me\n",
		"мета/d.md": "delete me\n", "мета/dir/x.md": "delete my folder\n", "мета/w.md": "write me\n",
	}
	for name, body := range files {
		must(os.WriteFile(filepath.Join(root, name), []byte(body), 0o644))
	}
	for _, d := range []string{"notes", "w"} {
		must(os.Symlink("../мета", filepath.Join(root, d, ".swap")))
	}
	// mtimes in the past, so that a rewrite within the same clock tick
	// would still show
	old := time.Now().Add(-time.Hour)
	filepath.Walk(filepath.Join(root, "мета"), func(p string, _ os.FileInfo, _ error) error {
		return os.Chtimes(p, old, old)
	})
	return root
}

// raceCounts is what the workers saw: calls that ran, were denied, or
// failed (a link met on the way, a file gone meanwhile).
type raceCounts struct {
	ok, denied, failed, swaps atomic.Int64
	mu                        sync.Mutex
	okBy                      map[string]int // tool → calls that ran
}

func (c *raceCounts) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d swaps; calls: %d ok %v, %d denied, %d failed",
		c.swaps.Load(), c.ok.Load(), c.okBy, c.denied.Load(), c.failed.Load())
}

// swapRace runs writes, edits, moves and deletes through the tools while
// notes/sub and w/sub are exchanged with links into мета, for dur or
// until each worker has made maxCalls calls. The exchange is one
// renameat2(RENAME_EXCHANGE), so sub always exists as one or the other.
func swapRace(t *testing.T, root string, fsys afero.Fs, dur time.Duration, maxCalls int) *raceCounts {
	t.Helper()
	tab, err := zones.New(root, []zones.Entry{
		{Path: ".", Mode: zones.Edit}, {Path: "w", Mode: zones.Write}, {Path: "мета", Mode: zones.Protected},
	}, zones.Options{})
	if err != nil {
		t.Fatal(err)
	}
	vault := &Vault{Root: root, Fs: fsys}
	counts := raceCounts{okBy: map[string]int{}}
	stop := make(chan struct{})
	var swapper, workers sync.WaitGroup

	swapper.Add(1)
	go func() {
		defer swapper.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				if n%2 == 0 { // both subs are folders again
					return
				}
			default:
			}
			for _, d := range []string{"notes", "w"} {
				if err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, d, "sub"), unix.AT_FDCWD, filepath.Join(root, d, ".swap"), unix.RENAME_EXCHANGE); err != nil {
					t.Errorf("swap: %v", err)
					return
				}
			}
			counts.swaps.Add(1)
		}
	}()

	worker := func(calls ...func(s *Set, i int) (string, map[string]any)) {
		workers.Add(1)
		go func() {
			defer workers.Done()
			// each worker is its own session, as separate agents would be
			s := &Set{Vault: vault, Zones: tab, Lang: "en", State: policy.NewState()}
			deadline := time.Now().Add(dur)
			for i := 0; i < maxCalls && time.Now().Before(deadline); i++ {
				for _, call := range calls {
					tool, args := call(s, i)
					switch _, d, err := do(t, s, tool, args); {
					case d != nil:
						counts.denied.Add(1)
					case err != nil:
						counts.failed.Add(1)
					default:
						counts.ok.Add(1)
						counts.mu.Lock()
						counts.okBy[tool]++
						counts.mu.Unlock()
					}
				}
			}
		}()
	}
	call := func(tool string, args map[string]any) func(*Set, int) (string, map[string]any) {
		return func(*Set, int) (string, map[string]any) { return tool, args }
	}
	// writes: new files, and an overwrite of a file read first
	worker(
		func(_ *Set, i int) (string, map[string]any) {
			return "write", map[string]any{"path": fmt.Sprintf("notes/sub/n%d.md", i%50), "content": "new\n"}
		},
		call("read", map[string]any{"path": "notes/sub/w.md"}),
		call("write", map[string]any{"path": "notes/sub/w.md", "content": "written\n"}),
	)
	// edits of a file read first
	worker(
		call("read", map[string]any{"path": "notes/sub/e.md"}),
		call("edit", map[string]any{"path": "notes/sub/e.md", "old_string": "me", "new_string": "me!"}),
	)
	// deletes in the write zone, of files and of a folder
	worker(
		call("write", map[string]any{"path": "w/sub/d.md", "content": "x\n"}),
		call("delete", map[string]any{"path": "w/sub/d.md"}),
		call("write", map[string]any{"path": "w/sub/dir/x.md", "content": "x\n"}),
		call("delete", map[string]any{"path": "w/sub/dir", "recursive": true}),
	)
	// moves out of the folder and back in, and over a file
	worker(
		call("move", map[string]any{"source": "notes/sub/m.md", "destination": "notes/m.md"}),
		call("move", map[string]any{"source": "notes/m.md", "destination": "notes/sub/m.md"}),
		call("write", map[string]any{"path": "notes/o.md", "content": "over\n"}),
		call("move", map[string]any{"source": "notes/o.md", "destination": "notes/sub/o.md", "overwrite": true}),
	)
	workers.Wait()
	close(stop)
	swapper.Wait()
	return &counts
}

func raceDuration() time.Duration {
	if testing.Short() {
		return 300 * time.Millisecond
	}
	return 3 * time.Second
}

// TestNoFollowSwapRace is issue 4's race: nothing in the protected zone
// may change, however the swaps fall.
func TestNoFollowSwapRace(t *testing.T) {
	race := func(t *testing.T, perComponent bool) {
		root := swapVault(t)
		fsys, err := vaultfs.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		defer fsys.Close()
		if perComponent {
			fsys.WalkPerComponent()
		}
		before := vaulttest.Snapshot(t, filepath.Join(root, "мета"))
		start := time.Now()
		counts := swapRace(t, root, fsys, raceDuration(), 20000)
		t.Logf("%v in %v", counts, time.Since(start).Round(time.Millisecond))
		vaulttest.SameSnapshot(t, "protected zone", before, vaulttest.Snapshot(t, filepath.Join(root, "мета")))
		if counts.ok.Load() == 0 || counts.swaps.Load() == 0 {
			t.Errorf("the race did not run: %v", counts)
		}
	}
	t.Run("openat2", func(t *testing.T) { race(t, false) })
	t.Run("per-component", func(t *testing.T) { race(t, true) })
}

// TestRootFsSwapRace documents why NoFollowFs exists: os.Root follows a
// link swapped in inside the vault, so the same race may reach the
// protected zone. It may or may not win in a given run; it only reports.
func TestRootFsSwapRace(t *testing.T) {
	root := swapVault(t)
	fsys, err := vaultfs.OpenRootFs(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	before := vaulttest.Snapshot(t, filepath.Join(root, "мета"))
	counts := swapRace(t, root, fsys, raceDuration()/3, 20000)
	after := vaulttest.Snapshot(t, filepath.Join(root, "мета"))
	changed := 0
	for p, v := range before {
		if after[p] != v {
			changed++
			t.Logf("changed through a swapped link: %s", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			changed++
			t.Logf("appeared through a swapped link: %s", p)
		}
	}
	t.Logf("RootFs: %v; %d paths of the protected zone changed", counts, changed)
}
