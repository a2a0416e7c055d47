package shell

import (
	"strings"
)

// optSpec is the full set of options one command knows. Anything else makes
// the command exec.
type optSpec struct {
	flags   string          // short options without a value
	valued  string          // short options that take a value
	long    map[string]bool // long options; true: takes a value
	numeric bool            // -NUM is an option (head -5)
	noPerm  bool            // options end at the first operand (POSIX order)
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

// parse splits args into options and operands. It returns false (after
// emitting exec) on an option the spec does not know.
func (a *analyzer) parse(st *state, c *cmdCall, sp *optSpec) ([]opt, []field, bool) {
	var opts []opt
	var ops []field
	done := false
	for i := 0; i < len(c.args); i++ {
		f := c.args[i]
		if done {
			ops = append(ops, f)
			continue
		}
		s, ok := f.lit()
		if !ok && !f.unknown && !f.proc && strings.HasPrefix(f.s, "-") {
			// --include=*.md: a glob that matches no file stays as it is.
			s, ok = f.s, true
		}
		if !ok {
			if f.unknown && sp.dynamic {
				a.exec(st, c.name, DynamicArgument, c.name)
				return nil, nil, false
			}
			ops = append(ops, f)
			continue
		}
		if s == "--" {
			done = true
			continue
		}
		if len(s) < 2 || s[0] != '-' {
			ops = append(ops, f)
			if sp.noPerm {
				done = true
			}
			continue
		}
		if strings.HasPrefix(s, "--") {
			name, val, hasEq := strings.Cut(s[2:], "=")
			takes, known := sp.long[name]
			if !known {
				if takes2, ok := sp.long[name+"?"]; ok { // optional value
					_ = takes2
					o := opt{name: name}
					if hasEq {
						o.val, o.has = litField(val), true
					}
					opts = append(opts, o)
					continue
				}
				a.exec(st, c.name, UnknownOption, c.name+" --"+name)
				return nil, nil, false
			}
			o := opt{name: name}
			if takes {
				switch {
				case hasEq:
					o.val, o.has = litField(val), true
				case i+1 < len(c.args):
					i++
					o.val, o.has = c.args[i], true
				default:
					o.has = false
				}
			} else if hasEq {
				a.exec(st, c.name, UnknownOption, c.name+" --"+name)
				return nil, nil, false
			}
			opts = append(opts, o)
			continue
		}
		if sp.numeric && isNumber(s[1:]) {
			opts = append(opts, opt{name: "NUM", val: litField(s[1:]), has: true})
			continue
		}
		for j := 1; j < len(s); j++ {
			ch := s[j]
			if strings.IndexByte(sp.flags, ch) >= 0 {
				opts = append(opts, opt{name: string(ch)})
				continue
			}
			if strings.IndexByte(sp.valued, ch) >= 0 {
				o := opt{name: string(ch), has: true}
				if j+1 < len(s) {
					o.val = litField(s[j+1:])
				} else if i+1 < len(c.args) {
					i++
					o.val = c.args[i]
				} else {
					o.has = false
				}
				opts = append(opts, o)
				break
			}
			a.exec(st, c.name, UnknownOption, c.name+" -"+string(ch))
			return nil, nil, false
		}
	}
	return opts, ops, true
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
