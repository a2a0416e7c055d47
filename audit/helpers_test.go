package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func testPath(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "state", "audit.jsonl")
}

// sample is a record like the server writes: a deny of a delete.
func sample(i int) *Record {
	code := i % 3
	return &Record{
		Time:     time.Date(2026, 3, 1, 12, 0, 0, i*1000, time.UTC),
		Session:  fmt.Sprintf("s%d", i%4),
		Agent:    "claude",
		Via:      "stdio",
		Tool:     []string{"read", "write", "delete", "bash"}[i%4],
		Args:     map[string]any{"path": fmt.Sprintf("мета/%d.md", i), "content": Body("secret body")},
		Effects:  []Effect{{Op: "delete", Path: fmt.Sprintf("мета/%d.md", i), Zone: "protected"}},
		Decision: []Decision{Allow, Deny, Allow, Error}[i%4],
		Rule:     map[bool]string{true: "zones"}[i%4 == 1],
		Reason:   map[bool]string{true: `delete "мета/x": zone protected (read only)`}[i%4 == 1],
		Outcome:  map[bool]Outcome{true: OK}[i%4 == 0],
		ExitCode: map[bool]*int{true: &code}[i%4 == 3],
	}
}

func writeN(t testing.TB, path string, opt Options, from, n int) {
	t.Helper()
	w, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := from; i < from+n; i++ {
		if err := w.Write(sample(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte{'\n'})
}

func writeLines(t testing.TB, path string, lines [][]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func verifyOK(t testing.TB, path string, lines int) *VerifyReport {
	t.Helper()
	rep, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Lines != lines {
		t.Fatalf("Verify = %+v, want OK with %d lines", rep, lines)
	}
	return rep
}

func readAll(t testing.TB, path string) []Record {
	t.Helper()
	var rs []Record
	if err := Read(path, func(r Record) error { rs = append(rs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return rs
}
