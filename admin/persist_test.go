package admin

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vaultgate/vaultgate/audit"
)

// startPanel starts a panel on log keeping its index in file, and waits
// for its start-up load or build.
func startPanel(t *testing.T, log, file string) *Server {
	t.Helper()
	p, err := New(Options{Log: log, Token: testToken, Index: file})
	if err != nil {
		t.Fatal(err)
	}
	<-p.started
	return p
}

// answers is what the page asks for, as the panel answers it.
func answers(t *testing.T, p *Server) []string {
	t.Helper()
	var out []string
	for _, u := range []string{"/api/day", "/api/day?look=any", "/api/records", "/api/records?q=план&order=first",
		"/api/records?decision=failed", "/api/stats", "/api/stats?tool=BASH"} {
		req := httptest.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		p.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", u, rec.Code, rec.Body.String())
		}
		out = append(out, rec.Body.String())
	}
	return out
}

// fresh is the answers of a panel that keeps no index: the truth.
func fresh(t *testing.T, log string) []string {
	t.Helper()
	p := startPanel(t, log, "")
	defer p.Close()
	return answers(t, p)
}

func sameAnswers(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: answer %d differs from a fresh index's:\n got %s\nwant %s", what, i, got[i], want[i])
		}
	}
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestIndexKeptAndReused: a restart takes the kept index and reads none
// of the log again, only what was appended; its answers and its entries
// are a fresh index's.
func TestIndexKeptAndReused(t *testing.T) {
	log, w := testLog(t, lookRecords()...)
	file := filepath.Join(t.TempDir(), "state", "panel", "index")
	p := startPanel(t, log, file)
	if p.ix.scanned != size(t, log) || p.ix.loadErr == nil {
		t.Fatalf("first start read %d of %d bytes (load: %v)", p.ix.scanned, size(t, log), p.ix.loadErr)
	}
	want := answers(t, p)
	p.Close()
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("no index file kept: %v", err)
	}

	p = startPanel(t, log, file)
	if p.ix.loadErr != nil || p.ix.scanned != 0 {
		t.Fatalf("restart: read %d bytes again (load: %v)", p.ix.scanned, p.ix.loadErr)
	}
	sameAnswers(t, "restart", answers(t, p), want)
	p.Close()

	// Appended while the panel was down: only the new lines are read.
	before := size(t, log)
	w.Write(&audit.Record{Session: "s9", Agent: "default", Via: "stdio", Tool: "read", Decision: "allow", Outcome: "ok"})
	w.Write(&audit.Record{Session: "s9", Agent: "default", Via: "stdio", Tool: "delete", Decision: "deny", Rule: "zones", Reason: "план"})
	p = startPanel(t, log, file)
	if p.ix.loadErr != nil || p.ix.scanned != size(t, log)-before {
		t.Fatalf("after appends: read %d bytes, want %d (load: %v)", p.ix.scanned, size(t, log)-before, p.ix.loadErr)
	}
	got := answers(t, p)
	f := startPanel(t, log, "")
	sameAnswers(t, "after appends", got, answers(t, f))
	if !reflect.DeepEqual(p.ix.entries, f.ix.entries) || !bytes.Equal(p.ix.arena, f.ix.arena) ||
		!reflect.DeepEqual(p.ix.strs.names, f.ix.strs.names) || p.ix.lastSeq != f.ix.lastSeq {
		t.Errorf("a kept and extended index is not a fresh one")
	}
	p.Close()
	f.Close()
}

// TestIndexAcrossRotationKept: the file renamed by a rotation is known by
// its identity; only the new files are read.
func TestIndexAcrossRotationKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	w, err := audit.Open(path, audit.Options{MaxSize: 3000})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	recs := lookRecords()
	for i := range recs[:4] {
		w.Write(&recs[i])
	}
	file := filepath.Join(t.TempDir(), "index")
	startPanel(t, path, file).Close()
	for i := range recs[4:] {
		w.Write(&recs[4+i])
	}
	if files, _ := audit.Files(path); len(files) < 2 {
		t.Fatalf("the log did not rotate: %v", files)
	}
	p := startPanel(t, path, file)
	defer p.Close()
	if p.ix.loadErr != nil || p.ix.scanned == 0 {
		t.Fatalf("after a rotation: load %v, read %d", p.ix.loadErr, p.ix.scanned)
	}
	sameAnswers(t, "after a rotation", answers(t, p), fresh(t, path))
}

