package shell

import (
	"strings"
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
