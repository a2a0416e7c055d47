package history

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/afero"
)

// logStore is a vault folder and a store over it, for the log's tests,
// which reach inside the store.
func logStore(t *testing.T, opt Options) (vault, state string, s *Store) {
	t.Helper()
	dir := t.TempDir()
	vault, state = filepath.Join(dir, "vault"), filepath.Join(dir, "state")
	if err := os.MkdirAll(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, vault, state, opt)
	return vault, state, s
}

func openAt(t *testing.T, vault, state string, opt Options) *Store {
	t.Helper()
	s, err := Open(Dir(state), afero.NewBasePathFs(afero.NewOsFs(), vault), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func put(t *testing.T, vault, rel string, body []byte) string {
	t.Helper()
	p := filepath.Join(vault, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return sha(body)
}

// logLen is how many bytes of records the log holds, by its head.
func logLen(t *testing.T, s *Store) int64 {
	t.Helper()
	h, err := s.readHead()
	if err != nil || !h.ok {
		t.Fatalf("the log's head: %+v, %v", h, err)
	}
	return h.end - headSize
}

// setHead writes a head into the store's log, as a crash could leave it.
func setHead(t *testing.T, s *Store, h logHead) {
	t.Helper()
	if _, err := s.log.WriteAt(h.encode(), 0); err != nil {
		t.Fatal(err)
	}
}

// firstFrame frames a payload as the log's first format did.
func firstFrame(payload []byte) []byte {
	out := make([]byte, firstHead, firstHead+len(payload))
	copy(out, firstMagic[:])
	binary.LittleEndian.PutUint32(out[4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(out[8:], crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

func readBlob(t *testing.T, s *Store, sum string) string {
	t.Helper()
	r, err := s.Blob(sum)
	if err != nil {
		t.Fatalf("blob %s: %v", sum, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(names)
}

// TestBeginMakesNoFile: a small pre-image and the call's entries go into
// one record of the log, flushed; no blob or entry file is made (each
// costs an inode), and both read back from the log, then from the pack
// the log is sealed into.
func TestBeginMakesNoFile(t *testing.T) {
	vault, state, s := logStore(t, Options{})
	sum := put(t, vault, "a.md", []byte("before\n"))
	c, err := s.Begin("call-1", Meta{Tool: "write"}, []Target{{Op: "modify", Path: "a.md"}})
	if err != nil {
		t.Fatal(err)
	}
	put(t, vault, "a.md", []byte("after\n"))
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"blobs", "entries", packsDir, "tmp"} {
		if n := countFiles(t, filepath.Join(s.Dir(), d)); n != 0 {
			t.Errorf("%s/ holds %d files after a call", d, n)
		}
	}
	check := func(s *Store) {
		t.Helper()
		es, err := s.Call("call-1")
		if err != nil || len(es) != 1 || es[0].State != Applied || es[0].Before.SHA256 != sum {
			t.Fatalf("entries: %+v, %v", es, err)
		}
		if got := readBlob(t, s, sum); got != "before\n" {
			t.Fatalf("pre-image %q", got)
		}
		if got := readBlob(t, s, es[0].After.SHA256); got != "after\n" {
			t.Fatalf("after-state %q", got)
		}
	}
	check(s)
	s.Close()
	s2 := openAt(t, vault, state, Options{Recover: true})
	if n := logLen(t, s2); n != 0 {
		t.Fatalf("the log holds %d bytes after a recovering open", n)
	}
	if n := countFiles(t, filepath.Join(s2.Dir(), packsDir)); n != 2 {
		t.Fatalf("packs/ holds %d files, want a pack and its index", n)
	}
	check(s2)
}

// TestPowerCutAfterBegin: Begin's record is flushed, the outcome's is
// not; a power cut that loses the outcome leaves the call pending, with
// its pre-image: whether the cut kept the outcome's frame and not the
// head past it, or the head and only a torn part of the frame.
func TestPowerCutAfterBegin(t *testing.T) {
	for _, kept := range []string{"frame", "head"} {
		t.Run(kept, func(t *testing.T) {
			vault, state, s := logStore(t, Options{})
			sum := put(t, vault, "a.md", []byte("before\n"))
			c, err := s.Begin("call-1", Meta{Tool: "write"}, []Target{{Op: "modify", Path: "a.md"}})
			if err != nil {
				t.Fatal(err)
			}
			synced, err := s.readHead()
			if err != nil {
				t.Fatal(err)
			}
			put(t, vault, "a.md", []byte("after\n"))
			if err := c.Done(); err != nil {
				t.Fatal(err)
			}
			after, _ := s.readHead()
			switch kept {
			case "frame":
				setHead(t, s, synced)
			case "head":
				torn := make([]byte, after.end-synced.end-7)
				if _, err := s.log.WriteAt(torn, synced.end+7); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			s2 := openAt(t, vault, state, Options{Recover: true})
			es, err := s2.Call("call-1")
			if err != nil || len(es) != 1 || es[0].State != Pending {
				t.Fatalf("entries after the cut: %+v, %v", es, err)
			}
			if got := readBlob(t, s2, sum); got != "before\n" {
				t.Fatalf("pre-image %q", got)
			}
		})
	}
}

// TestLogFramesCutShortAreSkipped: a frame cut short (a crash in its
// write, a full disk) or damaged loses only itself; the records after it
// are read.
func TestLogFramesCutShortAreSkipped(t *testing.T) {
	rec := func(id string) []byte {
		return frame(3, fmt.Appendf(nil, `{"id":%q,"entries":[{"path":"x.md","op":"modify"}]}`, id))
	}
	damaged := rec("two")
	damaged[len(damaged)-3] ^= 0xff
	var log []byte
	log = append(log, rec("one")...)
	log = append(log, rec("half")[:20]...)
	log = append(log, damaged...)
	log = append(log, "noise"...)
	log = append(log, frame(2, []byte(`{"id":"sealed","entries":[]}`))...)  // another generation's
	log = append(log, firstFrame([]byte(`{"id":"first","entries":[]}`))...) // another format's
	log = append(log, rec("three")...)
	log = append(log, rec("bad/id")...)
	log = append(log, rec("four")[:frameHead+2]...)
	var ids []string
	for _, r := range first(readLog(log, logView{logFraming, 3})) {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "one three" {
		t.Fatalf("records read: %q, want \"one three\"", got)
	}
}

// TestBodyTooBigIsItsOwnDurableBlob: a body past the record's budget is
// not in the record; it is a blob file of its own, synced before Begin
// returns.
func TestBodyTooBigIsItsOwnDurableBlob(t *testing.T) {
	vault, _, s := logStore(t, Options{})
	big := bytes.Repeat([]byte("0123456789abcdef"), logBudget/16+1)
	bigSum := put(t, vault, "big.bin", big)
	smallSum := put(t, vault, "small.md", []byte("small\n"))
	if _, err := s.Begin("call-1", Meta{Tool: "delete"}, []Target{{Op: "delete", Path: "big.bin"}, {Op: "delete", Path: "small.md"}}); err != nil {
		t.Fatal(err)
	}
	recs, err := s.logged()
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v; want 1", len(recs), err)
	}
	if _, ok := recs[0].Bodies[bigSum]; ok {
		t.Error("the record holds the body past its budget")
	}
	if _, ok := recs[0].Bodies[smallSum]; !ok {
		t.Error("the record lacks the small body")
	}
	if fi, err := os.Stat(s.blobPath(bigSum)); err != nil || fi.Size() != int64(len(big)) {
		t.Fatalf("the big body's blob: %v, %v", fi, err)
	}
	if _, ok := s.synced.Load(bigSum); !ok {
		t.Error("the big body's blob was not synced")
	}
}

// TestLogIsSealedPastItsLimit: a writer alone with the store seals the
// log once it grows past logLimit; every call stays readable, and a body
// kept by many calls is in the packs once.
func TestLogIsSealedPastItsLimit(t *testing.T) {
	defer func(old int64) { logLimit = old }(logLimit)
	logLimit = 2048
	vault, _, s := logStore(t, Options{})
	for i := range 20 {
		put(t, vault, "n.md", bytes.Repeat([]byte{'a' + byte(i%4)}, 500))
		if _, err := s.Begin(fmt.Sprintf("call-%02d", i), Meta{Tool: "write"}, []Target{{Op: "modify", Path: "n.md"}}); err != nil {
			t.Fatal(err)
		}
		if n := logLen(t, s); n > logLimit+4096 {
			t.Fatalf("after call %d the log holds %d bytes, past its limit", i, n)
		}
	}
	st, err := s.Stats()
	if err != nil || st.Calls != 20 || st.Bodies != 4 {
		t.Fatalf("stats %+v, %v; want 20 calls over 4 bodies", st, err)
	}
	packs, _ := s.packs()
	seen := map[string]int{}
	for _, p := range packs {
		for sum := range p.Bodies {
			seen[sum]++
		}
	}
	for sum, n := range seen {
		if n > 1 {
			t.Errorf("body %s is in %d packs", sum[:8], n)
		}
	}
}

// TestSealWaitsForWriters: Begins from many goroutines with seals between
// them lose no record and no body (run with -race).
func TestSealWaitsForWriters(t *testing.T) {
	defer func(old int64) { logLimit = old }(logLimit)
	logLimit = 4096
	vault, state, s := logStore(t, Options{Recover: true})
	sums := map[string]string{}
	for i := range 40 {
		sums[fmt.Sprintf("call-%02d", i)] = put(t, vault, fmt.Sprintf("n%d.md", i), fmt.Appendf(nil, "note %d\n", i))
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if _, err := s.Begin(fmt.Sprintf("call-%02d", i), Meta{Tool: "write", Time: time.Now()}, []Target{{Op: "modify", Path: fmt.Sprintf("n%d.md", i)}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if logLen(t, s) > logLimit+4096 {
		t.Errorf("the log was never sealed: %d bytes", logLen(t, s))
	}
	s.Close()
	s2 := openAt(t, vault, state, Options{Recover: true})
	ids, err := s2.Calls()
	if err != nil || len(ids) != 40 {
		t.Fatalf("%d calls after the seals, want 40 (%v)", len(ids), err)
	}
	for _, id := range ids {
		es, err := s2.Call(id)
		if err != nil || len(es) != 1 || es[0].Before.SHA256 != sums[id] {
			t.Fatalf("%s: %+v, %v", id, es, err)
		}
		if body := readBlob(t, s2, sums[id]); sha([]byte(body)) != sums[id] {
			t.Fatalf("%s: body %q", id, body)
		}
	}
}

// TestGCPrunesInsidePacks: a GC seals the log, drops the pruned calls
// and the bodies only they named from the packs, and keeps the rest
// readable; a damaged pack body is reported, never served.
func TestGCPrunesInsidePacks(t *testing.T) {
	vault, _, s := logStore(t, Options{Keep: time.Hour})
	old := put(t, vault, "a.md", []byte("old body\n"))
	if _, err := s.Begin("call-1", Meta{Tool: "write", Time: time.Now().Add(-2 * time.Hour)}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	kept := put(t, vault, "a.md", []byte("new body\n"))
	if _, err := s.Begin("call-2", Meta{Tool: "write"}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	p, err := s.GC(time.Now())
	if err != nil || p.Calls != 1 || p.Blobs != 1 {
		t.Fatalf("pruned %+v, %v; want one call and its body", p, err)
	}
	if _, err := s.Call("call-1"); err == nil {
		t.Error("the pruned call is still there")
	}
	if _, err := s.Blob(old); err == nil {
		t.Error("the pruned body is still served")
	}
	if got := readBlob(t, s, kept); got != "new body\n" {
		t.Fatalf("kept body %q", got)
	}
	// damage the kept body in its pack: reading it fails, loudly
	packs, _ := s.packs()
	if len(packs) != 1 {
		t.Fatalf("%d packs after the GC, want 1", len(packs))
	}
	f, err := os.OpenFile(s.packPath(packs[0].name, ".pack"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("X"), packs[0].Bodies[kept].Off)
	f.Close()
	if _, err := s.Blob(kept); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("a damaged body was served: %v", err)
	}
}

// TestReadersKeepTheirCopy: the log and packs are parsed once and kept;
// what Call returns is the caller's own, so a change to it (as settling
// does) never reaches the next reader.
func TestReadersKeepTheirCopy(t *testing.T) {
	vault, _, s := logStore(t, Options{})
	put(t, vault, "a.md", []byte("a\n"))
	if _, err := s.Begin("call-1", Meta{Tool: "write"}, []Target{{Op: "modify", Path: "a.md"}}); err != nil {
		t.Fatal(err)
	}
	for _, sealed := range []bool{false, true} {
		if sealed {
			if err := s.exclusive(s.seal); err != nil {
				t.Fatal(err)
			}
		}
		es, err := s.Call("call-1")
		if err != nil {
			t.Fatal(err)
		}
		es[0].State = "tampered"
		again, _ := s.Call("call-1")
		if again[0].State != Pending {
			t.Fatalf("sealed=%v: a caller's change reached the store's copy: %q", sealed, again[0].State)
		}
	}
}

// TestReadLogCallLikeReadLog: the one-call read finds what a parse of the
// whole log finds, the latest record of the id, among ids that share a
// prefix, ids that need escaping, a torn frame and a record whose id is
// not first.
func TestReadLogCallLikeReadLog(t *testing.T) {
	ids := []string{"a", "ab", "a<b>&", "é\"q", "a"}
	var data []byte
	for i, id := range ids {
		p, err := json.Marshal(&logRecord{ID: id, Entries: []Entry{{Path: fmt.Sprintf("n%d.md", i), State: Applied}}})
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, frame(1, p)...)
		if i == 1 {
			data = append(data, frame(1, p)[:9]...) // torn
			data = append(data, frame(0, p)...)     // sealed
		}
	}
	data = append(data, frame(1, []byte(`{"entries":[{"path":"late.md"}],"id":"ab"}`))...)
	v := logView{logFraming, 1}
	for _, id := range append(ids, "zz", "") {
		want, wantOK := logRecord{}, false
		for _, r := range first(readLog(data, v)) {
			if r.ID == id {
				want, wantOK = r, true
			}
		}
		got, ok := readLogCall(data, v, id)
		if ok != wantOK || !reflect.DeepEqual(got.Entries, want.Entries) {
			t.Errorf("%q: got %v %v, want %v %v", id, got.Entries, ok, want.Entries, wantOK)
		}
	}
}

// TestLogFirstFormatIsRead: a log of the first format, appended to from
// the file's start, with records of both its payloads (the whole record
// JSON with bodies in base64, and bodies raw), is sealed into a pack at
// Open, even a hook's, and the log started anew; its entries and
// pre-images read beside the new log's records.
func TestLogFirstFormatIsRead(t *testing.T) {
	vault, state, s := logStore(t, Options{})
	s.Close()
	old := []byte("kept the first way\n")
	rec := &logRecord{ID: "old-1", Entries: []Entry{{ID: "old-1", Op: "modify", Path: "a.md", State: Applied,
		Before: State{Exists: true, Kind: KindFile, Mode: 0o644, SHA256: sha(old), Size: int64(len(old))}}},
		Bodies: map[string][]byte{sha(old): old}}
	payload, err := json.Marshal(rec) // as the log was written at first
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte("kept raw in the first format\n")
	rawRec := &logRecord{ID: "old-2", Entries: []Entry{{ID: "old-2", Op: "modify", Path: "c.md", State: Applied,
		Before: State{Exists: true, Kind: KindFile, Mode: 0o644, SHA256: sha(raw), Size: int64(len(raw))}}},
		Bodies: map[string][]byte{sha(raw): raw}}
	rawPayload, err := rawRec.encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(Dir(state), logName), append(firstFrame(payload), firstFrame(rawPayload)...), 0o600); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(Dir(state)) // a panel's, before any Open
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := ro.Calls(); err != nil || !slices.Equal(ids, []string{"old-1", "old-2"}) {
		t.Fatalf("a reader of the first format finds %v, %v", ids, err)
	}
	s2 := openAt(t, vault, state, Options{})
	if h, err := s2.readHead(); err != nil || !h.ok || h.end != headSize {
		t.Fatalf("the log was not started anew at Open: %+v, %v", h, err)
	}
	newBody := []byte("kept the new way\n")
	put(t, vault, "b.md", newBody)
	c, err := s2.Begin("new-1", Meta{Tool: "write"}, []Target{{Op: "modify", Path: "b.md"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Done(); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		for id, body := range map[string][]byte{"old-1": old, "old-2": raw, "new-1": newBody} {
			es, err := s2.Call(id)
			if err != nil || len(es) != 1 || es[0].Before.SHA256 != sha(body) {
				t.Fatalf("%s: %s: %+v, %v", when, id, es, err)
			}
			if got := readBlob(t, s2, sha(body)); got != string(body) {
				t.Fatalf("%s: %s: pre-image %q", when, id, got)
			}
		}
	}
	check("after Open")
	if ok, err := s2.tryExclusive(s2.seal); !ok || err != nil {
		t.Fatalf("seal: %v %v", ok, err)
	}
	check("in a pack")
}

// TestRecordEncodingRoundTrips: bodies come back as they went, empty ones
// too, and a payload whose raw part is cut or padded is no record.
func TestRecordEncodingRoundTrips(t *testing.T) {
	a, b := []byte("a\x00\xff body"), []byte{}
	r := &logRecord{ID: "c-1", Entries: []Entry{{Path: "x.md", State: Pending}},
		Bodies: map[string][]byte{sha(a): a, sha(b): b}}
	p, err := r.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := decodeRecord(p)
	if !ok || got.ID != "c-1" || len(got.Bodies) != 2 || !bytes.Equal(got.Bodies[sha(a)], a) ||
		got.Bodies[sha(b)] == nil || len(got.Bodies[sha(b)]) != 0 || !reflect.DeepEqual(got.Entries, r.Entries) {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	for _, bad := range [][]byte{p[:len(p)-1], append(bytes.Clone(p), 1, 2, 3)} {
		if _, ok := decodeRecord(bad); ok {
			t.Errorf("payload of %d bytes read as a record", len(bad))
		}
	}
	if _, err := (&logRecord{ID: "c-2", Bodies: map[string][]byte{"not hex": a}}).encode(); err == nil {
		t.Error("a body with a bad name was encoded")
	}
}

func first(recs []logRecord, _ int) []logRecord { return recs }

// TestLogReadOnlyWhatIsNew: a reader that parsed the log parses what was
// appended since, and after a seal emptied the log and it grew again past
// its old size, none of the sealed records comes back as the log's.
func TestLogReadOnlyWhatIsNew(t *testing.T) {
	vault, _, s := logStore(t, Options{})
	put(t, vault, "a.md", []byte("a\n"))
	begin := func(id string) {
		t.Helper()
		c, err := s.Begin(id, Meta{}, []Target{{Op: "modify", Path: "a.md"}})
		if err != nil {
			t.Fatal(err)
		}
		c.Done()
	}
	ids := func() []string {
		t.Helper()
		recs, err := s.logged()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			if !slices.Contains(out, r.ID) {
				out = append(out, r.ID)
			}
		}
		return out
	}
	begin("one")
	if got := ids(); !slices.Equal(got, []string{"one"}) {
		t.Fatalf("log holds %v", got)
	}
	begin("two")
	if got := ids(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("after an append the log holds %v", got)
	}
	if err := s.exclusive(s.seal); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"three", "four", "five"} {
		begin(id)
	}
	if got := ids(); !slices.Equal(got, []string{"three", "four", "five"}) {
		t.Fatalf("after a seal the log holds %v", got)
	}
}
