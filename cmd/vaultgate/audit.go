package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
)

// logSource is the --audit / --config pair the audit and admin commands
// take: the log itself, or the policy that names it.
type logSource struct {
	file   string
	config string
}

func (s *logSource) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.file, "audit", "", "the audit log (JSON lines)")
	fs.StringVar(&s.config, "config", "", "the policy file (TOML) whose [audit] path to read")
}

func (s *logSource) path() (string, error) {
	switch {
	case s.file != "" && s.config != "":
		return "", errors.New("give --audit or --config, not both")
	case s.file != "":
		return s.file, nil
	case s.config != "":
		cfg, err := config.Load(s.config)
		if err != nil {
			return "", err
		}
		return cfg.AuditPath, nil
	}
	return "", errors.New("give --audit FILE (the log) or --config FILE (the policy that names it)")
}

// filterFlags are the filters tail, stats and the admin panel share.
type filterFlags struct {
	session, tool, decision, path, since string
}

func (f *filterFlags) flags(fs *flag.FlagSet) {
	fs.StringVar(&f.session, "session", "", "only calls of this session id")
	fs.StringVar(&f.tool, "tool", "", "only calls of this tool, in any case (bash matches the hook's Bash)")
	fs.StringVar(&f.decision, "decision", "", "only calls with this decision: allow, deny or error; or failed (allowed, then failed)")
	fs.StringVar(&f.path, "path", "", "only calls whose effect or path argument contains this")
	fs.StringVar(&f.since, "since", "", "only calls since: an RFC 3339 time, a date, today, or a duration back (1h, 2d)")
}

func (f *filterFlags) filter(now time.Time) (audit.Filter, error) {
	switch f.decision {
	case "", "allow", "deny", "error", "failed":
	default:
		return audit.Filter{}, fmt.Errorf("--decision %q: want allow, deny, error or failed", f.decision)
	}
	since, err := audit.ParseSince(f.since, now)
	if err != nil {
		return audit.Filter{}, fmt.Errorf("--%v", err)
	}
	return audit.Filter{Session: f.session, Tool: f.tool, Decision: f.decision, Path: f.path, Since: since}, nil
}

// auditOpts holds every flag of every audit subcommand: the command line
// is parsed once, then each subcommand refuses the flags it does not take.
type auditOpts struct {
	src    logSource
	filter filterFlags
	follow bool
	n      int
	json   bool
	colour string
	help   bool
}

type auditSub struct {
	name, usage, help string
	flags             func(fs *flag.FlagSet, o *auditOpts)
	run               func(o *auditOpts, args []string) int
}

func tailFlags(fs *flag.FlagSet, o *auditOpts) {
	o.src.flags(fs)
	o.filter.flags(fs)
	fs.BoolVar(&o.follow, "follow", false, "keep printing calls as they are appended")
	fs.BoolVar(&o.follow, "f", false, "short for --follow")
	fs.IntVar(&o.n, "n", 20, "how many of the latest matching calls to print first (0: none)")
	fs.BoolVar(&o.json, "json", false, "print each record as a JSON object, one a line")
	fs.StringVar(&o.colour, "colour", "auto", "auto, always or never")
}

func statsFlags(fs *flag.FlagSet, o *auditOpts) {
	o.src.flags(fs)
	o.filter.flags(fs)
	fs.BoolVar(&o.json, "json", false, "print the counts as JSON")
}

func verifyFlags(fs *flag.FlagSet, o *auditOpts) {
	o.src.flags(fs)
	fs.BoolVar(&o.json, "json", false, "print the report as JSON")
}

