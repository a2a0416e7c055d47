package history_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/history"
)

// TestDiffTellsEachFileOnce: a call's entries overlap (a new folder, the
// folder in it, the files in both, as a bash commit records them; a
// move's new parent, source and destination), and a file one call took
// from one path to another unchanged is a move. The diff tells each file
// once, and the panel's per-entry diffs share the files out among the
// entries without repeating one.
func TestDiffTellsEachFileOnce(t *testing.T) {
	vault, _, s := vaultStore(t, history.Options{})
	write(t, vault, "notes/projects/2026/plan.md", "plan\n")
	write(t, vault, "a.md", "alpha\n")
	write(t, vault, "c.md", "gamma\n")
	cases := []struct {
		name    string
		targets []history.Target
		change  func()
		want    []string // the diff's lines that tell a file, in order
	}{
		{"a new tree, entry by entry", []history.Target{
			{Op: "create", Path: "t"}, {Op: "create", Path: "t/u"}, {Op: "create", Path: "t/u/1.md"}, {Op: "create", Path: "t/bin"},
		}, func() {
			write(t, vault, "t/u/1.md", "one\n")
			os.WriteFile(filepath.Join(vault, "t/bin"), []byte("\x00\x01"), 0o644)
		}, []string{"Binary file t/bin changed (absent -> 2 bytes)", "+++ b/t/u/1.md"}},
		{"a folder moved into a new folder", []history.Target{
			{Op: "create", Path: "notes/archive"},
			{Op: "move", Path: "notes/projects", To: "notes/archive/projects"},
			{Op: "move", Path: "notes/archive/projects", From: "notes/projects"},
		}, func() {
			os.MkdirAll(filepath.Join(vault, "notes/archive"), 0o755)
			os.Rename(filepath.Join(vault, "notes/projects"), filepath.Join(vault, "notes/archive/projects"))
		}, []string{"moved notes/projects/2026/plan.md -> notes/archive/projects/2026/plan.md"}},
		{"a file renamed and made executable, another copied and changed", []history.Target{
			{Op: "delete", Path: "a.md"}, {Op: "create", Path: "b.md"}, {Op: "delete", Path: "c.md"}, {Op: "create", Path: "d.md"},
		}, func() {
			os.Rename(filepath.Join(vault, "a.md"), filepath.Join(vault, "b.md"))
			os.Chmod(filepath.Join(vault, "b.md"), 0o755)
			os.Remove(filepath.Join(vault, "c.md"))
			write(t, vault, "d.md", "gamma, changed\n")
		}, []string{"moved a.md -> b.md (mode 644 -> 755)", "--- a/c.md", "+++ b/d.md"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := "call-" + string(rune('a'+i))
			ch, err := s.Begin(id, history.Meta{}, c.targets)
			if err != nil {
				t.Fatal(err)
			}
			c.change()
			if err := ch.Done(); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := s.Diff(&b, id); err != nil {
				t.Fatal(err)
			}
			if got := fileLines(b.String()); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("diff tells %q, want %q\n%s", got, c.want, b.String())
			}
			es, err := s.Call(id)
			if err != nil {
				t.Fatal(err)
			}
			texts, errs := s.EntryDiffs(es)
			var told []string
			for i := range texts {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				told = append(told, fileLines(texts[i])...)
			}
			if len(told) != len(c.want) {
				t.Errorf("the entries tell %q, want each of %q once", told, c.want)
			}
		})
	}
}

// fileLines are the lines of a diff that each tell of one file: a moved
// or binary file's line, and a unified diff's "+++" line, or its "---"
// line when the file is gone.
func fileLines(diff string) []string {
	var out []string
	lines := strings.Split(diff, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "moved "), strings.HasPrefix(l, "Binary file "):
			out = append(out, l)
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines):
			if next := lines[i+1]; next == "+++ /dev/null" {
				out = append(out, l)
			} else {
				out = append(out, next)
			}
		}
	}
	return out
}

// TestDiffEscapesWhatThePersonReads: a note's name, its lines and a link's
// target reach the diff escaped (names on one line, lines with their
// newlines kept), a line changed from the text "\x1b" to the escape
// itself still reads as changed, and DiffRaw gives the bytes as they are.
func TestDiffEscapesWhatThePersonReads(t *testing.T) {
	vault, _, s := vaultStore(t, history.Options{})
	name := "notes/\x1b[2J\u202eevil\nforged\r.md"
	write(t, vault, name, "kept\n\\x1b[31m literal\nall good\n")
	targets := []history.Target{{Op: "modify", Path: name}, {Op: "create", Path: "notes/link\x07"}}
	ch, err := s.Begin("hostile", history.Meta{}, targets)
	if err != nil {
		t.Fatal(err)
	}
	write(t, vault, name, "kept\n\x1b[31m literal\nall good\rdeleted \x1b]52;c;cm0gLXJmIH4K\x07\u009b2J\n")
	if err := os.Symlink("\x1b[8mtarget", filepath.Join(vault, "notes/link\x07")); err != nil {
		t.Fatal(err)
	}
	if err := ch.Done(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.Diff(&b, "hostile"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, r := range got {
		if (r < 0x20 && r != '\n') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x202e {
			t.Fatalf("the diff holds %U:\n%q", r, got)
		}
	}
	for _, want := range []string{
		`--- a/notes/\x1b[2J\u202eevil\nforged\r.md`,
		`+++ b/notes/\x1b[2J\u202eevil\nforged\r.md`,
		"\n-\\x1b[31m literal\n-all good\n+\\x1b[31m literal\n+all good\\rdeleted \\x1b]52;c;cm0gLXJmIH4K\\x07\\u009b2J\n",
		`notes/link\x07: absent -> link to \x1b[8mtarget`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks %q:\n%s", want, got)
		}
	}
	b.Reset()
	if err := s.DiffRaw(&b, "hostile"); err != nil {
		t.Fatal(err)
	}
	if raw := b.String(); !strings.Contains(raw, "+++ b/"+name+"\n") || !strings.Contains(raw, "+all good\rdeleted \x1b]52;c;cm0gLXJmIH4K\x07\u009b2J\n") {
		t.Errorf("DiffRaw is not the bytes:\n%q", raw)
	}
}
