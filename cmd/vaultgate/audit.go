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
	"unicode"

	"golang.org/x/text/width"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/visible"
)

// logSource is the --audit / --config pair the audit and admin commands
// take: the log itself, or the policy that names it.
type logSource struct {
	file   string
	config string
}

func (s *logSource) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.file, "audit", "", "the audit log (JSON lines)")
	fs.StringVar(&s.config, "config", "", "the policy file (TOML) whose [audit] path to read; default: $"+configEnv+", else the one vaultgate init set up for the vault that holds the current folder")
}

// path is the log to read: --audit's, else the config's [audit] path,
// the config found as every command finds it (source). Found so, s.config
// then names it.
func (s *logSource) path() (string, error) {
	switch {
	case s.file != "" && s.config != "":
		return "", errors.New("give --audit or --config, not both")
	case s.file != "":
		return s.file, nil
	}
	src := source{config: s.config}
	cfg, err := src.load()
	if err != nil {
		return "", err
	}
	s.config = src.config
	return cfg.AuditPath, nil
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
	lines  bool
	raw    bool
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
	fs.BoolVar(&o.json, "json", false, "print each call as a JSON object, one a line (with --lines, each line as the log holds it)")
	fs.BoolVar(&o.lines, "lines", false, "print every line of the log on its own, exec's and the hook's after line too, not joined into the call they continue")
	fs.BoolVar(&o.raw, "raw", false, "print what the agent chose as it is, terminal controls and all")
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
		usage: "[--audit FILE | --config FILE] [-f] [-n N] [filters] [--json] [--lines] [--raw]",
		help: `Prints the latest calls of the log, one a line: time, via, session, tool,
decision, a bash call's command after "$", each effect as "op path zone",
for a deny the rule and the reason, and for an allowed call that failed
why after "FAILED:" (timed out, killed by a signal, its exit code, the
error). With -f it goes on printing calls as they are appended, across
rotations, until interrupted. Every name the agent chose (paths, arguments,
reasons, session ids) is printed with its control characters escaped, so a
file name cannot repaint the terminal (--raw prints them as they are); a
deny is coloured on a terminal.

One call is one call, however many lines it left: Claude Code's Bash is
the hook's line (the judgement), then, indented under it after "↳ run",
the line of the vaultgate exec that ran it (its exit code, what it really
changed, why it failed); the hook's line after Claude Code ran a tool is
folded into the call and shown, after "↳ after", only when it says
something went wrong. With -f a run is printed when its line comes; when
other calls came in between, it names the call it belongs to (tool, time,
session). Filters apply to whole calls: --decision failed finds a Bash
whose run failed, and with -f prints the call when that line comes.
--json prints each call as one object: the line that judged it, with
exec's line under "exec" and the after line under "after"; with -f a call
is printed again, whole, when a later line joins it (the object with the
same id replaces the one before). --lines prints the log's lines as they
are, one each, unjoined (and with --json as the log holds them).`,
		flags: tailFlags,
		run:   auditTail,
	},
	{
		name:  "stats",
		usage: "[--audit FILE | --config FILE] [filters] [--json]",
		help: `Counts the calls of the log that pass the filters: allowed, denied, errors
and failed, denies by the rule that denied them, and calls by tool, by
session and by agent. A call is counted once, however many lines it left:
Claude Code's Bash counts as one Bash call, with the hook's decision and
the outcome of the vaultgate exec that ran it; the hook's line after a
tool ran adds to its call, not to the count. These are the numbers the
panel shows for the same log. Exits 1 when a line of the log could not be read
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
				printFlags(stdout, own)
				return exitOK
			}
			bad := ""
			fs.Visit(func(f *flag.Flag) {
				if own.Lookup(f.Name) == nil && bad == "" {
					bad = f.Name
				}
			})
			if bad != "" {
				return fail(exitUsage, "audit %s has no flag %s (see vaultgate audit %s --help)", sub.name, flagName(bad), sub.name)
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
	p := &callPrinter{w: stdout, json: o.json, raw: o.raw, colour: o.colour == "always" ||
		(o.colour == "auto" && stdout == io.Writer(os.Stdout) && isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "")}

	if code, done := noCallsYet(&o.src, path, o.follow); done {
		return code
	}
	if o.lines {
		return tailLines(o, p, path, f)
	}
	return tailCalls(o, p, path, f)
}

// noCallsYet answers for a vault that has no audit log yet: its config
// names the log its first call makes, so there is nothing to show and
// nothing wrong (exit 0), which it says on stderr. A log --audit names
// that is not there is a mistake, and tail -f waits for the first line:
// for those it does not answer.
func noCallsYet(s *logSource, path string, follow bool) (int, bool) {
	if s.file != "" || follow {
		return 0, false
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return 0, false
	}
	fmt.Fprintf(stderr, "vaultgate: no calls yet: the audit log is made at the first call (%s)\n", visible.Line.Escape(path))
	return exitOK, true
}

// tailCalls prints the latest calls, joined (audit.Joiner), and with -f
// follows on with the same Joiner, so that a run whose call was printed
// before it is joined to it.
func tailCalls(o *auditOpts, p *callPrinter, path string, f audit.Filter) int {
	var j audit.Joiner
	var last []*audit.Call // the latest n matching calls
	var lastSeq int64
	err := j.Read(path, func(c *audit.Call) error {
		for _, l := range c.Lines() {
			lastSeq = max(lastSeq, l.Seq)
		}
		if o.n > 0 && f.MatchCall(c) {
			if len(last) == o.n {
				last = append(last[:0], last[1:]...)
			}
			last = append(last, c)
		}
		return nil
	})
	if code, ok := tailReadErr(err, o.follow); !ok {
		return code
	}
	t := &tailer{p: p, f: f, shown: map[*audit.Call]bool{}}
	for _, c := range last {
		if err := t.show(c); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	if !o.follow {
		return exitOK
	}
	return tailFollow(path, lastSeq, func(r audit.Record) error {
		return t.add(j.Add(r))
	})
}

// tailLines is tail with --lines: every line on its own, as written.
func tailLines(o *auditOpts, p *callPrinter, path string, f audit.Filter) int {
	// The latest n matching records, and the seq to follow on from.
	var last []audit.Record
	var lastSeq int64
	err := audit.Read(path, func(r audit.Record) error {
		lastSeq = max(lastSeq, r.Seq)
		if o.n > 0 && f.Match(&r) {
			if len(last) == o.n {
				last = append(last[:0], last[1:]...)
			}
			last = append(last, r)
		}
		return nil
	})
	if code, ok := tailReadErr(err, o.follow); !ok {
		return code
	}
	for i := range last {
		if err := p.print(&last[i]); err != nil {
			return fail(exitUsage, "%v", err)
		}
	}
	if !o.follow {
		return exitOK
	}
	return tailFollow(path, lastSeq, func(r audit.Record) error {
		if !f.Match(&r) {
			return nil
		}
		return p.print(&r)
	})
}

// tailReadErr deals with what reading the log returned: a damaged line is
// told on stderr and skipped; no log yet is fine with -f.
// It returns false, with the exit code, when tail must stop.
func tailReadErr(err error, follow bool) (int, bool) {
	var lineErr *audit.LineError
	switch {
	case errors.As(err, &lineErr):
		fmt.Fprintf(stderr, "vaultgate: %s (skipped; run vaultgate audit verify)\n", visible.Line.Escape(err.Error()))
	case errors.Is(err, os.ErrNotExist) && follow:
		// Nothing yet: wait for the first line.
	case err != nil:
		return fail(exitUsage, "%s", visible.Line.Escape(err.Error())), false
	}
	return 0, true
}

// tailFollow follows the log from the line after lastSeq until interrupted.
func tailFollow(path string, lastSeq int64, fn func(audit.Record) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := audit.Follow(ctx, path, lastSeq+1, fn)
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(exitUsage, "%s", visible.Line.Escape(err.Error()))
	}
	return exitOK
}

// tailer prints calls as their lines come: a call when it first matches
// the filter (whole, as it stands), and each later line of a call it
// printed. A call matches the more the more of it has come (a run that
// failed, a path it changed), never the less, so a printed call stays
// printed.
type tailer struct {
	p     *callPrinter
	f     audit.Filter
	shown map[*audit.Call]bool // printed calls a line may still join
	swept int                  // len(shown) after the last sweep
	last  *audit.Call          // the call printed last
}

// show prints a whole call.
func (t *tailer) show(c *audit.Call) error {
	if c.Open() {
		t.shown[c] = true
	}
	t.last = c
	return t.p.printCall(c)
}

// add takes one line as the Joiner joined it.
func (t *tailer) add(c *audit.Call, part audit.Part) error {
	if len(t.shown) > 2*t.swept+64 {
		for k := range t.shown {
			if !k.Open() {
				delete(t.shown, k)
			}
		}
		t.swept = len(t.shown)
	}
	switch {
	case t.shown[c]:
		if !c.Open() {
			delete(t.shown, c)
		}
		ref := t.last != c
		if !t.p.json && part == audit.PartAfter && !afterNotable(c.After) {
			return nil
		}
		t.last = c
		return t.p.printPart(c, part, ref)
	case t.f.MatchCall(c):
		return t.show(c)
	}
	return nil
}

// callPrinter prints records for a person, or as JSON. Every field from
// the log goes through the one escape (visible.Line, or visible.JSON),
// unless raw (--raw).
type callPrinter struct {
	w      io.Writer
	json   bool
	raw    bool
	colour bool
}

// The colours of tail, as SGR parameters (visible.Paint).
const (
	colourDeny  = "1;31"
	colourError = "1;33"
	colourAllow = "32"
	colourDim   = "2"
)

// print prints one line of the log on its own (tail --lines).
func (p *callPrinter) print(r *audit.Record) error {
	if p.json {
		return p.printJSON(r)
	}
	_, err := io.WriteString(p.w, p.line(r)+"\n")
	return err
}

// printCall prints a whole call: as JSON, one object; for a person, its
// line, then its run and a notable after line, indented under it.
func (p *callPrinter) printCall(c *audit.Call) error {
	if p.json {
		return p.printJSON(c)
	}
	b := p.line(&c.Record) + "\n"
	if c.Exec != nil {
		b += p.partLine(c, audit.PartExec, false) + "\n"
	}
	if c.After != nil && afterNotable(c.After) {
		b += p.partLine(c, audit.PartAfter, false) + "\n"
	}
	_, err := io.WriteString(p.w, b)
	return err
}

// printPart prints the line that just joined a printed call: as JSON, the
// whole call again; for a person, the part's line, naming its call when
// ref (other lines were printed since the call's).
func (p *callPrinter) printPart(c *audit.Call, part audit.Part, ref bool) error {
	if p.json {
		return p.printJSON(c)
	}
	_, err := io.WriteString(p.w, p.partLine(c, part, ref)+"\n")
	return err
}

func (p *callPrinter) printJSON(v any) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a terminal, not a web page: keep <img> readable
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := fmt.Fprintln(p.w, visible.JSON.Unless(p.raw).Escape(strings.TrimSuffix(b.String(), "\n")))
	return err
}

// afterNotable reports whether the hook's after line says more than that
// the tool ran: a person sees it only then.
func afterNotable(a *audit.Record) bool {
	return a.Decision != "allow" || a.Failed() || a.Rule != "" || a.Error != ""
}

// partLine is a line that continues a call, indented under it: "↳ run" for
// exec's (via, its decision when not allow, its exit code, what it really
// changed, why it failed), "↳ after" for the hook's after line. With ref
// it names the call: its tool, time and session.
func (p *callPrinter) partLine(c *audit.Call, part audit.Part, ref bool) string {
	esc := visible.Line.Unless(p.raw).Escape
	r, label := c.Exec, "run"
	if part == audit.PartAfter {
		r, label = c.After, "after"
	}
	var b strings.Builder
	b.WriteString("  ↳ " + label)
	if ref {
		ts := "-"
		if !c.Time.IsZero() {
			ts = c.Time.Local().Format("15:04:05")
		}
		fmt.Fprintf(&b, " of %s %s %s", esc(c.Tool), ts, esc(cmp.Or(c.Session, "-")))
	}
	fmt.Fprintf(&b, "  %-5s", esc(string(r.Via)))
	if r.Decision != "allow" {
		b.WriteString(" " + p.decision(r.Decision))
	}
	if r.ExitCode != nil && !r.Failed() {
		fmt.Fprintf(&b, "  exit %d", *r.ExitCode)
	}
	p.tailOf(&b, r)
	return b.String()
}

// decision is a line's decision as tail prints it, painted.
func (p *callPrinter) decision(d audit.Decision) string {
	switch d {
	case audit.Allow:
		return p.paint(colourAllow, "allow")
	case audit.Deny:
		return p.paint(colourDeny, "DENY ")
	case audit.Error:
		return p.paint(colourError, "ERROR")
	}
	return p.paint(colourError, visible.Line.Unless(p.raw).Escape(string(d)))
}

func (p *callPrinter) paint(sgr, s string) string {
	if p.colour {
		return visible.Paint(sgr, s)
	}
	return s
}

// tailOf writes the end of a line: what bash really changed, a deny's
// rule and reason, why an allowed call failed, or its error.
func (p *callPrinter) tailOf(b *strings.Builder, r *audit.Record) {
	esc := visible.Line.Unless(p.raw).Escape
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
		b.WriteString("  " + p.paint(colourDeny, "["+esc(cmp.Or(r.Rule, audit.NoRule))+"]") + " " + esc(r.Reason))
	}
	if why := r.FailedWhy(); why != "" {
		b.WriteString("  " + p.paint(colourError, "FAILED:") + " " + esc(why))
	} else if r.Error != "" {
		b.WriteString("  " + p.paint(colourError, "error:") + " " + esc(r.Error))
	}
}

// line is one line of the log (a call's own) on one line. Every field
// from the log goes through the one escape (visible.Line), the tool and
// rule names too: an unknown tool's name is the agent's choice as well.
func (p *callPrinter) line(r *audit.Record) string {
	esc := visible.Line.Unless(p.raw).Escape
	var b strings.Builder
	ts := "-"
	if !r.Time.IsZero() {
		ts = r.Time.Local().Format("2006-01-02 15:04:05")
	}
	b.WriteString(p.paint(colourDim, ts))
	tool := r.Tool
	if r.Event != "" {
		// the hook's line after Claude Code ran the tool, beside the one before
		tool += " (" + r.Event + ")"
	}
	fmt.Fprintf(&b, "  %-5s %s  %-7s ", esc(string(r.Via)), esc(cmp.Or(r.Session, "-")), esc(tool))
	b.WriteString(p.decision(r.Decision))
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
	p.tailOf(&b, r)
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
	if _, done := noCallsYet(&o.src, path, false); done {
		path = os.DevNull // an empty log: every count zero
	}
	s, err := audit.SummariseFile(path, f)
	var lineErr *audit.LineError
	if err != nil && !errors.As(err, &lineErr) {
		return fail(exitUsage, "%s", visible.Line.Escape(err.Error()))
	}
	if o.json {
		b, jerr := json.MarshalIndent(s, "", "  ")
		if jerr != nil {
			return fail(exitUsage, "%v", jerr)
		}
		fmt.Fprintln(stdout, visible.JSON.Escape(string(b)))
	} else {
		printStats(stdout, &s)
	}
	if lineErr != nil {
		return fail(exitDeny, "%s (not counted; run vaultgate audit verify)", visible.Line.Escape(lineErr.Error()))
	}
	return exitOK
}

func printStats(w io.Writer, s *audit.Stats) {
	esc := visible.Line.Escape
	fmt.Fprintf(w, "calls:   %d (allow %d, deny %d, error %d; failed after allow %d)\n",
		s.Calls, s.ByDecision["allow"], s.Denies, s.Errors, s.Failed)
	if !s.First.IsZero() {
		fmt.Fprintf(w, "from:    %s\nto:      %s\n", s.First.Local().Format(time.RFC3339), s.Last.Local().Format(time.RFC3339))
	}
	fmt.Fprintln(w, "\ndenies by rule:")
	if len(s.ByRule) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	rules := sortedKeys(s.ByRule, func(n int) int { return n })
	width := nameWidth(rules, esc)
	for _, k := range rules {
		fmt.Fprintf(w, "  %s %6d\n", pad(esc(k), width), s.ByRule[k])
	}
	table := func(title string, m map[string]*audit.Count) {
		keys := sortedKeys(m, func(c *audit.Count) int { return c.Calls })
		width := nameWidth(keys, func(k string) string { return esc(cmp.Or(k, "-")) })
		fmt.Fprintf(w, "\n%s %6s %6s %6s %6s\n", pad(title, width+2), "calls", "denies", "errors", "failed")
		for _, k := range keys {
			c := m[k]
			fmt.Fprintf(w, "  %s %6d %6d %6d %6d\n", pad(esc(cmp.Or(k, "-")), width), c.Calls, c.Denies, c.Errors, c.Failed)
		}
	}
	table("by tool:", s.ByTool)
	table("by session:", s.BySession)
	if len(s.ByAgent) > 1 {
		table("by agent:", s.ByAgent)
	}
}

// nameWidth is the width of the name column of a table of stats: the
// widest name as printed (a session id may be long), and at least 24.
func nameWidth(keys []string, shown func(string) string) int {
	w := 24
	for _, k := range keys {
		w = max(w, cellWidth(shown(k)))
	}
	return w
}

// pad fills s with spaces to width columns of a terminal.
func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-cellWidth(s)))
}

// cellWidth is how many columns of a terminal s takes: two for a wide or
// full-width character (CJK, most emoji), none for a combining mark.
func cellWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200d || r >= 0xfe00 && r <= 0xfe0f:
		case width.LookupRune(r).Kind() == width.EastAsianWide || width.LookupRune(r).Kind() == width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
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
	if code, done := noCallsYet(&o.src, path, false); done {
		return code
	}
	rep, err := audit.Verify(path)
	if err != nil {
		return fail(exitUsage, "%s", visible.Line.Escape(err.Error()))
	}
	if o.json {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintln(stdout, visible.JSON.Escape(string(b)))
	} else {
		fmt.Fprintln(stdout, visible.Line.Escape(rep.String()))
	}
	if !rep.OK {
		return exitDeny
	}
	return exitOK
}
