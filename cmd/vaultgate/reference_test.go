package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update", false, "rewrite "+referencePath+" from the commands' own --help")

// referencePath is the command reference, generated from what the
// commands print for --help.
const referencePath = "../../docs/commands.md"

const referenceRegenerate = "go test ./cmd/vaultgate -run TestCommandReference -update"

// TestCommandReference holds docs/commands.md to what the commands say of
// themselves: the file is made, line for line, from `vaultgate --help`
// and each registered command's `vaultgate NAME --help` (its usage line,
// its help and its flags, as printFlags prints them), audit's subcommands
// too. A command, a flag or a word of help changed without the file fails
// here; -update rewrites it.
func TestCommandReference(t *testing.T) {
	want := commandReference(t)
	if *updateReference {
		if err := os.WriteFile(referencePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("%v: make it with `%s`", err, referenceRegenerate)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(l []string) string {
			if i < len(l) {
				return fmt.Sprintf("%q", l[i])
			}
			return "(the end of the file)"
		}
		t.Fatalf("docs/commands.md is not what the commands print for --help: line %d reads\n\t%s\nwhere the commands give\n\t%s\nRegenerate it: %s", i+1, line(gl), line(wl), referenceRegenerate)
	}
}

// helpOf is what `vaultgate ARGS...` prints on stdout, which must be
// all it prints, with exit 0.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errw bytes.Buffer
	if code := run(args, &out, &errw); code != exitOK || errw.Len() > 0 {
		t.Fatalf("vaultgate %s: exit %d, stderr %q", strings.Join(args, " "), code, errw.String())
	}
	return out.String()
}

// commandReference renders docs/commands.md.
func commandReference(t *testing.T) string {
	t.Helper()
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })

	var b strings.Builder
	b.WriteString("# Command reference\n\n")
	b.WriteString("<!-- Generated from each command's own --help by `" + referenceRegenerate + "`;\n")
	b.WriteString("     do not edit: that test fails when this file and the commands disagree. -->\n\n")
	b.WriteString("Each command's `--help`, as it prints it. From inside a vault that\n")
	b.WriteString("`vaultgate init` set up, no command needs `--config`\n")
	b.WriteString("([Which config a command uses](config.md#which-config-a-command-uses));\n")
	b.WriteString("[cli.md](cli.md) says what every command shares.\n\n")
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	for _, c := range sorted {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.name, anchor("vaultgate "+c.name), cell(c.summary))
		if c.name == "audit" {
			for _, s := range auditSubs {
				fmt.Fprintf(&b, "| [`audit %s`](#%s) | %s |\n", s.name, anchor("vaultgate audit "+s.name), cell(subSummary(t, c.help, s.name)))
			}
		}
	}
	b.WriteString("\n## vaultgate --help\n\n")
	block(&b, helpOf(t, "--help"))
	for _, c := range sorted {
		fmt.Fprintf(&b, "\n## vaultgate %s\n\n%s.\n\n", c.name, upperFirst(c.summary))
		block(&b, helpOf(t, c.name, "--help"))
		if c.name == "audit" {
			for _, s := range auditSubs {
				fmt.Fprintf(&b, "\n### vaultgate audit %s\n\n", s.name)
				block(&b, helpOf(t, "audit", s.name, "--help"))
			}
		}
	}
	return b.String()
}

func block(b *strings.Builder, text string) {
	if strings.Contains(text, "```") {
		panic("a command's help holds a code fence")
	}
	b.WriteString("```text\n" + strings.TrimRight(text, "\n") + "\n```\n")
}

// anchor is the fragment GitHub gives a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// subSummary is what audit's own help says of its subcommand name, on
// the line "  NAME   what it does" (a subcommand has no summary field).
func subSummary(t *testing.T, help, name string) string {
	t.Helper()
	for _, l := range strings.Split(help, "\n") {
		if rest, ok := strings.CutPrefix(l, "  "+name+" "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatalf("audit's help has no line \"  %s  …\" for its subcommand", name)
	return ""
}
