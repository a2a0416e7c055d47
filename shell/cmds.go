package shell

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/zones"
)

// --- builtins that change the analysis state

func runCd(a *analyzer, st *state, c *cmdCall) {
	args := c.args
	for len(args) > 0 {
		s, ok := args[0].lit()
		if !ok || !strings.HasPrefix(s, "-") || s == "-" {
			break
		}
		args = args[1:]
		if s == "--" {
			break
		}
	}
	if len(args) == 0 {
		st.cwdKnown = false // $HOME
		return
	}
	s, ok := args[0].lit()
	if !ok || s == "-" || strings.HasPrefix(s, "+") {
		st.cwdKnown = false
		return
	}
	if !filepath.IsAbs(s) && !st.cwdKnown {
		return
	}
	r := a.resolve(st, args[0], true)
	if r.unknown || r.none {
		st.cwdKnown = false
		return
	}
	st.cwd, st.cwdKnown = r.abs, true
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
	sp := &optSpec{flags: "ers", valued: "adinNptu"}
	opts, names, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	names = append(names, values(opts, "a")...)
	if len(names) == 0 {
		names = []field{litField("REPLY")}
	}
	a.setNames(st, c, names)
}

func runWait(a *analyzer, st *state, c *cmdCall) {
	opts, _, ok := a.parse(st, c, &optSpec{flags: "nf", valued: "p"})
	if ok {
		a.setNames(st, c, values(opts, "p"))
	}
}

func runUnset(a *analyzer, st *state, c *cmdCall) {
	opts, names, ok := a.parse(st, c, &optSpec{flags: "fvn"})
	if !ok {
		return
	}
	for _, f := range names {
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
			if bodies, ok := st.funcs[s]; ok && !has(opts, "v") {
				_ = bodies
				delete(st.funcs, s)
			}
		}
	}
}

func runMapfile(a *analyzer, st *state, c *cmdCall) {
	opts, names, ok := a.parse(st, c, &optSpec{flags: "t", valued: "dnOsuCc"})
	if !ok {
		return
	}
	if has(opts, "C") {
		a.exec(st, c.name, ShellBuiltin, c.name+" -C")
		return
	}
	if len(names) == 0 {
		names = []field{litField("MAPFILE")}
	}
	a.setNames(st, c, names)
}

func runPrintf(a *analyzer, st *state, c *cmdCall) {
	if len(c.args) >= 2 {
		if s, ok := c.args[0].lit(); ok && s == "-v" {
			a.setNames(st, c, c.args[1:2])
		}
	}
}

func runDate(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "uRI", valued: "dfr", long: longs("date= file= iso-8601? rfc-email rfc-3339= reference= utc universal debug")}
	opts, _, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	if c.dynamic() {
		a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "date"})
	}
	a.emitPaths(st, values(opts, "f", "file", "r", "reference"), zones.OpRead, "date", pathOpts{follow: true})
}

func runJq(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "rjcnseaSCMRh0", valued: "fL", long: longs("raw-output join-output compact-output null-input slurp exit-status ascii-output sort-keys color-output monochrome-output raw-input tab indent= arg= argjson= slurpfile= rawfile= args jsonargs seq stream stream-errors from-file= raw-output0 unbuffered")}
	// --arg NAME VALUE takes two values: strip them before parsing.
	var args []field
	var reads []field
	for i := 0; i < len(c.args); i++ {
		s, _ := c.args[i].lit()
		switch s {
		case "--arg", "--argjson":
			i += 2
			continue
		case "--slurpfile", "--rawfile":
			if i+2 < len(c.args) {
				reads = append(reads, c.args[i+2])
			}
			i += 2
			continue
		case "--args", "--jsonargs":
			i = len(c.args)
			continue
		}
		args = append(args, c.args[i])
	}
	cc := *c
	cc.args = args
	opts, ops, ok := a.parse(st, &cc, sp)
	if !ok {
		return
	}
	reads = append(reads, values(opts, "f", "from-file")...)
	a.emitPaths(st, reads, zones.OpRead, "jq", pathOpts{follow: true})
	a.emitPaths(st, values(opts, "L"), zones.OpRead, "jq", pathOpts{follow: true, subtree: true})
	if !has(opts, "f", "from-file") && len(ops) > 0 {
		ops = ops[1:]
	}
	if c.dynamic() {
		a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "jq"})
	}
	a.emitPaths(st, ops, zones.OpRead, "jq", pathOpts{follow: true})
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

// --- nested scripts

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

// runShell handles bash/sh: -c scripts are re-parsed, a script read from
// stdin is re-parsed when it is visible, a script file is exec.
func runShell(a *analyzer, st *state, c *cmdCall) {
	script := -1
	stdin := false
	i := 0
	for ; i < len(c.args); i++ {
		s, ok := c.args[i].lit()
		if !ok {
			a.refuse(DynamicCommand, c.name, "a dynamic argument to a shell", c.pos)
			return
		}
		if s == "--" || s == "-" {
			i++
			break
		}
		if strings.HasPrefix(s, "--") {
			switch s {
			case "--noprofile", "--norc", "--posix", "--login", "--noediting", "--restricted", "--verbose":
				continue
			}
			a.exec(st, c.name, UnknownOption, c.name+" "+s)
			return
		}
		if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+") {
			break
		}
		if s == "-o" || s == "+o" {
			i++
			o, _ := "", false
			if i < len(c.args) {
				o, _ = c.args[i].lit()
			}
			if o != "pipefail" && o != "errexit" && o != "nounset" && o != "xtrace" && o != "noglob" {
				a.exec(st, c.name, UnknownOption, c.name+" -o "+o)
				return
			}
			continue
		}
		for _, ch := range s[1:] {
			switch {
			case ch == 'c':
				script = 0
			case ch == 's':
				stdin = true
			case strings.ContainsRune("leuxvfnrphBCEHPT", ch):
			default:
				a.exec(st, c.name, UnknownOption, c.name+" -"+string(ch))
				return
			}
		}
	}
	rest := c.args[i:]
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
			return
		}
		src, _ := rest[0].lit()
		a.scriptLang(child, src, depth, lang)
	case stdin || len(rest) == 0:
		if stdin && len(rest) > 0 {
			a.exec(st, c.name, Script, c.name+" -s")
			return
		}
		switch st.stdin {
		case inNull:
		case inLiteral:
			a.scriptLang(child, st.stdinText, depth, lang)
		default:
			a.exec(st, c.name, Script, c.name+" reading a script from its input")
			return
		}
	default:
		a.exec(st, c.name, Script, c.name+" "+rest[0].s)
		return
	}
	st.foldFS(child)
}

