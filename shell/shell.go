package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/zones"
)

// MaxCommandSize is the largest command Analyze looks at; anything longer is
// refused with TooLarge.
const MaxCommandSize = 64 << 10

// DefaultMaxDepth is the nesting limit for wrappers and re-parsed scripts.
const DefaultMaxDepth = 5

// Options for one analysis.
type Options struct {
	Vault string // absolute, cleaned vault root
	Cwd   string // absolute working directory the command starts in (default Vault)
	// Stat reports what is on disk at an absolute path whose folders hold
	// no symlink, without following a final one. nil = os.Lstat.
	Stat func(abs string) FileInfo
	// Readlink reads the target of the symlink at an absolute path whose
	// folders hold no symlink (false when it can't). The analysis walks
	// every path itself, link by link, as the kernel does; Stat, Readlink
	// and ReadDir are all it reads of the file system. nil = os.Readlink.
	Readlink func(abs string) (string, bool)
	// ReadDir lists the names in a folder (nil when it can't). A glob's
	// matches that are symlinks lead out of its folder, so the analysis
	// expands globs for the ops that follow links. nil = os.ReadDir.
	ReadDir  func(abs string) []string
	MaxDepth int // wrapper/nesting depth limit; 0 = DefaultMaxDepth
}

// FileInfo is what Options.Stat reports about one path.
type FileInfo struct {
	Exists bool
	Dir    bool // a folder (not a symlink to one)
	Link   bool // a symlink
}

func readDir(abs string) []string {
	es, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names
}

func readlink(abs string) (string, bool) {
	t, err := os.Readlink(abs)
	return t, err == nil
}

func lstat(abs string) FileInfo {
	fi, err := os.Lstat(abs)
	if err != nil {
		return FileInfo{}
	}
	return FileInfo{Exists: true, Dir: fi.IsDir(), Link: fi.Mode()&os.ModeSymlink != 0}
}

// Effect is one thing a command would do to one path.
type Effect struct {
	Op       zones.Op
	Path     string // absolute, cleaned, after cd, variables and every symlink on the way; "" when Unknown
	Subtree  bool   // the effect covers the whole subtree of Path
	Unknown  bool   // a dynamic word in a path position: the path can't be known
	ByRename bool   // the command replaces or removes the name by rename (sed -i, mv)
	Source   string // for OpMoveIn and OpLink: the absolute source path ("" if unknown)
	Command  string // the command word that causes the effect ("rm", "sed", or ">" for a bare redirect)
	Why      ExecWhy
	Detail   string // for OpExec: the option or program name
}

// Format prints the effect in the compact form the corpus and `check` use:
// the op, the path relative to vault ("?" when unknown, "/**" for a subtree),
// "<- source" for moves and links, "(rename)" for ByRename, and for exec the
// reason and detail.
func (e Effect) Format(vault string) string {
	var b strings.Builder
	b.WriteString(e.Op.String())
	if e.Op == zones.OpExec {
		b.WriteString(" ")
		b.WriteString(e.Why.String())
		if e.Detail != "" {
			b.WriteString(" ")
			b.WriteString(e.Detail)
		}
		return b.String()
	}
	b.WriteString(" ")
	if e.Unknown {
		b.WriteString("?")
	} else {
		p := relTo(vault, e.Path)
		b.WriteString(p)
		if e.Subtree {
			if !strings.HasSuffix(p, "/") {
				b.WriteString("/")
			}
			b.WriteString("**")
		}
	}
	if e.Op == zones.OpMoveIn || e.Op == zones.OpLink {
		b.WriteString(" <- ")
		if e.Source == "" {
			b.WriteString("?")
		} else {
			b.WriteString(relTo(vault, e.Source))
		}
	}
	if e.ByRename {
		b.WriteString(" (rename)")
	}
	return b.String()
}

func relTo(vault, p string) string {
	if vault != "" {
		if p == vault {
			return "."
		}
		if strings.HasPrefix(p, vault+"/") || vault == "/" {
			return strings.TrimPrefix(strings.TrimPrefix(p, vault), "/")
		}
	}
	return p
}

// ExecWhy says why an OpExec effect can't be analysed.
type ExecWhy uint8

const (
	WhyNone           ExecWhy = iota
	Interpreter               // python, node, perl, awk, …
	VersionControl            // git: a repository's config and hooks run code
	BuildTool                 // make, npm, go, cargo, …
	Script                    // ./x.sh, source, bash file, a shell reading a script that can't be seen
	ShellBuiltin              // alias, trap, hash, enable, shopt, mapfile -C, …
	UnknownProgram            // a program the table does not know
	UnknownOption             // an option the table does not know for a known program
	ProgramOption             // an option that runs a program (tar --to-command, find -exec of an unknown program)
	DynamicArithmetic         // arithmetic or a subscript on a value that is not a literal number
	DangerousEnv              // an assignment to BASH_FUNC_*, BASH_ENV, ENV, PATH, LD_*, …
	SedScript                 // a sed script with w, W, e, or s///e, or one that can't be seen
	DynamicExpansion          // ${x@P} or ${!x} on a value that is not a known literal
	DynamicArgument           // a dynamic word where an option that runs a program or writes could be
	Machine                   // it changes the machine, not the vault: hostname NAME, date -s, mount, ip, sysctl -w…
	CdMayFail                 // cd into a folder the command removes: if it fails, the rest runs elsewhere
	numWhys
)

