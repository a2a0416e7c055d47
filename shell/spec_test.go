package shell

import (
	"strings"
	"testing"
)

// knows reports whether the option set has an option of that name, and
// whether it takes a value.
func (o *optSpec) knows(name string) (known, valued bool) {
	switch {
	case name == "NUM":
		return o.numeric, true
	case len(name) == 1 && strings.Contains(o.flags, name):
		return true, false
	case len(name) == 1 && strings.Contains(o.valued+o.glued, name):
		return true, true
	}
	if takes, ok := o.long[name]; ok {
		return true, takes
	}
	if _, ok := o.long[name+"?"]; ok {
		return true, true
	}
	return false, false
}

// The table is data, so a typo in it would silently do nothing: every
// option a spec says something about must be one it parses, an option whose
// value is a path must take one, and the roles must be in a shape the
// interpreter reads.
func TestSpecsAreConsistent(t *testing.T) {
	const valueEffects = readsValue | readsTree | writesValue | intoValue
	for name, s := range table() {
		if s.builtin != nil {
			continue
		}
		if s.raw && s.hook == nil && s.spec != inert {
			t.Errorf("%s: raw arguments and no hook", name)
		}
		for opt, e := range s.idx {
			known, valued := s.opts.knows(opt)
			if !known {
				t.Errorf("%s: does names %q, which is not one of its options", name, opt)
			}
			if e&valueEffects != 0 && !valued {
				t.Errorf("%s: %q takes no value, but its value is said to be a path", name, opt)
			}
		}
		for i, r := range s.args {
			if r == runs && i != len(s.args)-1 {
				t.Errorf("%s: the wrapped command must be the last role", name)
			}
			if r == runs && !s.opts.noPerm {
				t.Errorf("%s: a wrapper's options must end at the command it runs (noPerm)", name)
			}
		}
		if s.transfer != nil && len(s.args) > 0 {
			t.Errorf("%s: a transfer's operands are SOURCE... DEST; args would be ignored", name)
		}
		if s.output > len(s.args)+1 && s.output > 2 {
			t.Errorf("%s: output operand %d is past its roles", name, s.output)
		}
	}
}

// A new command is one spec: this one, defined only here, deletes its
// operands after a pattern, whole with -r, and writes a log named by -o.
func TestSpecInterpreter(t *testing.T) {
	table()["frob"] = (&spec{
		opts: options("rv", "o", "recursive output= verbose"),
		does: does{"r recursive": subtree, "o output": writesValue},
		args: []role{notPath, deletes}, // PATTERN FILE...
	}).compile()
	t.Cleanup(func() { delete(table(), "frob") })
	vault := sampleVault(t)
	for _, c := range []struct{ cmd, want string }{
		{"frob x notes/a.md", "delete notes/a.md"},
		{"frob -r -o write/log x notes", "create write/log ; delete notes/**"},
		{"frob --recursive x notes write/d", "delete notes/** ; delete write/d/**"},
		{"frob -q x notes", "exec unknown-option frob -q"},
		{"frob x", "-"},
		{"frob -v", "-"},
	} {
		an, err := Analyze(c.cmd, corpusOptions(vault))
		_, got := render(vault, an, err)
		if got != c.want {
			t.Errorf("%s: got %s, want %s", c.cmd, got, c.want)
		}
	}
}

func TestParseGluedValue(t *testing.T) {
	a := newAnalyzer(Options{Vault: "/v", Cwd: "/v"})
	st := a.initialState()
	sp := options("n", "e", "").glue("i")
	for _, c := range []struct {
		args     []string
		inPlace  bool
		suffix   string
		operands int
	}{
		{[]string{"-i", "s/a/b/", "f"}, true, "", 2},
		{[]string{"-i.bak", "s/a/b/", "f"}, true, ".bak", 2},
		{[]string{"-ni", "p", "f"}, true, "", 2},
		{[]string{"-ei", "f"}, false, "", 1}, // -e takes "i" as its script
		{[]string{"-n", "p", "f"}, false, "", 2},
	} {
		var args []field
		for _, s := range c.args {
			args = append(args, litField(s))
		}
		p, ok := a.parse(st, "sed", args, &sp)
		if !ok {
			t.Fatalf("%v: refused", c.args)
		}
		inPlace, suffix := false, ""
		for _, o := range p.opts {
			if o.name == "i" {
				inPlace = true
				if o.has {
					suffix, _ = o.val.lit()
				}
			}
		}
		if inPlace != c.inPlace || suffix != c.suffix || len(p.ops) != c.operands {
			t.Errorf("%v: in place %v suffix %q operands %d, want %v %q %d", c.args, inPlace, suffix, len(p.ops),
				c.inPlace, c.suffix, c.operands)
		}
	}
}

// Wrappers parse their options as the programs do, so the command they run
// is the one the analysis sees.
func TestWrapperOperands(t *testing.T) {
	vault := sampleVault(t)
	for _, c := range []struct{ cmd, dec, want string }{
		// - and -- end a shell's options; the script after them is still read.
		{`bash -c -- "$x"`, "refuse", "dynamic-command"},
		{`bash -ec - "$x"`, "refuse", "dynamic-command"},
		{`bash -c -- 'rm notes/a.md'`, "allow", "delete notes/a.md"},
		{`bash -- -`, "exec", "exec script bash -"},
		{`bash -eo pipefail -c 'rm notes/a.md'`, "allow", "delete notes/a.md"},
		{`bash +x -c 'rm notes/a.md'`, "allow", "delete notes/a.md"},
		{`bash -eo frob -c 'rm notes/a.md'`, "exec", "exec unknown-option bash -o frob"},
		// bash runs a command named "-": exec - and command - don't skip it.
		{`exec - rm notes/a.md`, "exec", "exec unknown-program -"},
		{`command - rm notes/a.md`, "exec", "exec unknown-program -"},
		// env: after NAME=VALUE nothing is an option any more.
		{`env - rm notes/a.md`, "allow", "delete notes/a.md"},
		{`env A=1 -i rm notes/a.md`, "exec", "exec unknown-program -i"},
		{`env -C notes rm a.md`, "allow", "delete notes/a.md"},
		{`timeout -s 9 5 rm notes/a.md`, "allow", "delete notes/a.md"},
		{`timeout "$d" rm notes/a.md`, "refuse", "dynamic-command"},
		{`nice -n 5 -- rm notes/a.md`, "allow", "delete notes/a.md"},
	} {
		an, err := Analyze(c.cmd, corpusOptions(vault))
		dec, got := render(vault, an, err)
		if dec != c.dec || got != c.want {
			t.Errorf("%s: got %s %s, want %s %s", c.cmd, dec, got, c.dec, c.want)
		}
	}
}