// --- wrappers

func runEnv(a *analyzer, st *state, c *cmdCall) {
	inner := st.clone()
	for i := 0; i < len(c.args); i++ {
		f := c.args[i]
		s, ok := f.lit()
		if !ok {
			a.refuse(DynamicCommand, "env", "a dynamic argument to env", c.pos)
			return
		}
		switch {
		case s == "-i" || s == "--ignore-environment" || s == "-0" || s == "--null" || s == "-" || s == "-v" || s == "--debug":
		case s == "-u" || s == "--unset":
			i++
		case strings.HasPrefix(s, "-u") || strings.HasPrefix(s, "--unset="):
		case s == "-C" || s == "--chdir":
			i++
			if i < len(c.args) {
				cc := &cmdCall{name: "cd", args: c.args[i : i+1]}
				runCd(a, inner, cc)
			}
		case s == "--":
			a.envInner(st, inner, c, i+1)
			return
		case strings.HasPrefix(s, "-"):
			a.exec(st, "env", UnknownOption, "env "+s)
			return
		case strings.Contains(s, "="):
			name := s[:strings.IndexByte(s, '=')]
			if dangerousEnv(name) {
				a.exec(st, "env", DangerousEnv, name)
			}
		default:
			a.envInner(st, inner, c, i)
			return
		}
	}
}

func (a *analyzer) envInner(st, inner *state, c *cmdCall, i int) {
	a.wrap(inner, c, i)
	st.foldFS(inner)
}

// upTo is the call with only its first n arguments: a wrapper's own
// options, before the command it runs.
func (c *cmdCall) upTo(n int) *cmdCall {
	cc := *c
	cc.args = c.args[:n]
	return &cc
}

// runWrapper makes a handler for a wrapper with options and no positional
// argument before the command (num: -N is an option too).
func runWrapper(flags, valued, long string, num bool) handler {
	sp := &optSpec{flags: flags, valued: valued, long: longs(long), numeric: num, noPerm: true}
	return func(a *analyzer, st *state, c *cmdCall) {
		n := optEnd(c.args, sp)
		if _, _, ok := a.parse(st, c.upTo(n), sp); !ok {
			return
		}
		a.wrap(st, c, n)
	}
}

// optEnd finds where a POSIX-ordered wrapper's options end.
func optEnd(args []field, sp *optSpec) int {
	for i := 0; i < len(args); i++ {
		s, ok := args[i].lit()
		if !ok {
			return i
		}
		if s == "--" {
			return i + 1
		}
		if len(s) < 2 || s[0] != '-' {
			return i
		}
		if strings.HasPrefix(s, "--") {
			name, _, eq := strings.Cut(s[2:], "=")
			if sp.long[name] && !eq {
				i++
			}
			continue
		}
		if sp.numeric && isNumber(s[1:]) {
			continue
		}
		if strings.IndexByte(sp.valued, s[len(s)-1]) >= 0 && strings.IndexByte(sp.valued, s[1]) >= 0 && len(s) == 2 {
			i++
		}
	}
	return len(args)
}

func runTimeout(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "fpv", valued: "sk", long: longs("foreground preserve-status verbose signal= kill-after="), noPerm: true}
	n := optEnd(c.args, sp)
	if _, _, ok := a.parse(st, c.upTo(n), sp); !ok {
		return
	}
	if n < len(c.args) {
		if _, ok := c.args[n].lit(); !ok {
			a.refuse(DynamicCommand, "timeout", "a dynamic duration", c.pos)
			return
		}
	}
	a.wrap(st, c, n+1)
}

func runCommand(a *analyzer, st *state, c *cmdCall) {
	i := 0
	for ; i < len(c.args); i++ {
		s, ok := c.args[i].lit()
		if !ok || !strings.HasPrefix(s, "-") {
			break
		}
		if s == "--" {
			i++
			break
		}
		for _, ch := range s[1:] {
			switch ch {
			case 'p':
			case 'v', 'V':
				return // a lookup: runs nothing
			default:
				a.exec(st, "command", UnknownOption, "command "+s)
				return
			}
		}
	}
	a.wrap(st, c, i)
}

func runBuiltin(a *analyzer, st *state, c *cmdCall) {
	if len(c.args) == 0 {
		return
	}
	n, ok := c.args[0].lit()
	if !ok {
		a.refuse(DynamicCommand, "builtin", "a dynamic builtin name", c.pos)
		return
	}
	if !builtins[n] {
		return // not a builtin: bash fails
	}
	a.wrap(st, c, 0)
}

func runExec(a *analyzer, st *state, c *cmdCall) {
	i := 0
	for ; i < len(c.args); i++ {
		s, ok := c.args[i].lit()
		if !ok || !strings.HasPrefix(s, "-") {
			break
		}
		if s == "--" {
			i++
			break
		}
		if s == "-a" {
			i++
			continue
		}
		for _, ch := range s[1:] {
			if ch != 'c' && ch != 'l' {
				a.exec(st, "exec", UnknownOption, "exec "+s)
				return
			}
		}
	}
	a.wrap(st, c, i)
}

