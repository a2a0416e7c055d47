package shell

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// optSpec is the full set of options one command knows. Anything else makes
// the command exec.
type optSpec struct {
	flags   string          // short options without a value
	valued  string          // short options that take a value
	glued   string          // short options whose value, if any, is glued to them (sed -i[SUFFIX])
	long    map[string]bool // long options; true: takes a value
	numeric bool            // -NUM is an option (head -5)
	noPerm  bool            // options end at the first operand (POSIX order)
	plus    bool            // +x is option x too, turned off (bash +x)
	// dynamic says an unknown word could be an option with effects the
	// operands don't cover (sort -o, find -exec): the command is then exec.
	dynamic bool
}

type opt struct {
	name string // "r" or "recursive"
	val  field
	has  bool
}

func longs(s string) map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(s) {
		if strings.HasSuffix(n, "=") {
			m[strings.TrimSuffix(n, "=")] = true
		} else {
			m[n] = false
		}
	}
	return m
}

// options builds the option set of a command: short flags, short options
// that take a value, and long names ("name=" takes a value, "name?" may).
func options(flags, valued, long string) optSpec {
	return optSpec{flags: flags, valued: valued, long: longs(long)}
}

// guarded marks the set as one where an unknown word could be an option
// with effects the operands don't cover: such a word makes the command exec.
func (o optSpec) guarded() optSpec {
	o.dynamic = true
	return o
}

// glue adds short options whose value, if any, is glued to them.
func (o optSpec) glue(short string) optSpec {
	o.glued += short
	return o
}

// parsedArgs is a call split into options and operands.
type parsedArgs struct {
	opts []opt
	ops  []field
	// first is the index in the arguments of the first operand (-1: none).
	// With noPerm every argument from there on is an operand.
	first int
}

// parse splits the arguments of command name into options and operands, as
// getopt_long does. It returns false (after emitting exec) on an option the
// spec does not know.
func (a *analyzer) parse(st *state, name string, args []field, sp *optSpec) (parsedArgs, bool) {
	p := parsedArgs{first: -1}
	done := false
	operand := func(i int) {
		if p.first < 0 {
			p.first = i
		}
		p.ops = append(p.ops, args[i])
		if sp.noPerm {
			done = true
		}
	}
	for i := 0; i < len(args); i++ {
		f := args[i]
		if done {
			operand(i)
			continue
		}
		s, ok := f.lit()
		if !ok && !f.unknown && !f.proc && strings.HasPrefix(f.s, "-") {
			// --include=*.md: a glob that matches no file stays as it is.
			s, ok = f.s, true
		}
		if !ok {
			if f.unknown && sp.dynamic {
				a.exec(st, name, DynamicArgument, name)
				return p, false
			}
			if !a.optionSafe(st, f, sp.plus, name) {
				// It may be any option, so the program is of unknown
				// effect; what it does to the word as an operand is
				// still reported (a delete of an unknown path stays
				// refused, even under the wall).
				a.exec(st, name, DynamicArgument, name)
			}
			operand(i)
			continue
		}
		if s == "--" {
			done = true
			continue
		}
		if len(s) < 2 || s[0] != '-' && !(sp.plus && s[0] == '+') {
			operand(i)
			continue
		}
		if strings.HasPrefix(s, "--") {
			long, val, hasEq := strings.Cut(s[2:], "=")
			takes, known := sp.long[long]
			if !known {
				if _, ok := sp.long[long+"?"]; ok { // optional value
					o := opt{name: long}
					if hasEq {
						o.val, o.has = litField(val), true
					}
					p.opts = append(p.opts, o)
					continue
				}
				a.exec(st, name, UnknownOption, name+" --"+long)
				return p, false
			}
			o := opt{name: long}
			if takes {
				switch {
				case hasEq:
					o.val, o.has = litField(val), true
				case i+1 < len(args):
					i++
					o.val, o.has = args[i], true
					a.valueWord(st, args[i], sp.plus, name)
				default:
					o.has = false
				}
			} else if hasEq {
				a.exec(st, name, UnknownOption, name+" --"+long)
				return p, false
			}
			p.opts = append(p.opts, o)
			continue
		}
		if sp.numeric && isNumber(s[1:]) {
			p.opts = append(p.opts, opt{name: "NUM", val: litField(s[1:]), has: true})
			continue
		}
		for j := 1; j < len(s); j++ {
			ch := s[j]
			if strings.IndexByte(sp.flags, ch) >= 0 {
				p.opts = append(p.opts, opt{name: string(ch)})
				continue
			}
			if strings.IndexByte(sp.valued, ch) >= 0 {
				o := opt{name: string(ch), has: true}
				if j+1 < len(s) {
					o.val = litField(s[j+1:])
				} else if i+1 < len(args) {
					i++
					o.val = args[i]
					a.valueWord(st, args[i], sp.plus, name)
				} else {
					o.has = false
				}
				p.opts = append(p.opts, o)
				break
			}
			if strings.IndexByte(sp.glued, ch) >= 0 {
				o := opt{name: string(ch)}
				if j+1 < len(s) {
					o.val, o.has = litField(s[j+1:]), true
				}
				p.opts = append(p.opts, o)
				break
			}
			a.exec(st, name, UnknownOption, name+" -"+string(ch))
			return p, false
		}
	}
	return p, true
}