var auditSubs = []*auditSub{
	{
		name:  "tail",
		usage: "[--audit FILE | --config FILE] [-f] [-n N] [filters] [--json]",
		help: `Prints the latest calls of the log, one a line: time, via, session, tool,
decision, a bash call's command after "$", each effect as "op path zone",
for a deny the rule and the reason, and for an allowed call that failed
why after "FAILED:" (timed out, killed by a signal, its exit code, the
error). With -f it goes on printing calls as they are appended, across
rotations, until interrupted. Every name the agent chose (paths, arguments,
reasons, session ids) is printed with its control characters escaped, so a
file name cannot repaint the terminal; a deny is coloured on a terminal.`,
		flags: tailFlags,
		run:   auditTail,
	},
	{
		name:  "stats",
		usage: "[--audit FILE | --config FILE] [filters] [--json]",
		help: `Counts the calls of the log that pass the filters: allowed, denied, errors
and failed, denies by the rule that denied them, and calls by tool, by
session and by agent. Exits 1 when a line of the log could not be read
(the counts then leave it out; run "vaultgate audit verify").`,
		flags: statsFlags,
		run:   auditStats,
	},
	{
		name:  "verify",
		usage: "[--audit FILE | --config FILE] [--json]",
		help: `Walks the hash chain of the log, rotated files oldest first, and names the
first line that is not what the chain recorded: a line edited, removed or
moved, a torn last line, or, when the head file is there, a tail cut off.

Exit status: 0 the chain is intact, 1 it is broken, 2 bad usage or a log
that could not be read.`,
		flags: verifyFlags,
		run:   auditVerify,
	},
}

func findAuditSub(name string) *auditSub {
	for _, s := range auditSubs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func init() {
	var o auditOpts
	register(&command{
		name:    "audit",
		summary: "read the audit log: tail (and follow) it, count it, verify its chain",
		usage:   "{tail|stats|verify} [--audit FILE | --config FILE] [flags]",
		help: `Reads the audit log, given directly (--audit) or through the policy that
names it (--config):

  tail     the latest calls, readable, and with -f the new ones as they come
  stats    counts by decision, rule, tool and session
  verify   check the hash chain; exit 1 and the first broken line if broken

Filters for tail and stats: --session, --tool, --decision, --path, --since.
Run "vaultgate audit SUBCOMMAND --help" for each one's flags.`,
		flags: func(fs *flag.FlagSet) {
			// The union of the subcommands' flags; each checks its own below.
			tailFlags(fs, &o)
			fs.BoolVar(&o.help, "help", false, "show help")
			fs.BoolVar(&o.help, "h", false, "show help")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) == 0 {
				if o.help {
					fs.SetOutput(stdout)
					fs.Usage()
					return exitOK
				}
				return fail(exitUsage, "audit needs a subcommand: tail, stats or verify (see --help)")
			}
			sub := findAuditSub(args[0])
			if sub == nil {
				return fail(exitUsage, "audit has no subcommand %q: tail, stats or verify", args[0])
			}
			own := flag.NewFlagSet("vaultgate audit "+sub.name, flag.ContinueOnError)
			var scratch auditOpts
			sub.flags(own, &scratch)
			if o.help {
				fmt.Fprintf(stdout, "usage: vaultgate audit %s %s\n\n%s\n\nflags:\n", sub.name, sub.usage, sub.help)
				own.SetOutput(stdout)
				own.PrintDefaults()
				return exitOK
			}
			bad := ""
			fs.Visit(func(f *flag.Flag) {
				if own.Lookup(f.Name) == nil && bad == "" {
					bad = f.Name
				}
			})
			if bad != "" {
				return fail(exitUsage, "audit %s has no flag -%s (see vaultgate audit %s --help)", sub.name, bad, sub.name)
			}
			return sub.run(&o, args[1:])
		},
	})
}