func runTimeProgram(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "pavq", valued: "fo", long: longs("portability append verbose quiet format= output="), noPerm: true}
	n := optEnd(c.args, sp)
	opts, _, ok := a.parse(st, c.upTo(n), sp)
	if !ok {
		return
	}
	a.emitPaths(st, values(opts, "o", "output"), zones.OpCreate, "time", pathOpts{follow: true, mode: orCreate})
	a.wrap(st, c, n)
}

func runXargs(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "0prtxeil", valued: "adEILnPs", long: longs("null arg-file= delimiter= eof? replace? max-lines? max-args= max-procs= interactive no-run-if-empty max-chars= verbose exit open-tty process-slot-var= show-limits"), noPerm: true}
	n := optEnd(c.args, sp)
	opts, _, ok := a.parse(st, c.upTo(n), sp)
	if !ok {
		return
	}
	if has(opts, "process-slot-var") {
		a.exec(st, "xargs", DangerousEnv, "xargs --process-slot-var")
		return
	}
	a.emitPaths(st, values(opts, "a", "arg-file"), zones.OpRead, "xargs", pathOpts{follow: true})
	inner := &cmdCall{name: "echo", depth: c.depth + 1, pos: c.pos, noFn: true}
	if n < len(c.args) {
		name, ok := c.args[n].lit()
		if !ok {
			a.refuse(DynamicCommand, "xargs", "the command xargs runs is not a literal", c.pos)
			return
		}
		inner.name = name
		inner.args = append([]field(nil), c.args[n+1:]...)
	}
	repl := ""
	for _, o := range opts {
		if o.name == "I" || o.name == "i" || o.name == "replace" {
			repl = "{}"
			if o.has {
				repl, _ = o.val.lit()
			}
		}
	}
	if repl != "" {
		for i, f := range inner.args {
			if s, ok := f.lit(); ok && strings.Contains(s, repl) {
				inner.args[i] = field{meta: -1, unknown: true}
			}
		}
	} else {
		inner.args = append(inner.args, field{meta: -1, unknown: true})
	}
	a.dispatch(st, inner)
}

// --- file changers

func runRm(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "fiIrRdv", long: longs("force interactive? recursive dir verbose one-file-system no-preserve-root preserve-root?")}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	sub := has(opts, "r", "R", "recursive")
	for _, f := range ops {
		r := a.pathEffect(st, f, zones.OpDelete, c.name, pathOpts{subtree: sub})
		a.forget(st, r)
	}
}

func runRmdir(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "pv", long: longs("ignore-fail-on-non-empty parents verbose")}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	for _, f := range ops {
		r := a.pathEffect(st, f, zones.OpDelete, c.name, pathOpts{})
		if has(opts, "p", "parents") && !r.unknown && !r.none {
			if s, ok := f.lit(); ok {
				for d := filepath.Dir(filepath.Clean(s)); d != "." && d != "/"; d = filepath.Dir(d) {
					a.pathEffect(st, litField(d), zones.OpDelete, c.name, pathOpts{})
				}
			}
		}
	}
}

func runUnlink(a *analyzer, st *state, c *cmdCall) {
	_, ops, ok := a.parse(st, c, &optSpec{})
	if !ok {
		return
	}
	for _, f := range ops {
		a.forget(st, a.pathEffect(st, f, zones.OpDelete, c.name, pathOpts{}))
	}
}

func runMv(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "bfinTuvZ", valued: "St", long: longs("backup? force interactive no-clobber no-target-directory target-directory= update? verbose strip-trailing-slashes suffix= context no-copy"), dynamic: true}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	srcs, dst, into, ok := a.destinations(st, c, opts, ops, has(opts, "T", "no-target-directory"))
	if !ok {
		return
	}
	backup := has(opts, "b", "backup", "S", "suffix")
	for _, s := range srcs {
		d := dst
		if into {
			d = target(dst, s)
		}
		sr := a.resolve(st, s, false)
		info := FileInfo{}
		if !sr.unknown && !sr.none {
			info = a.opts.Stat(sr.abs)
		}
		sub := sr.subtree || sr.unknown || info.Dir
		a.emitResolved(sr, zones.OpMoveOut, c.name, pathOpts{rename: true, subtree: sub})
		dr := a.resolve(st, d, false)
		src := ""
		if !sr.unknown && !sr.none {
			src = sr.abs
		}
		if sr.none {
			continue
		}
		a.emitResolved(dr, zones.OpMoveIn, c.name, pathOpts{rename: true, subtree: sub, source: src})
		if backup && !dr.unknown && !dr.none {
			a.emit(Effect{Op: zones.OpCreate, Path: dr.abs + "~", Command: c.name})
		}
		a.moved(st, sr, dr, info)
	}
}