// TestIndexThrownAway: whatever makes the kept index untrue of the log
// makes the panel read the log again, and answer as a fresh index does.
func TestIndexThrownAway(t *testing.T) {
	for name, spoil := range map[string]func(t *testing.T, log, file string){
		"a line changed in place": func(t *testing.T, log, file string) {
			edit(t, log, []byte("curl reaches"), []byte("wget reaches"))
		},
		"the last line changed": func(t *testing.T, log, file string) {
			// As a rewrite of the chain after an edit would: every later
			// line's prev changes, the last one's among them.
			b, _ := os.ReadFile(log)
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[len(lines)-2] = bytes.Replace(lines[len(lines)-2], []byte(`"prev":"`), []byte(`"prev":"0`), 1)
			os.WriteFile(log, bytes.Join(lines, nil), 0o600)
		},
		"a line appended that does not chain": func(t *testing.T, log, file string) {
			b, _ := os.ReadFile(log)
			lines := bytes.SplitAfter(b, []byte("\n"))
			f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
			f.Write(lines[len(lines)-2])
			f.Close()
		},
		"cut short": func(t *testing.T, log, file string) {
			b, _ := os.ReadFile(log)
			lines := bytes.SplitAfter(b, []byte("\n"))
			os.WriteFile(log, bytes.Join(lines[:len(lines)-3], nil), 0o600)
		},
		"cut short, then appended past its old end": func(t *testing.T, log, file string) {
			b, _ := os.ReadFile(log)
			lines := bytes.SplitAfter(b, []byte("\n"))
			n := len(lines) - 2
			os.WriteFile(log, append(bytes.Join(lines[:n-1], nil), append(lines[n], lines[n]...)...), 0o600)
		},
		"replaced by another log": func(t *testing.T, log, file string) {
			os.Remove(log)
			w, err := audit.Open(log, audit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			recs := lookRecords()
			for i := range recs {
				w.Write(&recs[len(recs)-1-i])
			}
			w.Close()
		},
		"the index file's bytes damaged": func(t *testing.T, log, file string) {
			b, _ := os.ReadFile(file)
			b[len(b)/2] ^= 0x40
			os.WriteFile(file, b, 0o600)
		},
		"the index file cut short": func(t *testing.T, log, file string) {
			b, _ := os.ReadFile(file)
			os.WriteFile(file, b[:len(b)-9], 0o600)
		},
		"the index file empty": func(t *testing.T, log, file string) {
			os.WriteFile(file, nil, 0o600)
		},
		"the index file of another log": func(t *testing.T, log, file string) {
			other, _ := testLog(t, lookRecords()[:2]...)
			os.Remove(file)
			startPanel(t, other, file).Close()
		},
	} {
		t.Run(name, func(t *testing.T) {
			log, w := testLog(t, lookRecords()...)
			w.Close()
			file := filepath.Join(t.TempDir(), "index")
			startPanel(t, log, file).Close()
			spoil(t, log, file)
			p := startPanel(t, log, file)
			defer p.Close()
			if p.ix.loadErr == nil || p.ix.scanned != size(t, log) {
				t.Fatalf("the kept index was taken (read %d of %d bytes)", p.ix.scanned, size(t, log))
			}
			sameAnswers(t, name, answers(t, p), fresh(t, log))
			// And what it keeps now is taken on the next start.
			p.Close()
			q := startPanel(t, log, file)
			defer q.Close()
			if q.ix.loadErr != nil || q.ix.scanned != 0 {
				t.Errorf("the index kept after the rebuild: %v, read %d", q.ix.loadErr, q.ix.scanned)
			}
		})
	}
}

// TestIndexSeesALineChangedUnderIt: a line whose bytes are no longer
// what was indexed is refused when read back, and the index starts over.
func TestIndexSeesALineChangedUnderIt(t *testing.T) {
	log, w := testLog(t, lookRecords()...)
	w.Close()
	p := startPanel(t, log, "")
	defer p.Close()
	want := answers(t, p)
	edit(t, log, []byte("curl reaches"), []byte("wget reaches"))
	req := httptest.NewRequest("GET", "/api/records", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, req)
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("a changed line was shown: %d %s", rec.Code, rec.Body.String())
	}
	got := answers(t, p)
	if got[2] == want[2] || !bytes.Contains([]byte(got[2]), []byte("wget")) {
		t.Errorf("the index did not read the log again")
	}
	sameAnswers(t, "after the change", got, fresh(t, log))
}

// edit replaces old with new, of the same length, in the log's bytes.
func edit(t *testing.T, log string, old, new []byte) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil || !bytes.Contains(b, old) || len(old) != len(new) {
		t.Fatalf("edit: %v", err)
	}
	f, err := os.OpenFile(log, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(new, int64(bytes.Index(b, old)))
	f.Close()
}
