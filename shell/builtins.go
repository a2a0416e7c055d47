package shell

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/zones"
)

// Shell builtins that change what the analysis knows (the working directory,
// variables, functions, options) and the ones that run nested scripts.

// runCd follows cd as bash runs it. cd -P DIR goes where the kernel's
// lookup of DIR leads. Plain cd (-L) first takes DIR against $PWD as text
// (notes/link/.. is notes), goes where that path leads, and keeps the text
// as $PWD; if that fails, bash tries DIR as the kernel reads it. When the
// two differ, the analysis can't tell which one bash took.
func runCd(a *analyzer, st *state, c *cmdCall) {
	args := c.args
	physical := false
	for len(args) > 0 {
		s, ok := args[0].lit()
		if !ok || !strings.HasPrefix(s, "-") || s == "-" {
			break
		}
		args = args[1:]
		if s == "--" {
			break
		}
		for _, ch := range s[1:] {
			switch ch {
			case 'P':
				physical = true
			case 'L':
				physical = false
			}
		}
	}
	lost := func() { st.cwdKnown, st.pwd = false, "" }
	if len(args) == 0 {
		lost() // $HOME
		return
	}
	s, ok := args[0].lit()
	if !ok || s == "-" || strings.HasPrefix(s, "+") || s == "" {
		lost()
		return
	}
	if !filepath.IsAbs(s) && !st.cwdKnown {
		return
	}
	// What the kernel makes of DIR, from the real working directory.
	raw := s
	if !filepath.IsAbs(s) {
		raw = st.cwd + "/" + s
	}
	kernel := a.resolveAbs(st, raw, true)
	if kernel.unknown || kernel.none {
		lost()
		return
	}
	if !a.opts.Stat(kernel.abs).Dir && !st.made[kernel.abs] {
		// No such folder yet, nor one this command surely made: the cd
		// may fail, and what follows run where bash already was.
		lost()
		return
	}
	a.cds = append(a.cds, kernel.abs)
	if physical {
		st.cwd, st.cwdKnown, st.pwd = kernel.abs, true, kernel.abs
		return
	}
	logical := s
	if !filepath.IsAbs(s) {
		if st.pwd == "" {
			if hasDotDot(s) {
				lost() // climbs from a $PWD the analysis does not know
				return
			}
			// $PWD names the working directory, so $PWD/DIR leads where
			// DIR does; only the text of the new $PWD is unknown.
			st.cwd, st.cwdKnown = kernel.abs, true
			return
		}
		logical = st.pwd + "/" + s
	}
	logical = filepath.Clean(logical)
	text := a.resolveAbs(st, logical, true)
	if text.unknown || text.none || text.abs != kernel.abs {
		lost()
		return
	}
	st.cwd, st.cwdKnown, st.pwd = text.abs, true, logical
}

func runSet(a *analyzer, st *state, c *cmdCall) {
	for i := 0; i < len(c.args); i++ {
		s, ok := c.args[i].lit()
		if !ok {
			a.exec(st, "set", ShellBuiltin, "set "+"(dynamic)")
			return
		}
		if s == "--" || s == "-" {
			return // positional parameters: not tracked
		}
		if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			return
		}
		if s == "-o" || s == "+o" {
			if i+1 >= len(c.args) {
				return
			}
			i++
			if o, _ := c.args[i].lit(); !safeSetOption(o) {
				a.exec(st, "set", ShellBuiltin, "set -o "+o)
			}
			continue
		}
		for _, ch := range s[1:] {
			if ch == 'o' {
				// -euo pipefail: the option name is the next word.
				if i+1 < len(c.args) {
					i++
					if o, _ := c.args[i].lit(); !safeSetOption(o) {
						a.exec(st, "set", ShellBuiltin, "set -o "+o)
					}
				}
				continue
			}
			if !strings.ContainsRune("euxvfCamnEhbTt", ch) {
				a.exec(st, "set", ShellBuiltin, "set "+s[:1]+string(ch))
				return
			}
		}
	}
}

func firstLit(fs []field) (string, bool) {
	if len(fs) == 0 {
		return "", false
	}
	return fs[0].lit()
}

// afterDashes reports whether the first operand comes right after "--".
func afterDashes(inv *invocation) bool {
	i := inv.argIndex(0)
	if i <= 0 {
		return false
	}
	s, ok := inv.cmdCall.args[i-1].lit()
	return ok && s == "--"
}

// safeShellOption: the -o options a shell may be started with.
func safeShellOption(o string) bool {
	switch o {
	case "pipefail", "errexit", "nounset", "xtrace", "noglob":
		return true
	}
	return false
}