func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

func values(opts []opt, names ...string) []field {
	var out []field
	for _, o := range opts {
		for _, n := range names {
			if o.name == n && o.has {
				out = append(out, o.val)
			}
		}
	}
	return out
}

// optionSafe reports whether a word the analysis can't fix, met where the
// program still reads options, is known not to be one. A glob that starts
// the word may expand to any name in the folder (a file named
// --target-directory=.. or --checkpoint-action=exec=sh x.sh), so it is safe
// only when no name there starts with "-" (or "+" for plus) now, and the
// command makes no name there first (checked once the whole command is
// seen: optionGlobs). An unknown part is safe only behind known text that
// is not a dash, and quoted (unquoted, it may split into more words).
func (a *analyzer) optionSafe(st *state, f field, plus bool, cmd string) bool {
	lead := func(c byte) bool { return c != '-' && !(plus && c == '+') }
	switch {
	case f.proc:
		return true // /dev/fd/N
	case f.unknown:
		return f.knownHead && !f.splits && f.s != "" && f.meta != 0 && lead(f.s[0])
	case f.meta != 0:
		return f.s != "" && lead(f.s[0])
	}
	if !st.cwdKnown {
		return false
	}
	for t := range st.taint {
		if st.cwd == t || strings.HasPrefix(st.cwd, t+"/") {
			return false
		}
	}
	names := a.opts.ReadDir(st.cwd)
	if len(names) > maxGlobMatches {
		return false
	}
	for _, n := range names {
		if n != "" && !lead(n[0]) {
			return false
		}
	}
	for l := range st.links {
		if filepath.Dir(l) == st.cwd {
			if n := filepath.Base(l); !lead(n[0]) {
				return false
			}
		}
	}
	if a.optionGlobs == nil {
		a.optionGlobs = map[string]string{}
	}
	a.optionGlobs[st.cwd] = cmd
	return true
}

// valueWord checks a word taken as an option's value: a glob or an
// unquoted unknown part may make it several words, and those after the
// first are read as options again (tar -cf * x, with files named
// --checkpoint-action=…).
func (a *analyzer) valueWord(st *state, f field, plus bool, cmd string) {
	if f.unknown && f.splits || !f.unknown && f.meta >= 0 && !a.optionSafe(st, f, plus, cmd) {
		a.exec(st, cmd, DynamicArgument, cmd)
	}
}

// checkOptionGlobs makes exec the commands whose globs were let through as
// operands because no name in their folder started with a dash, when the
// command itself makes a name in that folder (before the glob or not: a
// loop or a background job may run it first).
func (a *analyzer) checkOptionGlobs() {
	for _, dir := range slices.Sorted(maps.Keys(a.optionGlobs)) {
		cmd := a.optionGlobs[dir]
		for _, e := range a.effects {
			if e.Op == zones.OpRead || e.Op == zones.OpExec || e.Op == zones.OpDelete || e.Op == zones.OpMoveOut {
				continue
			}
			if e.Unknown || filepath.Dir(e.Path) == dir || e.Subtree && (e.Path == dir || strings.HasPrefix(dir, e.Path+"/")) {
				a.exec(nil, cmd, DynamicArgument, cmd+" (a glob, and the command makes names where it expands)")
				break
			}
		}
	}
}