func runCp(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "abdfHilLnPpRrsTuvx", valued: "St", long: longs("archive attributes-only backup? copy-contents debug force interactive link dereference no-clobber no-dereference preserve? no-preserve= parents recursive reflink? remove-destination sparse= strip-trailing-slashes suffix= target-directory= no-target-directory update? verbose one-file-system keep-directory-symlink"), dynamic: true}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	if has(opts, "s", "symbolic-link", "parents") {
		a.exec(st, c.name, UnknownOption, "cp -s/--parents")
		return
	}
	srcs, dst, into, ok := a.destinations(st, c, opts, ops, has(opts, "T", "no-target-directory"))
	if !ok {
		return
	}
	rec := has(opts, "r", "R", "recursive", "a", "archive")
	nodef := rec && !has(opts, "L", "dereference") || has(opts, "P", "d", "no-dereference", "a", "archive")
	hard := has(opts, "l", "link")
	for _, s := range srcs {
		d := dst
		if into {
			d = target(dst, s)
		}
		sr := a.resolve(st, s, true)
		info := FileInfo{}
		if !sr.unknown && !sr.none {
			info = a.opts.Stat(sr.abs)
		}
		sub := rec && (sr.unknown || sr.subtree || info.Dir)
		a.emitResolved(sr, zones.OpRead, c.name, pathOpts{subtree: sub})
		for _, e := range a.globEscapes(st, s, sr) {
			a.emitResolved(e, zones.OpRead, c.name, pathOpts{subtree: sub})
		}
		if sub && has(opts, "L", "dereference") {
			a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: c.name})
		}
		dr := a.resolve(st, d, true)
		if hard {
			src := ""
			if !sr.unknown && !sr.none {
				src = sr.abs
			}
			a.emitResolved(dr, zones.OpLink, c.name, pathOpts{subtree: sub, source: src})
			if !dr.unknown && !dr.none {
				a.linked[dr.abs] = true
			}
			continue
		}
		a.emitResolved(dr, zones.OpCreate, c.name, pathOpts{subtree: sub, mode: orCreate})
		for _, e := range a.globEscapes(st, d, dr) {
			a.emitResolved(e, zones.OpCreate, c.name, pathOpts{subtree: sub, mode: orCreate})
		}
		if !dr.unknown && !dr.none && (sub || nodef && !sr.unknown && !sr.none && a.opts.Stat(filepath.Clean(s.s)).Link) {
			st.taint[dr.abs] = st.taint[dr.abs] || nodef && !sub
		}
	}
}

func runInstall(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "bcCdDpsTvZ", valued: "gmoStZ", long: longs("backup? compare directory group= mode= owner= preserve-timestamps strip strip-program= suffix= target-directory= no-target-directory verbose preserve-context context?"), dynamic: true}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	if has(opts, "s", "strip", "strip-program") {
		a.exec(st, c.name, ProgramOption, "install --strip")
		return
	}
	if has(opts, "d", "directory") {
		a.emitPaths(st, ops, zones.OpCreate, c.name, pathOpts{mode: orCreate})
		return
	}
	srcs, dst, into, ok := a.destinations(st, c, opts, ops, has(opts, "T", "no-target-directory"))
	if !ok {
		return
	}
	for _, s := range srcs {
		d := dst
		if into {
			d = target(dst, s)
		}
		a.pathEffect(st, s, zones.OpRead, c.name, pathOpts{follow: true})
		a.pathEffect(st, d, zones.OpCreate, c.name, pathOpts{mode: orCreate})
	}
}

func runLn(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "bdfFinsLPrTv", valued: "St", long: longs("backup? directory force interactive logical no-dereference physical relative symbolic suffix= target-directory= no-target-directory verbose"), dynamic: true}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	if has(opts, "r", "relative") && len(ops) > 0 {
		// A relative link's target is computed from the link's place; still literal.
	}
	var srcs []field
	var dst field
	into := false
	if len(ops) == 1 && len(values(opts, "t", "target-directory")) == 0 {
		srcs, dst, into = ops, litField("."), true
	} else {
		// -n: a symlink to a folder is a name to replace, not a folder to enter.
		srcs, dst, into, ok = a.destinations(st, c, opts, ops, has(opts, "T", "no-target-directory", "n", "no-dereference"))
		if !ok {
			return
		}
	}
	sym := has(opts, "s", "symbolic")
	force := has(opts, "f", "force")
	for _, s := range srcs {
		d := dst
		if into {
			d = target(dst, s)
		}
		dr := a.resolve(st, d, false)
		if force && !dr.unknown && !dr.none && a.opts.Stat(dr.abs).Exists {
			// -f replaces the name: what was there is gone.
			a.emitResolved(dr, zones.OpDelete, c.name, pathOpts{})
		}
		if !sym {
			sr := a.resolve(st, s, has(opts, "L", "logical"))
			src := ""
			if !sr.unknown && !sr.none {
				src = sr.abs
			}
			a.emitResolved(dr, zones.OpLink, c.name, pathOpts{source: src, subtree: sr.subtree})
			if !dr.unknown && !dr.none {
				a.linked[dr.abs] = true
			}
			if sr.unknown || sr.subtree {
				a.taintResolved(st, dr, true)
			} else if !sr.none && a.opts.Stat(sr.abs).Link {
				a.taintResolved(st, dr, true)
			}
			continue
		}
		a.emitResolved(dr, zones.OpCreate, c.name, pathOpts{})
		if dr.unknown || dr.none {
			continue
		}
		t, ok := s.lit()
		if !ok {
			a.taintResolved(st, dr, true)
			continue
		}
		if has(opts, "r", "relative") {
			// -r: the target is named from here, then made relative.
			tr := a.resolve(st, s, false)
			if tr.unknown || tr.none {
				a.taintResolved(st, dr, true)
				continue
			}
			t = tr.abs
		} else if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(dr.abs), t)
		}
		delete(st.taint, dr.abs)
		st.links[dr.abs] = filepath.Clean(t)
	}
}

func runTouch(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "acfhm", valued: "drt", long: longs("no-create date= no-dereference reference= time= timestamp=")}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	a.emitPaths(st, values(opts, "r", "reference"), zones.OpRead, c.name, pathOpts{follow: true})
	a.emitPaths(st, ops, zones.OpCreate, c.name, pathOpts{follow: !has(opts, "h", "no-dereference"), mode: orCreate})
}

