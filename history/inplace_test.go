package history

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLogIsWrittenInPlace: a record changes neither the log file's size
// nor its blocks, until the log runs out of room, which is then made
// for many records at once; a seal starts the next generation in the
// same blocks.
func TestLogIsWrittenInPlace(t *testing.T) {
	vault, _, s := logStore(t, Options{})
	put(t, vault, "a.md", make([]byte, 4096))
	stat := func() (size, blocks int64) {
		t.Helper()
		fi, err := s.log.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size(), fi.Sys().(*syscall.Stat_t).Blocks
	}
	size0, blocks0 := stat()
	if size0 != growBy {
		t.Fatalf("a new log has %d bytes of room, want %d", size0, growBy)
	}
	grew := 0
	for i := range 300 { // about 4 KB each: past one growBy
		before, _ := stat()
		if _, err := s.Begin(fmt.Sprintf("call-%03d", i), Meta{Tool: "write"}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
			t.Fatal(err)
		}
		if after, _ := stat(); after != before {
			grew++
			if after%growBy != 0 {
				t.Errorf("the log grew to %d bytes, not by growBy", after)
			}
		}
		put(t, vault, "a.md", fmt.Appendf(make([]byte, 4000), "%d", i))
	}
	if grew == 0 || grew > 2 {
		t.Errorf("the log grew %d times over 300 records of about 4 KB, want once or twice", grew)
	}
	size1, blocks1 := stat()
	if blocks1 < blocks0 || blocks1*512 < size1-growBy {
		t.Errorf("the log's room is not written blocks: %d blocks for %d bytes", blocks1, size1)
	}
	if err := s.exclusive(s.seal); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := s.Begin(fmt.Sprintf("again-%03d", i), Meta{Tool: "write"}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
			t.Fatal(err)
		}
	}
	if size2, _ := stat(); size2 != size1 {
		t.Errorf("after a seal the log grew from %d to %d bytes: its room was not reused", size1, size2)
	}
	if n, err := s.Calls(); err != nil || len(n) != 400 {
		t.Errorf("%d calls, want 400 (%v)", len(n), err)
	}
}

// TestStaleGenerationIsNotRead: a head that a crash left covering room
// its generation never wrote (which holds a sealed generation's frames)
// gives none of them as the log's records.
func TestStaleGenerationIsNotRead(t *testing.T) {
	vault, _, s := logStore(t, Options{})
	put(t, vault, "a.md", []byte("a\n"))
	for _, id := range []string{"one", "two", "three"} {
		if _, err := s.Begin(id, Meta{}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
			t.Fatal(err)
		}
	}
	old, _ := s.readHead()
	if err := s.exclusive(s.seal); err != nil {
		t.Fatal(err)
	}
	h, _ := s.readHead()
	if h.gen != old.gen+1 || h.end != headSize {
		t.Fatalf("after a seal the head is %+v, was %+v", h, old)
	}
	setHead(t, s, logHead{gen: h.gen, end: old.end})
	recs, err := s.logged()
	if err != nil || len(recs) != 0 {
		t.Fatalf("the log gives %d records of a sealed generation (%v)", len(recs), err)
	}
	if _, err := s.Begin("four", Meta{}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	recs, _ = s.logged()
	if len(recs) != 1 || recs[0].ID != "four" {
		t.Fatalf("the log gives %d records after one more", len(recs))
	}
	for _, id := range []string{"one", "two", "three", "four"} {
		if es, err := s.Call(id); err != nil || len(es) != 1 {
			t.Errorf("%s: %v, %v", id, es, err)
		}
	}
}

// TestDamagedHeadIsRepaired: a head a power cut tore refuses new records
// (a writer can't know where the log ends), never loses the ones there,
// and the next Open, even a hook's, seals them and starts the log anew.
func TestDamagedHeadIsRepaired(t *testing.T) {
	vault, state, s := logStore(t, Options{})
	sum := put(t, vault, "a.md", []byte("before\n"))
	if _, err := s.Begin("one", Meta{}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	b := logHead{gen: 7, end: headSize}.encode()
	b[17] ^= 0xff
	if _, err := s.log.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin("two", Meta{}, []Target{{Op: "modify", Path: "a.md"}}); !errors.Is(err, errHeadDamaged) {
		t.Fatalf("a record was written past a damaged head: %v", err)
	}
	if es, err := s.Call("one"); err != nil || len(es) != 1 || es[0].Before.SHA256 != sum {
		t.Fatalf("the record before the damage: %+v, %v", es, err)
	}
	s.Close()
	s2 := openAt(t, vault, state, Options{})
	h, err := s2.readHead()
	if err != nil || !h.ok || h.end != headSize || h.gen < 2 {
		t.Fatalf("the head after Open: %+v, %v", h, err)
	}
	if got := readBlob(t, s2, sum); got != "before\n" {
		t.Fatalf("pre-image %q", got)
	}
	if _, err := s2.Begin("two", Meta{}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	if ids, err := s2.Calls(); err != nil || len(ids) != 2 {
		t.Fatalf("calls %v, %v", ids, err)
	}
}

// TestWritersOfOneLog: stores opened apart on one folder (as a server and
// hook processes are: each its own open file, so the flock is what keeps
// them apart) write records at once, with seals between; none is lost or
// torn.
func TestWritersOfOneLog(t *testing.T) {
	defer func(old int64) { logLimit = old }(logLimit)
	logLimit = 8192
	vault, state, s := logStore(t, Options{})
	others := []*Store{s, openAt(t, vault, state, Options{}), openAt(t, vault, state, Options{})}
	for i := range 3 {
		put(t, vault, fmt.Sprintf("n%d.md", i), fmt.Appendf(nil, "note %d\n", i))
	}
	var wg sync.WaitGroup
	for w, st := range others {
		wg.Go(func() {
			for i := range 30 {
				c, err := st.Begin(fmt.Sprintf("w%d-%02d", w, i), Meta{Time: time.Now()}, []Target{{Op: "modify", Path: fmt.Sprintf("n%d.md", w)}})
				if err != nil {
					t.Error(err)
					return
				}
				if err := c.Done(); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	ids, err := s.Calls()
	if err != nil || len(ids) != 90 {
		t.Fatalf("%d calls, want 90 (%v)", len(ids), err)
	}
	for _, id := range ids {
		es, err := s.Call(id)
		if err != nil || len(es) != 1 || es[0].State != Applied {
			t.Fatalf("%s: %+v, %v", id, es, err)
		}
	}
	if fi, err := os.Stat(s.log.Name()); err != nil || fi.Size() > 2*growBy {
		t.Errorf("the log is %v bytes after seals (%v)", fi.Size(), err)
	}
}