func safeSetOption(o string) bool {
	switch o {
	case "errexit", "nounset", "xtrace", "pipefail", "noglob", "noclobber", "verbose", "allexport",
		"errtrace", "functrace", "notify", "monitor", "noexec", "nolog":
		return true
	}
	return false
}

// setNames marks variables named by args as holding unknown data.
func (a *analyzer) setNames(st *state, c *cmdCall, names []field) {
	for _, f := range names {
		s, ok := f.lit()
		if !ok || !validName(s) {
			// A name like a[$(cmd)] evaluates its subscript.
			if ok && validSubscripted(s) {
				st.setVar(s[:strings.IndexByte(s, '[')], unknownValue())
				continue
			}
			a.exec(st, c.name, DynamicArithmetic, c.name+" "+f.s)
			continue
		}
		if dangerousEnv(s) {
			a.exec(st, c.name, DangerousEnv, s)
		}
		st.setVar(s, unknownValue())
	}
}

func validSubscripted(s string) bool {
	i := strings.IndexByte(s, '[')
	if i <= 0 || !strings.HasSuffix(s, "]") || !validName(s[:i]) {
		return false
	}
	sub := s[i+1 : len(s)-1]
	return isArithNumber(sub) || sub == "@" || sub == "*"
}

func runRead(a *analyzer, st *state, c *cmdCall) {
	p, ok := a.parse(st, c.name, c.args, &optSpec{flags: "ers", valued: "adinNptu"})
	if !ok {
		return
	}
	names := append(p.ops, values(p.opts, "a")...)
	if len(names) == 0 {
		names = []field{litField("REPLY")}
	}
	a.setNames(st, c, names)
}

func runWait(a *analyzer, st *state, c *cmdCall) {
	p, ok := a.parse(st, c.name, c.args, &optSpec{flags: "nf", valued: "p"})
	if ok {
		a.setNames(st, c, values(p.opts, "p"))
	}
}

func runUnset(a *analyzer, st *state, c *cmdCall) {
	p, ok := a.parse(st, c.name, c.args, &optSpec{flags: "fvn"})
	if !ok {
		return
	}
	opts := p.opts
	for _, f := range p.ops {
		s, ok := f.lit()
		if !ok || !(validName(s) || validSubscripted(s)) {
			a.exec(st, "unset", DynamicArithmetic, "unset "+f.s)
			continue
		}
		if has(opts, "f") {
			delete(st.funcs, s)
			continue
		}
		if validName(s) {
			delete(st.vars, s)
			if _, ok := st.funcs[s]; ok && !has(opts, "v") {
				delete(st.funcs, s)
			}
		}
	}
}

func runMapfile(a *analyzer, st *state, c *cmdCall) {
	p, ok := a.parse(st, c.name, c.args, &optSpec{flags: "t", valued: "dnOsuCc"})
	if !ok {
		return
	}
	names := p.ops
	if has(p.opts, "C") {
		a.exec(st, c.name, ShellBuiltin, c.name+" -C")
		return
	}
	if len(names) == 0 {
		names = []field{litField("MAPFILE")}
	}
	a.setNames(st, c, names)
}

// runPrintf: printf's one option, -v NAME (or -vNAME), sets a variable;
// a first word that could be it (a glob matching "-vPATH", a variable) is
// of unknown effect.
func runPrintf(a *analyzer, st *state, c *cmdCall) {
	if len(c.args) == 0 {
		return
	}
	s, ok := c.args[0].lit()
	switch {
	case !ok:
		if !a.optionSafe(st, c.args[0], false, "printf") {
			a.exec(st, "printf", DynamicArgument, "printf")
		}
	case s == "-v" && len(c.args) >= 2:
		a.setNames(st, c, c.args[1:2])
	case strings.HasPrefix(s, "-v") && len(s) > 2:
		a.setNames(st, c, []field{litField(s[2:])})
	}
}

var testFileOps = map[string]bool{"-e": true, "-f": true, "-d": true, "-r": true, "-w": true, "-x": true,
	"-s": true, "-L": true, "-h": true, "-p": true, "-S": true, "-b": true, "-c": true, "-g": true, "-u": true,
	"-k": true, "-O": true, "-G": true, "-N": true, "-a": false}