func runMkdir(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "pvZ", valued: "m", long: longs("parents verbose mode= context?")}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	parents := has(opts, "p", "parents")
	for _, f := range ops {
		r := a.resolve(st, f, false)
		if r.unknown || r.none {
			a.emitResolved(r, zones.OpCreate, c.name, pathOpts{})
			continue
		}
		if parents {
			// Each missing folder on the way is created too.
			var missing []string
			for d := filepath.Dir(r.abs); d != "/" && d != a.opts.Vault && !a.opts.Stat(d).Exists; d = filepath.Dir(d) {
				missing = append(missing, d)
			}
			for i := len(missing) - 1; i >= 0; i-- {
				a.emit(Effect{Op: zones.OpCreate, Path: missing[i], Command: c.name})
			}
			if a.opts.Stat(r.abs).Exists {
				continue
			}
		}
		a.emitResolved(r, zones.OpCreate, c.name, pathOpts{})
	}
}

func runTee(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "aip", long: longs("append ignore-interrupts output-error?")}
	_, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	a.emitPaths(st, ops, zones.OpCreate, c.name, pathOpts{follow: true, mode: orCreate})
}

func runTruncate(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "co", valued: "rs", long: longs("no-create io-blocks reference= size=")}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	a.emitPaths(st, values(opts, "r", "reference"), zones.OpRead, c.name, pathOpts{follow: true})
	a.emitPaths(st, ops, zones.OpCreate, c.name, pathOpts{follow: true, mode: orCreate})
}

func runDd(a *analyzer, st *state, c *cmdCall) {
	for _, f := range c.args {
		s, ok := f.lit()
		if !ok {
			if f.unknown {
				a.exec(st, "dd", DynamicArgument, "dd")
				return
			}
			s = f.s
		}
		k, v, found := strings.Cut(s, "=")
		if !found {
			a.exec(st, "dd", UnknownOption, "dd "+s)
			return
		}
		val := field{s: v, meta: -1}
		if f.meta >= 0 {
			val.meta = f.meta - len(k) - 1
		}
		switch k {
		case "if":
			a.pathEffect(st, val, zones.OpRead, "dd", pathOpts{follow: true})
		case "of":
			a.pathEffect(st, val, zones.OpCreate, "dd", pathOpts{follow: true, mode: orCreate})
		case "bs", "ibs", "obs", "cbs", "count", "skip", "seek", "iseek", "oseek", "conv", "status", "iflag", "oflag":
		default:
			a.exec(st, "dd", UnknownOption, "dd "+k+"=")
			return
		}
	}
}

func runSed(a *analyzer, st *state, c *cmdCall) {
	// -i takes an optional suffix glued to it: handle it before parsing.
	args := make([]field, 0, len(c.args))
	inPlace, suffix := false, ""
	for _, f := range c.args {
		s, ok := f.lit()
		if ok && (s == "-i" || s == "--in-place") {
			inPlace = true
			continue
		}
		if ok && strings.HasPrefix(s, "--in-place=") {
			inPlace, suffix = true, strings.TrimPrefix(s, "--in-place=")
			continue
		}
		if ok && strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "--") && strings.Contains(s, "i") {
			j := strings.IndexByte(s, 'i')
			pre := s[1:j]
			if !strings.ContainsAny(pre, "ef") && strings.Trim(pre, "nErsuz") == "" {
				inPlace, suffix = true, s[j+1:]
				if pre != "" {
					args = append(args, litField("-"+pre))
				}
				continue
			}
		}
		args = append(args, f)
	}
	cc := *c
	cc.args = args
	sp := &optSpec{flags: "nErsuz", valued: "efl", long: longs("quiet silent expression= file= regexp-extended separate unbuffered null-data line-length= posix debug sandbox follow-symlinks")}
	opts, ops, ok := a.parse(st, &cc, sp)
	if !ok {
		return
	}
	scripts := values(opts, "e", "expression")
	if has(opts, "f", "file") {
		a.exec(st, "sed", SedScript, "sed -f")
		return
	}
	if len(scripts) == 0 {
		if len(ops) == 0 {
			return
		}
		scripts, ops = ops[:1], ops[1:]
	}
	for _, s := range scripts {
		text, ok := s.lit()
		if !ok {
			a.exec(st, "sed", SedScript, "sed (dynamic script)")
			return
		}
		if bad := sedUnsafe(text); bad != "" {
			a.exec(st, "sed", SedScript, "sed "+bad)
			return
		}
	}
	if !inPlace {
		a.emitPaths(st, ops, zones.OpRead, "sed", pathOpts{follow: true})
		return
	}
	for _, f := range ops {
		r := a.resolve(st, f, has(opts, "follow-symlinks"))
		a.emitResolved(r, zones.OpModify, "sed", pathOpts{rename: true})
		if suffix != "" && !r.unknown && !r.none {
			if strings.Contains(suffix, "*") || strings.Contains(suffix, "/") {
				a.emit(Effect{Op: zones.OpCreate, Unknown: true, Command: "sed"})
			} else {
				a.emitResolved(resolved{abs: r.abs + suffix}, zones.OpCreate, "sed", pathOpts{mode: orCreate})
			}
		}
	}
}