var whyNames = [numWhys]string{"none", "interpreter", "version-control", "build-tool", "script",
	"shell-builtin", "unknown-program", "unknown-option", "program-option", "dynamic-arithmetic",
	"dangerous-env", "sed-script", "dynamic-expansion", "dynamic-argument", "machine", "cd-may-fail"}

// String returns the code's name, as the corpus and the audit print it.
func (w ExecWhy) String() string {
	if w < numWhys {
		return whyNames[w]
	}
	return "unknown"
}

// MarshalText makes the code print by name in JSON.
func (w ExecWhy) MarshalText() ([]byte, error) { return []byte(w.String()), nil }

// RefusalCode says why a command is denied outright.
type RefusalCode uint8

const (
	ParseError     RefusalCode = iota + 1 // the parser rejected it; Detail is its message
	DynamicCommand                        // the command name is not a literal ($cmd x, $(echo rm) x, eval "$x")
	Privilege                             // sudo, su, doas, pkexec, …
	TooLarge                              // over MaxCommandSize bytes
	TooDeep                               // nesting past Options.MaxDepth
	numCodes
)

var codeNames = [numCodes]string{"", "parse-error", "dynamic-command", "privilege", "too-large", "too-deep"}

// String returns the code's name.
func (c RefusalCode) String() string {
	if c > 0 && c < numCodes {
		return codeNames[c]
	}
	return "unknown"
}

// MarshalText makes the code print by name in JSON.
func (c RefusalCode) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Refusal is the typed error for a command that is denied outright.
type Refusal struct {
	Code    RefusalCode
	Command string     // the command word involved, if any
	Detail  string     // the parser's message, the program, or the limit
	Pos     syntax.Pos // where in the (innermost) script, if known
}

func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("shell: refused (")
	b.WriteString(r.Code.String())
	b.WriteString(")")
	if r.Pos.IsValid() {
		fmt.Fprintf(&b, " at %s", r.Pos)
	}
	if r.Command != "" {
		fmt.Fprintf(&b, " command %q", r.Command)
	}
	if r.Detail != "" {
		b.WriteString(": ")
		b.WriteString(r.Detail)
	}
	return b.String()
}

// Analysis is what a command would do.
type Analysis struct {
	Effects  []Effect
	Programs []string // base names of every program the command may run, sorted, unique
}

// HasExec reports whether any effect is OpExec.
func (a *Analysis) HasExec() bool {
	for _, e := range a.Effects {
		if e.Op == zones.OpExec {
			return true
		}
	}
	return false
}

// Analyze returns the effects of command, or a *Refusal. Any other error is
// an internal failure, and callers must deny on it too.
func Analyze(command string, opts Options) (an *Analysis, err error) {
	if len(command) > MaxCommandSize {
		return nil, &Refusal{Code: TooLarge, Detail: fmt.Sprintf("%d bytes, limit %d", len(command), MaxCommandSize)}
	}
	if opts.Vault == "" || !filepath.IsAbs(opts.Vault) {
		return nil, fmt.Errorf("shell: vault %q is not an absolute path", opts.Vault)
	}
	opts.Vault = filepath.Clean(opts.Vault)
	if opts.Cwd == "" {
		opts.Cwd = opts.Vault
	}
	if !filepath.IsAbs(opts.Cwd) {
		return nil, fmt.Errorf("shell: cwd %q is not an absolute path", opts.Cwd)
	}
	opts.Cwd = filepath.Clean(opts.Cwd)
	if opts.Stat == nil {
		opts.Stat = lstat
	}
	if opts.ReadDir == nil {
		opts.ReadDir = readDir
	}
	if opts.Readlink == nil {
		opts.Readlink = readlink
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	defer func() {
		// A bug in the walker must deny, never allow.
		if r := recover(); r != nil {
			an, err = nil, fmt.Errorf("shell: internal error analysing command: %v", r)
		}
	}()
	// One analysis judges the disk as it is before the command runs, so each
	// path is looked up once.
	stat, link := opts.Stat, opts.Readlink
	stats := map[string]FileInfo{}
	opts.Stat = func(p string) FileInfo {
		fi, ok := stats[p]
		if !ok {
			fi = stat(p)
			stats[p] = fi
		}
		return fi
	}
	list := opts.ReadDir
	dirs := map[string][]string{}
	opts.ReadDir = func(p string) []string {
		names, ok := dirs[p]
		if !ok {
			names = list(p)
			dirs[p] = names
		}
		return names
	}
	type target struct {
		s  string
		ok bool
	}
	targets := map[string]target{}
	opts.Readlink = func(p string) (string, bool) {
		t, ok := targets[p]
		if !ok {
			t.s, t.ok = link(p)
			targets[p] = t
		}
		return t.s, t.ok
	}
	a := newAnalyzer(opts)
	st := a.initialState()
	a.script(st, command, 0)
	a.background(st)
	a.checkOptionGlobs()
	a.checkCds()
	if a.refusal != nil {
		return nil, a.refusal
	}
	an = &Analysis{Effects: a.effects}
	for p := range a.programs {
		an.Programs = append(an.Programs, p)
	}
	sort.Strings(an.Programs)
	return an, nil
}