func auditTail(o *auditOpts, args []string) int {
	if len(args) > 0 {
		return fail(exitUsage, "audit tail takes no arguments, only flags")
	}
	if o.n < 0 {
		return fail(exitUsage, "-n %d: want 0 or more", o.n)
	}
	if o.colour != "auto" && o.colour != "always" && o.colour != "never" {
		return fail(exitUsage, "--colour %q: want auto, always or never", o.colour)
	}
	path, err := o.src.path()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	f, err := o.filter.filter(time.Now())
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	p := &callPrinter{w: stdout, json: o.json, colour: o.colour == "always" ||
		(o.colour == "auto" && stdout == io.Writer(os.Stdout) && isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "")}

	// The latest n matching records, and the seq to follow on from.
	var last []audit.Record
	var lastSeq int64
	err = audit.Read(path, func(r audit.Record) error {
		lastSeq = max(lastSeq, r.Seq)
		if o.n > 0 && f.Match(&r) {
			if len(last) == o.n {
				last = append(last[:0], last[1:]...)
			}
			last = append(last, r)
		}
		return nil
	})
	var lineErr *audit.LineError
	switch {
	case errors.As(err, &lineErr):
		defer fmt.Fprintf(stderr, "vaultgate: %s (skipped; run vaultgate audit verify)\n", audit.EscapeControl(err.Error()))
	case errors.Is(err, os.ErrNotExist) && o.follow:
		// Nothing yet: wait for the first line.
	case err != nil:
		return fail(exitUsage, "%s", audit.EscapeControl(err.Error()))
	}
	for i := range last {
		if err := p.print(&last[i]); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	if !o.follow {
		return exitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = audit.Follow(ctx, path, lastSeq+1, func(r audit.Record) error {
		if !f.Match(&r) {
			return nil
		}
		return p.print(&r)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(exitUsage, "%s", audit.EscapeControl(err.Error()))
	}
	return exitOK
}

// callPrinter prints records for a person, or as JSON.
type callPrinter struct {
	w      io.Writer
	json   bool
	colour bool
}

const (
	colourDeny  = "\x1b[1;31m"
	colourError = "\x1b[1;33m"
	colourAllow = "\x1b[32m"
	colourDim   = "\x1b[2m"
	colourReset = "\x1b[0m"
)

func (p *callPrinter) print(r *audit.Record) error {
	if p.json {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // a terminal, not a web page: keep <img> readable
		if err := enc.Encode(r); err != nil {
			return err
		}
		_, err := fmt.Fprintln(p.w, safeJSON([]byte(strings.TrimSuffix(b.String(), "\n"))))
		return err
	}
	_, err := io.WriteString(p.w, p.line(r)+"\n")
	return err
}

// line is one call on one line. Every field from the log goes through
// EscapeControl, the tool and rule names too: an unknown tool's name is
// the agent's choice as well.
func (p *callPrinter) line(r *audit.Record) string {
	esc := audit.EscapeControl
	paint := func(code, s string) string {
		if p.colour {
			return code + s + colourReset
		}
		return s
	}
	var b strings.Builder
	ts := "-"
	if !r.Time.IsZero() {
		ts = r.Time.Local().Format("2006-01-02 15:04:05")
	}
	b.WriteString(paint(colourDim, ts))
	tool := r.Tool
	if r.Event != "" {
		// the hook's line after Claude Code ran the tool, beside the one before
		tool += " (" + r.Event + ")"
	}
	fmt.Fprintf(&b, "  %-5s %s  %-7s ", esc(r.Via), esc(cmp.Or(r.Session, "-")), esc(tool))
	switch r.Decision {
	case "allow":
		b.WriteString(paint(colourAllow, "allow"))
	case "deny":
		b.WriteString(paint(colourDeny, "DENY "))
	case "error":
		b.WriteString(paint(colourError, "ERROR"))
	default:
		b.WriteString(paint(colourError, esc(r.Decision)))
	}
	if c := r.Command(); c != "" {
		b.WriteString("  $ " + esc(c))
	}
	var effects []string
	for _, e := range r.Effects {
		effects = append(effects, esc(e.Op)+" "+esc(e.Path)+" "+esc(cmp.Or(e.Zone, "-")))
	}
	if len(effects) > 0 {
		b.WriteString("  " + strings.Join(effects, ", "))
	}
	// What a walled bash call really changed: * marks what the analysis
	// did not predict, ! what the rules refused.
	var real []string
	for _, e := range r.Real {
		mark := ""
		if e.Unpredicted {
			mark += "*"
		}
		if e.Refused {
			mark += "!"
		}
		real = append(real, esc(e.Op)+" "+esc(e.Path)+" "+esc(cmp.Or(e.Zone, "-"))+mark)
	}
	if len(real) > 0 {
		b.WriteString("  real: " + strings.Join(real, ", "))
	}
	if r.Decision == "deny" {
		b.WriteString("  " + paint(colourDeny, "["+esc(cmp.Or(r.Rule, audit.NoRule))+"]") + " " + esc(r.Reason))
	}
	if why := r.FailedWhy(); why != "" {
		b.WriteString("  " + paint(colourError, "FAILED:") + " " + esc(why))
	} else if r.Error != "" {
		b.WriteString("  " + paint(colourError, "error:") + " " + esc(r.Error))
	}
	return b.String()
}

func auditStats(o *auditOpts, args []string) int {
	if len(args) > 0 {
		return fail(exitUsage, "audit stats takes no arguments, only flags")
	}
	path, err := o.src.path()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	f, err := o.filter.filter(time.Now())
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	s, err := audit.SummariseFile(path, f)
	var lineErr *audit.LineError
	if err != nil && !errors.As(err, &lineErr) {
		return fail(exitUsage, "%s", audit.EscapeControl(err.Error()))
	}
	if o.json {
		b, jerr := json.MarshalIndent(s, "", "  ")
		if jerr != nil {
			return fail(exitUsage, "%v", jerr)
		}
		fmt.Fprintln(stdout, safeJSON(b))
	} else {
		printStats(stdout, &s)
	}
	if lineErr != nil {
		return fail(exitDeny, "%s (not counted; run vaultgate audit verify)", audit.EscapeControl(lineErr.Error()))
	}
	return exitOK
}

// safeJSON is JSON from encoding/json made safe for a terminal. The encoder
// already escapes C0 controls inside strings; EscapeControl catches the C1
// and bidi characters it lets through, as \uXXXX escapes, so the text stays
// valid JSON. Newlines outside strings (indentation) are kept.
func safeJSON(b []byte) string {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		lines[i] = audit.EscapeControl(l)
	}
	return strings.Join(lines, "\n")
}

func printStats(w io.Writer, s *audit.Stats) {
	esc := audit.EscapeControl
	fmt.Fprintf(w, "calls:   %d (allow %d, deny %d, error %d; failed after allow %d)\n",
		s.Calls, s.ByDecision["allow"], s.Denies, s.Errors, s.Failed)
	if !s.First.IsZero() {
		fmt.Fprintf(w, "from:    %s\nto:      %s\n", s.First.Local().Format(time.RFC3339), s.Last.Local().Format(time.RFC3339))
	}
	fmt.Fprintln(w, "\ndenies by rule:")
	if len(s.ByRule) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, k := range sortedKeys(s.ByRule, func(n int) int { return n }) {
		fmt.Fprintf(w, "  %-24s %6d\n", esc(k), s.ByRule[k])
	}
	table := func(title string, m map[string]*audit.Count) {
		fmt.Fprintf(w, "\n%-26s %6s %6s %6s %6s\n", title, "calls", "denies", "errors", "failed")
		for _, k := range sortedKeys(m, func(c *audit.Count) int { return c.Calls }) {
			c := m[k]
			fmt.Fprintf(w, "  %-24s %6d %6d %6d %6d\n", esc(cmp.Or(k, "-")), c.Calls, c.Denies, c.Errors, c.Failed)
		}
	}
	table("by tool:", s.ByTool)
	table("by session:", s.BySession)
	if len(s.ByAgent) > 1 {
		table("by agent:", s.ByAgent)
	}
}

// sortedKeys orders a count's keys most first, then by name.
func sortedKeys[V any](m map[string]V, n func(V) int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(n(m[b]), n(m[a])), cmp.Compare(a, b))
	})
	return keys
}

func auditVerify(o *auditOpts, args []string) int {
	if len(args) > 0 {
		return fail(exitUsage, "audit verify takes no arguments, only flags")
	}
	path, err := o.src.path()
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	rep, err := audit.Verify(path)
	if err != nil {
		return fail(exitUsage, "%s", audit.EscapeControl(err.Error()))
	}
	if o.json {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, safeJSON(b))
	} else {
		fmt.Fprintln(stdout, audit.EscapeControl(rep.String()))
	}
	if !rep.OK {
		return exitDeny
	}
	return exitOK
}