// sedUnsafe reports a sed command that writes files, reads files or runs
// commands (w W e r R, s///w, s///e), or that it can't parse.
func sedUnsafe(s string) string {
	i := 0
	n := len(s)
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
	}
	address := func() bool {
		switch {
		case i < n && s[i] >= '0' && s[i] <= '9':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case i < n && s[i] == '$':
			i++
		case i < n && (s[i] == '/' || s[i] == '\\'):
			d := byte('/')
			if s[i] == '\\' {
				i++
				if i >= n {
					return false
				}
				d = s[i]
			}
			i++
			for i < n && s[i] != d {
				if s[i] == '\\' {
					i++
				}
				i++
			}
			if i >= n {
				return false
			}
			i++
			for i < n && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
		}
		return true
	}
	for steps := 0; i < n && steps < 10000; steps++ {
		skipSpace()
		if i >= n {
			break
		}
		if !address() {
			return "(unparsed)"
		}
		if i < n && s[i] == ',' {
			i++
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return "(unparsed)"
			}
		}
		for i < n && (s[i] == ' ' || s[i] == '!') {
			i++
		}
		if i >= n {
			return "(unparsed)"
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
			if (cmd == 'l' || cmd == 'q' || cmd == 'Q') && i < n {
				for i < n && s[i] >= '0' && s[i] <= '9' {
					i++
				}
			}
		case 'q', 'Q':
			for i < n && (s[i] == ' ' || s[i] >= '0' && s[i] <= '9') {
				i++
			}
		case '#':
			for i < n && s[i] != '\n' {
				i++
			}
		case ':', 'b', 't', 'T':
			for i < n && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case 'a', 'i', 'c':
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 's', 'y':
			if i >= n || s[i] == '\\' || s[i] == '\n' {
				return "(unparsed)"
			}
			d := s[i]
			i++
			for part := 0; part < 2; part++ {
				for i < n && s[i] != d {
					if s[i] == '\\' {
						i++
					}
					i++
				}
				if i >= n {
					return "(unparsed)"
				}
				i++
			}
			if cmd == 's' {
				for i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					switch s[i] {
					case 'w', 'W':
						return "s///w"
					case 'e':
						return "s///e"
					case 'g', 'p', 'i', 'I', 'm', 'M', ' ':
					default:
						if s[i] < '0' || s[i] > '9' {
							return "(unparsed)"
						}
					}
					i++
				}
			}
		case 'w', 'W', 'e', 'r', 'R', 'v', 'L':
			return string(cmd)
		default:
			return "(unparsed)"
		}
	}
	return ""
}

func runChmod(a *analyzer, st *state, c *cmdCall) {
	// A mode like -w looks like an option: take it out first.
	var args []field
	mode := false
	for _, f := range c.args {
		if s, ok := f.lit(); ok && !mode && len(s) > 1 && s[0] == '-' && strings.Trim(s[1:], "rwxXstugo") == "" && !strings.ContainsAny(s[1:], "fvcR") {
			mode = true
			continue
		}
		args = append(args, f)
	}
	cc := *c
	cc.args = args
	sp := &optSpec{flags: "cfvR", long: longs("changes silent quiet verbose recursive reference= preserve-root no-preserve-root")}
	opts, ops, ok := a.parse(st, &cc, sp)
	if !ok {
		return
	}
	if ref := values(opts, "reference"); len(ref) > 0 {
		a.emitPaths(st, ref, zones.OpRead, c.name, pathOpts{follow: true})
		mode = true
	}
	if !mode && len(ops) > 0 {
		ops = ops[1:]
	}
	if c.dynamic() {
		a.emit(Effect{Op: zones.OpModify, Unknown: true, Command: c.name})
	}
	a.emitPaths(st, ops, zones.OpModify, c.name, pathOpts{follow: true, subtree: has(opts, "R", "recursive")})
}

func runChown(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "cfvRhHLP", long: longs("changes silent quiet verbose recursive reference= from= dereference no-dereference preserve-root no-preserve-root")}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	if ref := values(opts, "reference"); len(ref) > 0 {
		a.emitPaths(st, ref, zones.OpRead, c.name, pathOpts{follow: true})
	} else if len(ops) > 0 {
		ops = ops[1:]
	}
	if c.dynamic() {
		a.emit(Effect{Op: zones.OpModify, Unknown: true, Command: c.name})
	}
	if has(opts, "R", "recursive") && has(opts, "L", "dereference") {
		a.emit(Effect{Op: zones.OpModify, Unknown: true, Command: c.name})
	}
	a.emitPaths(st, ops, zones.OpModify, c.name, pathOpts{follow: !has(opts, "h", "no-dereference"), subtree: has(opts, "R", "recursive")})
}

