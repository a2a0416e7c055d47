// Command vaultgate is an MCP server that gives an AI agent file tools over
// a notes vault and decides in code, by zones, what it may do there.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vaultgate/vaultgate/visible"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string // the argument synopsis after the name
	help    string // the paragraph --help shows
	run     func(fs *flag.FlagSet, args []string) int
	flags   func(fs *flag.FlagSet)
	// flagsEnd, if set, is told the positional arguments so far and says
	// whether the rest are arguments whatever they look like (check's
	// bash command: "rm -rf notes" has no flags of vaultgate's).
	flagsEnd func(positional []string) bool
}

var commands []*command

func register(c *command) { commands = append(commands, c) }

// Exit codes: check's are the contract (0 allow, 1 deny, 2 bad usage).
const (
	exitOK    = 0
	exitDeny  = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

var stdout, stderr io.Writer = os.Stdout, os.Stderr

func run(args []string, out, errw io.Writer) int {
	if code, ok := wallHelper(args); ok {
		return code
	}
	stdout, stderr = out, errw
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) > 1 {
			if c := find(args[1]); c != nil {
				return runCommand(c, []string{"--help"})
			}
		}
		if len(args) == 0 {
			mainUsage(stderr)
			return exitUsage
		}
		mainUsage(stdout)
		return exitOK
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(stdout, "vaultgate", version)
		return exitOK
	}
	c := find(args[0])
	if c == nil {
		fmt.Fprintf(stderr, "vaultgate: unknown command %q\n\n", args[0])
		mainUsage(stderr)
		return exitUsage
	}
	return runCommand(c, args[1:])
}

func find(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func runCommand(c *command, args []string) int {
	fs := flag.NewFlagSet("vaultgate "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	if c.flags != nil {
		c.flags(fs)
	}
	// Parse calls Usage on --help and on a bad flag: print it once,
	// after Parse, to stdout for --help and to stderr for a mistake.
	parsing := true
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "usage: vaultgate %s %s\n\n%s\n", c.name, c.usage, strings.TrimSpace(c.help))
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nflags:")
			printFlags(w, fs)
		}
	}
	fs.Usage = func() {
		if !parsing {
			usage(fs.Output())
		}
	}
	// Parse's own words spell a flag with one dash: it says nothing, and
	// its error is told here, as the usage spells flags.
	fs.SetOutput(io.Discard)
	err := fs.Parse(interleave(fs, args, c.flagsEnd))
	parsing = false
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return exitOK
		}
		fmt.Fprintf(stderr, "vaultgate %s: %s\n", c.name, dashes(err.Error()))
		usage(stderr)
		return exitUsage
	}
	return c.run(fs, fs.Args())
}

// interleave lets flags follow positional arguments ("check bash 'ls' --config f"),
// as people type them; "--" still ends the flags.
func interleave(fs *flag.FlagSet, args []string, end func([]string) bool) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if end != nil && end(pos) {
			pos = append(pos, args[i:]...)
			break
		}
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil {
				if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
					continue
				}
				if i+1 == len(args) {
					// A value flag with no value: Parse says so, rather
					// than take the "--" below as its value.
					return flags
				}
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(append(flags, "--"), pos...)
}

// flagName is how the usage lines and help spell a flag: --name, or -n
// for a one-letter one ("-f", "-n N").
func flagName(name string) string {
	if utf8.RuneCountInString(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// printFlags is the one place a command's flags are printed for --help,
// as the flag package's PrintDefaults prints them but with each flag
// spelled as the usage line spells it (flagName), not with Go's single
// dash.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		b.WriteString("  " + flagName(f.Name))
		typ, usage := flag.UnquoteUsage(f)
		if typ != "" {
			b.WriteString(" " + typ)
		}
		if b.Len() <= 4 { // a short flag: its text fits on its line
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !zeroDefault(f) {
			if typ == "string" {
				fmt.Fprintf(&b, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w, b.String())
	})
}

// zeroDefault reports whether f's default is its type's zero value, which
// help leaves unsaid (as PrintDefaults does).
func zeroDefault(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String() || f.DefValue == ""
}

// dashes respells the flags the flag package names in its errors ("-since")
// as the usage spells them ("--since").
func dashes(msg string) string {
	return flagInMessage.ReplaceAllStringFunc(msg, func(m string) string {
		i := strings.IndexByte(m, '-')
		return m[:i] + flagName(m[i+1:])
	})
}

var flagInMessage = regexp.MustCompile(`(^|[ :])-[A-Za-z][A-Za-z0-9-]*`)

func mainUsage(w io.Writer) {
	fmt.Fprint(w, `vaultgate: file tools and a shell for an AI agent over a notes vault,
with every call checked against zones and written to an audit log.

usage: vaultgate COMMAND [flags] [args]

commands:
`)
	sorted := append([]*command(nil), commands...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run "vaultgate COMMAND --help" for a command's flags.
Start here: vaultgate serve --config testdata/vault.toml   (the sample vault)
`)
}

var version = "0.1.0"

// fail prints an error for the person and returns the exit code. What it
// names may be the agent's (a path, a reason), so the message goes through
// the one escape, its own lines kept (visible.Block).
func fail(code int, format string, args ...any) int {
	fmt.Fprintln(stderr, "vaultgate: "+visible.Block.Escape(fmt.Sprintf(format, args...)))
	return code
}
