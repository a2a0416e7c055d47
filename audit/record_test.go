package audit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerpt(t *testing.T) {
	if got := Excerpt("short\n"); got != "short\n" {
		t.Errorf("a short output changed: %q", got)
	}
	long := strings.Repeat("я", OutputExcerpt) // two bytes a letter
	got := Excerpt(long)
	head, note, ok := strings.Cut(got, "\n… ")
	if !ok || len(head) > OutputExcerpt || !utf8.ValidString(head) || note != "1024 more bytes" {
		t.Errorf("excerpt of %d bytes: head %d bytes, valid %v, note %q", len(long), len(head), utf8.ValidString(head), note)
	}
}

func TestFailedWhy(t *testing.T) {
	code := func(n int) *int { return &n }
	for _, c := range []struct {
		r    Record
		want string
	}{
		{Record{Decision: "allow", Outcome: "ok", ExitCode: code(0)}, ""},
		{Record{Decision: "deny", Rule: "zones"}, ""},
		{Record{Decision: "error", Error: "unknown tool"}, ""},
		{Record{Decision: "allow", Outcome: "failed", ExitCode: code(124), TimedOut: true}, "timed out, exit code 124"},
		{Record{Decision: "allow", Outcome: "failed", ExitCode: code(137), Signal: 9}, "killed by signal 9, exit code 137"},
		{Record{Decision: "allow", Outcome: "failed", ExitCode: code(2)}, "exit code 2"},
		{Record{Decision: "allow", Outcome: "failed", Error: "no such file"}, "no such file"},
		{Record{Decision: "allow", Outcome: "failed"}, "failed"},
	} {
		if got := c.r.FailedWhy(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
}