var testArithOps = map[string]bool{"-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true}

func runTest(a *analyzer, st *state, c *cmdCall) {
	args := c.args
	if c.name == "[" && len(args) > 0 {
		if s, _ := args[len(args)-1].lit(); s == "]" {
			args = args[:len(args)-1]
		}
	}
	for i, f := range args {
		s, ok := f.lit()
		if !ok {
			continue
		}
		if testArithOps[s] {
			for _, j := range []int{i - 1, i + 1} {
				if j < 0 || j >= len(args) {
					continue
				}
				if n, ok := args[j].lit(); ok && isArithNumber(strings.TrimPrefix(n, "-")) {
					continue
				}
				if c.words != nil && len(c.words) > j && numericWord(st, c.words[j]) {
					continue
				}
				a.exec(st, c.name, DynamicArithmetic, c.name+" "+s)
				return
			}
		}
		if testFileOps[s] && i+1 < len(args) {
			a.pathEffect(st, args[i+1], zones.OpRead, c.name, pathOpts{follow: true})
		}
		if (s == "-nt" || s == "-ot" || s == "-ef") && i > 0 && i+1 < len(args) {
			a.pathEffect(st, args[i-1], zones.OpRead, c.name, pathOpts{follow: true})
			a.pathEffect(st, args[i+1], zones.OpRead, c.name, pathOpts{follow: true})
		}
		if s == "-v" && i+1 < len(args) {
			if n, ok := args[i+1].lit(); !ok || !validName(n) {
				a.exec(st, c.name, DynamicArithmetic, c.name+" -v")
				return
			}
		}
	}
}

// numericWord: a word that is one expansion of a variable known to hold a number.
func numericWord(st *state, w *syntax.Word) bool {
	parts := w.Parts
	if len(parts) == 1 {
		if q, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = q.Parts
		}
	}
	if len(parts) != 1 {
		return false
	}
	p, ok := parts[0].(*syntax.ParamExp)
	if !ok || p.Param == nil || !simpleParam(p) || p.Index != nil {
		return false
	}
	v := st.vars[p.Param.Value]
	return v != nil && v.numeric
}

func runEval(a *analyzer, st *state, c *cmdCall) {
	var parts []string
	for _, f := range c.args {
		s, ok := f.lit()
		if !ok {
			if f.meta >= 0 && !f.unknown && !f.proc {
				s = f.s
			} else {
				a.refuse(DynamicCommand, "eval", "eval of a dynamic string", c.pos)
				return
			}
		}
		parts = append(parts, s)
	}
	lang := syntax.LangBash
	if st.posix {
		lang = syntax.LangPOSIX
	}
	a.scriptLang(st, strings.Join(parts, " "), st.depth+1+c.depth, lang)
}

// shellScript: bash -c SCRIPT is re-parsed, a script read from stdin is
// re-parsed when it is visible, a script file is exec.
func shellScript(a *analyzer, st *state, inv *invocation) bool {
	c := inv.cmdCall
	for _, o := range inv.opts {
		if o.name != "o" {
			continue
		}
		if v, _ := o.val.lit(); !o.has || !safeShellOption(v) {
			a.exec(st, c.name, UnknownOption, c.name+" -o "+v)
			return false
		}
	}
	rest := inv.ops
	if s, ok := firstLit(rest); ok && s == "-" && !afterDashes(inv) {
		rest = rest[1:] // where options are read, - ends them as -- does
	}
	if len(rest) > 0 {
		// The script, or the file it is read from.
		if _, ok := rest[0].lit(); !ok {
			a.refuse(DynamicCommand, c.name, "a dynamic argument to a shell", c.pos)
			return false
		}
	}
	script, stdin := -1, has(inv.opts, "s")
	if has(inv.opts, "c") {
		script = 0
	}
	child := st.clone()
	child.vars = map[string]*value{}
	child.intVars = map[string]bool{}
	child.funcs = map[string][]*syntax.Stmt{}
	child.ifsChanged = false
	child.calls = 0
	depth := st.depth + c.depth + 1
	// sh may be dash: read its scripts as POSIX, where {a,b} is a literal.
	lang := syntax.LangBash
	if c.name == "sh" || c.name == "dash" {
		lang = syntax.LangPOSIX
	}
	switch {
	case script == 0:
		if len(rest) == 0 {
			return false
		}
		src, _ := rest[0].lit()
		a.scriptLang(child, src, depth, lang)
	case stdin || len(rest) == 0:
		if stdin && len(rest) > 0 {
			a.exec(st, c.name, Script, c.name+" -s")
			return false
		}
		switch st.stdin {
		case inNull:
		case inLiteral:
			a.scriptLang(child, st.stdinText, depth, lang)
		default:
			a.exec(st, c.name, Script, c.name+" reading a script from its input")
			return false
		}
	default:
		a.exec(st, c.name, Script, c.name+" "+rest[0].s)
		return false
	}
	st.foldFS(child)
	return false
}