func runTar(a *analyzer, st *state, c *cmdCall) {
	args := c.args
	// Old style: the first word is a bundle without a dash (tar xzf a.tar).
	if len(args) > 0 {
		if s, ok := args[0].lit(); ok && s != "" && !strings.HasPrefix(s, "-") {
			var out []field
			next := 1
			for _, ch := range s {
				out = append(out, litField("-"+string(ch)))
				if strings.ContainsRune("fCXTbIF", ch) && next < len(args) {
					out = append(out, args[next])
					next++
				}
			}
			args = append(out, args[next:]...)
		}
	}
	cc := *c
	cc.args = args
	sp := &optSpec{flags: "cxtruAdvzjJaZkpOhSWmo", valued: "fCXTbIF", long: longs("create extract get list append update concatenate catenate diff compare file= directory= verbose gzip gunzip bzip2 xz lzma zstd auto-compress keep-old-files skip-old-files preserve-permissions same-permissions to-stdout dereference sparse verify touch no-same-owner no-same-permissions numeric-owner exclude= exclude-from= files-from= wildcards no-wildcards anchored strip-components= overwrite keep-newer-files one-file-system totals owner= group= mode= mtime= sort= format= exclude-vcs exclude-vcs-ignores null show-transformed-names transform= xform= warning= record-size= blocking-factor= force-local to-command= use-compress-program= info-script= new-volume-script= checkpoint-action= rsh-command= rmt-command="), dynamic: true}
	opts, ops, ok := a.parse(st, &cc, sp)
	if !ok {
		return
	}
	for _, f := range values(opts, "f", "file") {
		if s, ok := f.lit(); ok && strings.Contains(s, ":") && !has(opts, "force-local") {
			a.exec(st, "tar", ProgramOption, "tar -f host:file (remote shell)")
			return
		}
	}
	dir := litField(".")
	if d := values(opts, "C", "directory"); len(d) > 0 {
		dir = d[len(d)-1]
		if len(d) > 1 {
			dir = field{meta: -1, unknown: true}
		}
	}
	var archive []field
	for _, f := range values(opts, "f", "file") {
		if s, ok := f.lit(); !ok || s != "-" {
			archive = append(archive, f)
		}
	}
	for _, o := range opts {
		switch o.name {
		case "to-command", "use-compress-program", "I", "info-script", "F", "new-volume-script", "checkpoint-action", "rsh-command", "rmt-command":
			a.exec(st, "tar", ProgramOption, "tar "+dash(o.name))
			return
		}
	}
	a.emitPaths(st, values(opts, "X", "T", "exclude-from", "files-from"), zones.OpRead, "tar", pathOpts{follow: true})
	toStdout := has(opts, "O", "to-stdout")
	switch {
	case has(opts, "x", "extract", "get"):
		a.emitPaths(st, archive, zones.OpRead, "tar", pathOpts{follow: true})
		if toStdout {
			return
		}
		r := a.resolve(st, dir, true)
		a.emitResolved(r, zones.OpModify, "tar", pathOpts{subtree: true})
		a.emitResolved(r, zones.OpDelete, "tar", pathOpts{subtree: true})
		a.taintResolved(st, r, false)
	case has(opts, "t", "list", "d", "diff", "compare"):
		a.emitPaths(st, archive, zones.OpRead, "tar", pathOpts{follow: true})
		if has(opts, "d", "diff", "compare") {
			a.tarMembers(st, dir, ops)
		}
	case has(opts, "c", "create", "r", "append", "u", "update", "A", "concatenate", "catenate"):
		a.emitPaths(st, archive, zones.OpCreate, "tar", pathOpts{follow: true, mode: orCreate})
		if has(opts, "h", "dereference") {
			a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "tar"})
		}
		a.tarMembers(st, dir, ops)
	default:
		a.exec(st, "tar", UnknownOption, "tar (no mode)")
	}
}

func (a *analyzer) tarMembers(st *state, dir field, ops []field) {
	for _, m := range ops {
		f := m
		if s, ok := m.lit(); ok && !filepath.IsAbs(s) && !dir.unknown {
			f = field{s: filepath.Join(dir.s, s), meta: -1}
		} else if !m.unknown && !filepath.IsAbs(m.s) && dir.unknown {
			f = field{meta: -1, unknown: true}
		}
		a.pathEffect(st, f, zones.OpRead, "tar", pathOpts{follow: true, subtree: true})
	}
}

func runUnzip(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "lvtzpoqnjCaLVXKMUuf", valued: "dP", dynamic: true}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok || len(ops) == 0 {
		return
	}
	a.pathEffect(st, ops[0], zones.OpRead, "unzip", pathOpts{follow: true})
	if has(opts, "l", "v", "t", "z", "p") {
		return
	}
	dir := litField(".")
	if d := values(opts, "d"); len(d) > 0 {
		dir = d[len(d)-1]
	}
	r := a.resolve(st, dir, true)
	a.emitResolved(r, zones.OpModify, "unzip", pathOpts{subtree: true})
	a.taintResolved(st, r, false)
}

func runRsync(a *analyzer, st *state, c *cmdCall) {
	sp := &optSpec{flags: "avrlptgoDzhPnuciqWxHKLkm", long: longs("archive verbose recursive links perms times group owner devices specials compress human-readable progress partial dry-run update checksum itemize-changes quiet whole-file one-file-system hard-links keep-dirlinks copy-links copy-dirlinks delete delete-after delete-before delete-during delete-excluded exclude= include= exclude-from= include-from= stats ignore-existing size-only existing prune-empty-dirs rsh= rsync-path="), valued: "e", dynamic: true}
	opts, ops, ok := a.parse(st, c, sp)
	if !ok {
		return
	}
	if has(opts, "e", "rsh", "rsync-path") {
		a.exec(st, "rsync", ProgramOption, "rsync --rsh/--rsync-path")
		return
	}
	if len(ops) < 2 {
		a.emitPaths(st, ops, zones.OpRead, "rsync", pathOpts{follow: true, subtree: true})
		return
	}
	for _, f := range ops {
		if s, ok := f.lit(); ok && strings.Contains(s, ":") {
			a.exec(st, "rsync", ProgramOption, "rsync remote (runs a remote shell)")
			return
		}
	}
	a.emitPaths(st, values(opts, "exclude-from", "include-from"), zones.OpRead, "rsync", pathOpts{follow: true})
	srcs, dst := ops[:len(ops)-1], ops[len(ops)-1]
	a.emitPaths(st, srcs, zones.OpRead, "rsync", pathOpts{follow: true, subtree: true})
	if has(opts, "L", "copy-links") {
		a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "rsync"})
	}
	if has(opts, "n", "dry-run") {
		return
	}
	r := a.resolve(st, dst, true)
	a.emitResolved(r, zones.OpModify, "rsync", pathOpts{subtree: true})
	if has(opts, "delete", "delete-after", "delete-before", "delete-during", "delete-excluded") {
		a.emitResolved(r, zones.OpDelete, "rsync", pathOpts{subtree: true})
	}
	if !has(opts, "L", "copy-links") {
		a.taintResolved(st, r, false)
	}
}

