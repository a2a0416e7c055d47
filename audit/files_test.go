package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLinesBackward(t *testing.T) {
	for _, text := range []string{
		"", "\n", "a", "a\n", "a\nb\n", "a\nbb\nccc\n", "a\nbb\nccc", "\n\nxy\n",
		strings.Repeat("0123456789\n", 5) + "tail",
		"one very long line that spans many chunks of the reader\nshort\n",
	} {
		for _, chunk := range []int64{1, 2, 3, 7, 64 << 10} {
			var got []string
			err := linesBackward(strings.NewReader(text), int64(len(text)), chunk, func(l []byte) bool {
				got = append(got, string(l))
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			// The lines with a newline, last first.
			var want []string
			if i := strings.LastIndexByte(text, '\n'); i >= 0 {
				parts := strings.Split(text[:i], "\n")
				for j := len(parts) - 1; j >= 0; j-- {
					want = append(want, parts[j])
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("linesBackward(%q, chunk %d) = %q, want %q", text, chunk, got, want)
			}
		}
	}
}

func TestLastLinkSkipsDamage(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 3)
	lines := readLines(t, path)
	want := lineHash(bytes.TrimSuffix(lines[2], []byte("\n")))
	b := append(bytes.Join(lines, nil), "garbage\n{\"torn"...)
	l, ok, err := lastLink(bytes.NewReader(b), int64(len(b)))
	if err != nil || !ok || l.Seq != 3 || l.Hash != want {
		t.Fatalf("lastLink = %+v %v %v", l, ok, err)
	}
}

func TestRecoverGarbledHead(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 4)
	os.WriteFile(headPath(path), []byte("not a head"), 0o600)
	writeN(t, path, Options{}, 4, 2)
	verifyOK(t, path, 6)
}

func TestHeadFixedWidth(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	for _, h := range []head{{}, {Lines: math.MaxInt64, Hash: strings.Repeat("f", 64), Size: math.MaxInt64}, {Lines: 3, Hash: strings.Repeat("a", 64), Size: 900}} {
		if err := writeHead(path, h, false); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(headPath(path))
		if len(b) != headWidth {
			t.Errorf("head is %d bytes: %q", len(b), b)
		}
		got, err := readHead(path)
		if err != nil || *got != h {
			t.Errorf("readHead = %+v, %v; want %+v", got, err, h)
		}
	}
}

func TestUnencodableArgs(t *testing.T) {
	path := testPath(t)
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(&Record{Tool: "x", Args: map[string]any{"n": math.NaN()}}); err == nil {
		t.Fatal("Write of NaN args returned nil")
	}
	if err := w.Write(&Record{Tool: "x", DurationMS: math.Inf(1)}); err != nil {
		t.Fatal(err)
	}
	verifyOK(t, path, 1)
}

// A writer leaves beside the log only the log, its head and its lock: the
// head's temp file goes when the writer closes.
func TestCloseLeavesNoTemp(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 3)
	writeN(t, path, Options{}, 3, 2)
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"audit.jsonl", "audit.jsonl.head", "audit.jsonl.lock"}; !slices.Equal(names, want) {
		t.Errorf("state folder holds %q, want %q", names, want)
	}
	verifyOK(t, path, 5)
}

// A head whose bytes no longer match its checksum (a torn write, an edit
// that kept the JSON valid) is no witness: verify names it, and the next
// writer goes on from the log and writes a good head.
func TestHeadChecksum(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 3)
	b, _ := os.ReadFile(headPath(path))
	edited := bytes.Replace(b, []byte(`"lines":3`), []byte(`"lines":2`), 1)
	if bytes.Equal(edited, b) {
		t.Fatalf("head %q has no lines field to edit", b)
	}
	os.WriteFile(headPath(path), edited, 0o600)
	if _, err := readHead(path); err == nil {
		t.Fatal("readHead accepted a head whose checksum does not match")
	}
	rep, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Fatalf("verify passed a damaged head: %+v", rep)
	}
	writeN(t, path, Options{}, 3, 1)
	verifyOK(t, path, 4)
}

// A head written before the checksum existed (by a rename, never torn) is
// still read.
func TestHeadWithoutChecksum(t *testing.T) {
	path := testPath(t)
	writeN(t, path, Options{}, 0, 2)
	h, err := readHead(path)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := json.Marshal(h)
	os.WriteFile(headPath(path), append(old, '\n'), 0o600)
	got, err := readHead(path)
	if err != nil || *got != *h {
		t.Fatalf("readHead of a head without crc = %+v, %v; want %+v", got, err, h)
	}
	verifyOK(t, path, 2)
}

// A writer keeps its head file open; when the name leads elsewhere (the
// head removed, or swapped in by another writer's rename), it writes the
// head that is there now, not the one it has open.
func TestHeadReplacedUnderWriter(t *testing.T) {
	for _, how := range []string{"removed", "renamed over"} {
		t.Run(how, func(t *testing.T) {
			path := testPath(t)
			w, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i := range 2 {
				if err := w.Write(sample(i)); err != nil {
					t.Fatal(err)
				}
			}
			if how == "removed" {
				os.Remove(headPath(path))
			} else {
				b, _ := os.ReadFile(headPath(path))
				os.WriteFile(headPath(path)+".new", b, 0o600)
				os.Rename(headPath(path)+".new", headPath(path))
			}
			if err := w.Write(sample(2)); err != nil {
				t.Fatal(err)
			}
			h, err := readHead(path)
			if err != nil || h == nil || h.Lines != 3 {
				t.Fatalf("head after the write = %+v, %v; want 3 lines", h, err)
			}
			verifyOK(t, path, 3)
		})
	}
}