var findTestsWithArg = map[string]bool{"-name": true, "-iname": true, "-path": true, "-ipath": true, "-regex": true,
	"-iregex": true, "-type": true, "-xtype": true, "-size": true, "-mtime": true, "-mmin": true, "-atime": true,
	"-amin": true, "-ctime": true, "-cmin": true, "-perm": true, "-user": true, "-group": true, "-uid": true,
	"-gid": true, "-links": true, "-inum": true, "-maxdepth": true, "-mindepth": true, "-used": true,
	"-wholename": true, "-iwholename": true, "-lname": true, "-ilname": true, "-fstype": true, "-regextype": true,
	"-printf": true, "-context": true}

var findTestsNoArg = map[string]bool{"-empty": true, "-executable": true, "-readable": true, "-writable": true,
	"-true": true, "-false": true, "-prune": true, "-quit": true, "-print": true, "-print0": true, "-ls": true,
	"-nouser": true, "-nogroup": true, "-depth": true, "-xdev": true, "-mount": true, "-follow": true,
	"-noleaf": true, "-daystart": true, "-ignore_readdir_race": true, "-noignore_readdir_race": true, "-not": true,
	"-a": true, "-and": true, "-o": true, "-or": true, "!": true, "(": true, ")": true, ",": true, "-d": true}

func runFind(a *analyzer, st *state, c *cmdCall) {
	args := c.args
	i := 0
	for i < len(args) {
		s, ok := args[i].lit()
		if !ok {
			break
		}
		if s == "-H" || s == "-L" || s == "-P" {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		if strings.HasPrefix(s, "-O") {
			i++
			continue
		}
		break
	}
	follow := false
	for _, f := range args[:i] {
		if s, _ := f.lit(); s == "-L" {
			follow = true
		}
	}
	for _, f := range args {
		if s, _ := f.lit(); s == "-follow" {
			follow = true
		}
	}
	if follow {
		a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "find"})
	}
	var starts []field
	for i < len(args) {
		s, ok := args[i].lit()
		if ok && (strings.HasPrefix(s, "-") || s == "(" || s == "!") {
			break
		}
		if !ok && args[i].unknown {
			a.exec(st, "find", DynamicArgument, "find")
			return
		}
		starts = append(starts, args[i])
		i++
	}
	if len(starts) == 0 {
		starts = []field{litField(".")}
	}
	var res []resolved
	for _, s := range starts {
		r := a.resolve(st, s, true)
		res = append(res, r)
		a.emitResolved(r, zones.OpRead, "find", pathOpts{subtree: true})
	}
	for i < len(args) {
		f := args[i]
		s, ok := f.lit()
		if !ok {
			a.exec(st, "find", DynamicArgument, "find")
			return
		}
		i++
		switch {
		case findTestsNoArg[s]:
		case findTestsWithArg[s]:
			i++
		case s == "-newer" || s == "-anewer" || s == "-cnewer" || s == "-samefile" || strings.HasPrefix(s, "-newer") && len(s) == 8 || s == "-files0-from":
			if i < len(args) {
				a.pathEffect(st, args[i], zones.OpRead, "find", pathOpts{follow: true})
			}
			i++
		case s == "-delete":
			for _, r := range res {
				a.emitResolved(r, zones.OpDelete, "find", pathOpts{subtree: true})
			}
		case s == "-fprint" || s == "-fprint0" || s == "-fls":
			if i < len(args) {
				a.pathEffect(st, args[i], zones.OpCreate, "find", pathOpts{follow: true, mode: orCreate})
			}
			i++
		case s == "-fprintf":
			if i < len(args) {
				a.pathEffect(st, args[i], zones.OpCreate, "find", pathOpts{follow: true, mode: orCreate})
			}
			i += 2
		case s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir":
			j := i
			for j < len(args) {
				t, ok := args[j].lit()
				if ok && (t == ";" || t == "+") {
					break
				}
				j++
			}
			if j >= len(args) || j == i {
				return // find rejects it
			}
			a.findExec(st, c, args[i:j], starts, s == "-execdir" || s == "-okdir")
			i = j + 1
		default:
			a.exec(st, "find", UnknownOption, "find "+s)
			return
		}
	}
}

// findExec analyses an -exec command once per start point, {} standing for
// the start point's whole subtree.
func (a *analyzer) findExec(st *state, c *cmdCall, cmd []field, starts []field, inDir bool) {
	name, ok := cmd[0].lit()
	if !ok {
		a.refuse(DynamicCommand, "find", "the command find -exec runs is not a literal", c.pos)
		return
	}
	if privileged[baseName(name)] {
		a.programs[baseName(name)] = true
		a.refuse(Privilege, name, baseName(name), c.pos)
		return
	}
	for _, s := range starts {
		inner := st.clone()
		if inDir {
			inner.cwdKnown = false
		}
		args := make([]field, 0, len(cmd)-1)
		for _, f := range cmd[1:] {
			if t, ok := f.lit(); ok && strings.Contains(t, "{}") {
				if s.unknown {
					args = append(args, field{meta: -1, unknown: true})
					continue
				}
				base := strings.TrimRight(s.s, "/")
				args = append(args, field{s: base + "/*", meta: len(base) + 1, deep: true})
				continue
			}
			args = append(args, f)
		}
		if _, known := table[baseName(name)]; !known {
			a.programs[baseName(name)] = true
			a.exec(st, "find", ProgramOption, "find -exec "+name)
			return
		}
		inner.cwd = st.cwd
		a.dispatch(inner, &cmdCall{name: name, args: args, depth: c.depth + 1, pos: c.pos, noFn: true})
		st.foldFS(inner)
	}
}

func safeSetOption(o string) bool {
	switch o {
	case "errexit", "nounset", "xtrace", "pipefail", "noglob", "noclobber", "verbose", "allexport",
		"errtrace", "functrace", "notify", "monitor", "noexec", "nolog":
		return true
	}
	return false
}
