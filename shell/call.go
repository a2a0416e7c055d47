package shell

import (
	"maps"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// cmdCall is one command with its expanded arguments.
type cmdCall struct {
	name  string
	args  []field        // after the name
	words []*syntax.Word // the original words when they map one to one to args, else nil
	depth int            // wrapper nesting
	pos   syntax.Pos
	noFn  bool // skip shell functions (command, exec, env…)
}

// dynamic reports an unknown word that may be, or split into, options and
// more paths, whatever place the command gives it.
func (c *cmdCall) dynamic() bool {
	operands := false
	for _, f := range c.args {
		if s, ok := f.lit(); ok && s == "--" {
			operands = true
		}
		// After "--" a quoted word is one operand; an unquoted one may
		// still split into several.
		if f.unknown && (!operands || !f.quoted) {
			return true
		}
	}
	return false
}

func (a *analyzer) call(st *state, ce *syntax.CallExpr, rs []*syntax.Redirect) {
	if ce == nil {
		a.bareRedirects(st, rs)
		return
	}
	// Prefix assignments are expanded first; alone they set variables.
	temps := a.assigns(st, ce.Assigns, len(ce.Args) == 0)
	if len(ce.Args) == 0 {
		a.bareRedirects(st, rs)
		return
	}
	fields := a.words(st, ce.Args)
	if a.stop() {
		return
	}
	if len(fields) == 0 {
		a.bareRedirects(st, rs)
		return
	}
	head := fields[0]
	name, ok := head.lit()
	if !ok || hasExpansion(ce.Args[0]) {
		a.refuse(DynamicCommand, wordText(ce.Args[0]), "the command name is not a literal", ce.Args[0].Pos())
		return
	}
	c := &cmdCall{name: name, args: fields[1:], pos: ce.Pos()}
	if len(fields) == len(ce.Args) {
		c.words = ce.Args[1:]
	}
	// exec with only redirects binds them for the rest of the script.
	if name == "exec" && len(c.args) == 0 {
		a.redirects(st, rs, "exec", st)
		return
	}
	saved, in, text := maps.Clone(st.fds), st.stdin, st.stdinText
	a.redirects(st, rs, baseName(name), st)
	// FOO=x cmd: eval and functions see FOO during the command only.
	old := map[string]*value{}
	for k, v := range temps {
		old[k] = st.vars[k]
		st.vars[k] = v
	}
	a.dispatch(st, c)
	for k, v := range old {
		if v == nil {
			delete(st.vars, k)
		} else {
			st.vars[k] = v
		}
	}
	st.fds, st.stdin, st.stdinText = saved, in, text
}

func (a *analyzer) bareRedirects(st *state, rs []*syntax.Redirect) {
	if len(rs) == 0 {
		return
	}
	c := st.clone()
	a.redirects(c, rs, ">", c)
	st.foldFS(c)
	for k, v := range c.vars {
		st.vars[k] = v
	}
}

// dangerousEnv names variables that make bash or the programs it runs load
// code or reinterpret what the analysis saw.
func dangerousEnv(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "PATH", "CDPATH", "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND",
		"SHELLOPTS", "BASHOPTS", "BASH_XTRACEFD", "POSIXLY_CORRECT", "GCONV_PATH", "BASH_LOADABLES_PATH",
		"EXECIGNORE", "HOME", "OLDPWD", "PWD", "TMPDIR", "GLOBIGNORE", "BASH_COMPAT", "INPUTRC", "NLSPATH", "LOCPATH",
		// Read by programs in the table as extra options, some of which run programs.
		"TAR_OPTIONS", "GREP_OPTIONS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "GZIP", "XZ_OPT", "XZ_DEFAULTS",
		"BZIP", "BZIP2", "ZSTD_CLEVEL", "UNZIP", "UNZIPOPT", "TAPE", "SHELL",
		// A file of extra options (rg --pre in it runs a program), or of data read.
		"RIPGREP_CONFIG_PATH", "MAGIC":
		return true
	}
	return strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_")
}

// assigns expands assignments; persist sets them in st.
func (a *analyzer) assigns(st *state, as []*syntax.Assign, persist bool) map[string]*value {
	out := map[string]*value{}
	for _, as := range as {
		if a.stop() {
			return out
		}
		name := as.Name.Value
		if dangerousEnv(name) {
			a.exec(st, name+"=", DangerousEnv, name)
		}
		if as.Index != nil {
			a.arith(st, as.Index)
		}
		v := unknownValue()
		switch {
		case as.Array != nil:
			for _, e := range as.Array.Elems {
				if e.Index != nil {
					a.arith(st, e.Index)
				}
				a.word(st, e.Value, modeFields)
			}
		case as.Value != nil:
			fs := a.word(st, as.Value, modeAssign)
			if s, ok := fs[0].lit(); ok {
				v = literalValue(s)
			} else if isArithValue(as.Value) {
				v = &value{numeric: true}
			}
		case !as.Naked:
			v = literalValue("")
		default:
			continue
		}
		if as.Index != nil || as.Array != nil {
			v = unknownValue()
		}
		if as.Append {
			old := st.vars[name]
			if old != nil && old.known && v.known && len(old.alts) == 1 && !old.alts[0].match {
				v = literalValue(old.alts[0].s + v.alts[0].s)
			} else {
				v = unknownValue()
			}
		}
		if st.intVars[name] && !v.numeric {
			a.exec(st, name+"=", DynamicArithmetic, "declare -i "+name)
			v = &value{numeric: true}
		}
		out[name] = v
		if persist {
			st.setVar(name, v)
		}
	}
	return out
}

func (a *analyzer) decl(st *state, c *syntax.DeclClause) {
	variant := c.Variant.Value
	var flags string
	var rest []*syntax.Assign
	for _, as := range c.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			s, ok := staticWord(as.Value)
			if !ok {
				a.word(st, as.Value, modeFields)
				a.exec(st, variant, DynamicArithmetic, variant+" "+wordText(as.Value))
				continue
			}
			if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
				flags += s[1:]
				continue
			}
			if !validName(s) {
				a.exec(st, variant, DynamicArithmetic, variant+" "+s)
			}
			continue
		}
		rest = append(rest, as)
	}
	for _, f := range flags {
		switch f {
		case 'a', 'A', 'r', 'x', 'g', 't', 'l', 'u', 'p', 'f', 'F':
		case 'i':
			for _, as := range rest {
				st.intVars[as.Name.Value] = true
			}
		default: // -n nameref and anything else
			a.exec(st, variant, ShellBuiltin, variant+" -"+string(f))
		}
	}
	if strings.ContainsAny(flags, "f") && variant != "declare" && variant != "typeset" && variant != "export" {
		return
	}
	for _, as := range rest {
		if as.Naked && as.Value == nil && as.Array == nil {
			if dangerousEnv(as.Name.Value) && (variant == "export" || strings.Contains(flags, "x")) {
				a.exec(st, variant, DangerousEnv, as.Name.Value)
			}
			if variant == "local" || variant == "declare" || variant == "typeset" {
				st.setVar(as.Name.Value, unknownValue())
			}
			continue
		}
		a.assigns(st, []*syntax.Assign{as}, true)
		if strings.ContainsAny(flags, "aA") {
			st.setVar(as.Name.Value, unknownValue())
		}
	}
}

// baseName is the program a literal command word runs, for the tables.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

var systemDirs = map[string]bool{"/bin": true, "/usr/bin": true, "/sbin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true}

var privileged = map[string]bool{"sudo": true, "su": true, "doas": true, "pkexec": true, "run0": true,
	"sudoedit": true, "newgrp": true, "sg": true, "runuser": true, "setpriv": true, "capsh": true}

func (a *analyzer) dispatch(st *state, c *cmdCall) {
	if !a.step() {
		return
	}
	if c.depth > a.opts.MaxDepth {
		a.refuse(TooDeep, c.name, "wrappers nested past depth", c.pos)
		return
	}
	name := c.name
	if strings.Contains(name, "/") {
		dir := filepath.Dir(name)
		if !systemDirs[filepath.Clean(dir)] {
			a.programs[baseName(name)] = true
			if privileged[baseName(name)] {
				a.refuse(Privilege, name, baseName(name), c.pos)
				return
			}
			a.exec(st, name, Script, name)
			return
		}
		name = baseName(name)
		c.noFn = true
	}
	if privileged[name] {
		a.programs[name] = true
		a.refuse(Privilege, name, name, c.pos)
		return
	}
	if bodies, ok := st.funcs[name]; ok && !c.noFn {
		a.callFunc(st, c, bodies)
		return
	}
	if _, ok := builtins[name]; !ok {
		a.programs[name] = true
	}
	h, ok := table()[name]
	if !ok {
		if why, ok := execPrograms[name]; ok {
			a.exec(st, name, why, name)
			return
		}
		if isInterpreter(name) {
			a.exec(st, name, Interpreter, name)
			return
		}
		a.exec(st, name, UnknownProgram, name)
		return
	}
	h.run(a, st, c)
}

func (a *analyzer) callFunc(st *state, c *cmdCall, bodies []*syntax.Stmt) {
	if st.calls >= a.opts.MaxDepth {
		a.refuse(TooDeep, c.name, "function calls nested past depth", c.pos)
		return
	}
	out := (*state)(nil)
	for _, b := range bodies {
		s := st.clone()
		if b == nil {
			// The name may not be a function here: the program runs instead.
			nc := *c
			nc.noFn = true
			a.dispatch(s, &nc)
		} else {
			s.calls++
			old := s.vars
			s.vars = maps.Clone(old)
			for i := 0; i < 10; i++ {
				delete(s.vars, string(rune('0'+i)))
			}
			a.stmt(s, b)
			s.calls--
		}
		if out == nil {
			out = s
		} else {
			out = join(out, s)
		}
	}
	if out != nil {
		// local variables are restored when the function returns, which
		// the walk does not model: keep both the values before and after.
		*st = *join(st, out)
	}
}

var interpreterPrefixes = []string{"python", "pypy", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
	"lua", "luajit", "rscript", "awk", "gawk", "mawk", "nawk", "tclsh", "wish", "osascript", "expect",
	"zsh", "ksh", "mksh", "fish", "csh", "tcsh", "pwsh", "powershell", "julia", "java", "groovy", "scala",
	"kotlin", "erl", "elixir", "iex", "guile", "racket", "sbcl", "clisp", "ocaml", "ghci", "runghc", "swift",
	"dotnet", "mono", "busybox", "toybox"}

func isInterpreter(name string) bool {
	l := strings.ToLower(name)
	for _, p := range interpreterPrefixes {
		if l == p || strings.HasPrefix(l, p) && len(l) > len(p) && (l[len(p)] >= '0' && l[len(p)] <= '9' || l[len(p)] == '.' || l[len(p)] == '-') {
			return true
		}
	}
	return false
}

var execPrograms = map[string]ExecWhy{
	"git": VersionControl, "gh": VersionControl, "hg": VersionControl, "svn": VersionControl, "jj": VersionControl,
	"make": BuildTool, "gmake": BuildTool, "cmake": BuildTool, "ninja": BuildTool, "npm": BuildTool,
	"npx": BuildTool, "pnpm": BuildTool, "yarn": BuildTool, "pip": BuildTool, "pip3": BuildTool, "pipx": BuildTool,
	"go": BuildTool, "cargo": BuildTool, "rustc": BuildTool, "gcc": BuildTool, "cc": BuildTool, "clang": BuildTool,
	"g++": BuildTool, "mvn": BuildTool, "gradle": BuildTool, "bazel": BuildTool, "just": BuildTool,
	"poetry": BuildTool, "uv": BuildTool, "uvx": BuildTool, "bundle": BuildTool, "gem": BuildTool,
	"composer": BuildTool, "rake": BuildTool, "mise": BuildTool, "asdf": BuildTool,
	"source": Script, ".": Script,
	"alias": ShellBuiltin, "unalias": ShellBuiltin, "hash": ShellBuiltin, "enable": ShellBuiltin,
	"trap": ShellBuiltin, "shopt": ShellBuiltin, "bind": ShellBuiltin, "complete": ShellBuiltin,
	"compgen": ShellBuiltin, "compopt": ShellBuiltin, "fc": ShellBuiltin, "history": ShellBuiltin,
	"kill": ShellBuiltin, "fg": ShellBuiltin, "bg": ShellBuiltin, "suspend": ShellBuiltin, "logout": ShellBuiltin,
	"ulimit": ShellBuiltin, "disown": ShellBuiltin, "coproc": ShellBuiltin,
	// The machine, not the vault: what they change no zone covers.
	"mount": Machine, "umount": Machine, "swapon": Machine, "swapoff": Machine, "sysctl": Machine,
	"ip": Machine, "ifconfig": Machine, "route": Machine, "iptables": Machine, "ip6tables": Machine,
	"nft": Machine, "tc": Machine, "hostnamectl": Machine, "timedatectl": Machine, "hwclock": Machine,
	"systemctl": Machine, "service": Machine, "shutdown": Machine, "reboot": Machine, "poweroff": Machine,
	"halt": Machine, "modprobe": Machine, "insmod": Machine, "rmmod": Machine, "losetup": Machine,
	"setcap": Machine, "chroot": Machine, "unshare": Machine, "nsenter": Machine, "domainname": Machine,
	"nmcli": Machine, "rfkill": Machine, "loadkeys": Machine, "setfont": Machine, "crontab": Machine,
	"at": Machine, "passwd": Machine, "useradd": Machine, "usermod": Machine, "chsh": Machine,
}

// builtins are names that run no program (not listed in Programs).
var builtins = map[string]bool{
	"cd": true, "pushd": true, "popd": true, "dirs": true, "echo": true, "printf": true, "true": true,
	"false": true, ":": true, "test": true, "[": true, "pwd": true, "set": true, "shift": true, "read": true,
	"exit": true, "return": true, "break": true, "continue": true, "wait": true, "unset": true, "eval": true,
	"exec": true, "command": true, "builtin": true, "type": true, "help": true, "times": true, "umask": true,
	"jobs": true, "getopts": true, "mapfile": true, "readarray": true, "caller": true, "let": true,
	"local": true, "export": true, "declare": true, "typeset": true, "readonly": true, "source": true,
	".": true, "alias": true, "unalias": true, "hash": true, "enable": true, "trap": true, "shopt": true,
	"bind": true, "complete": true, "compgen": true, "compopt": true, "fc": true, "history": true,
	"kill": true, "fg": true, "bg": true, "suspend": true, "logout": true, "ulimit": true, "disown": true,
}

// sub makes a call for a wrapped command: args[i] is its name.
func (c *cmdCall) sub(i int) *cmdCall {
	n := &cmdCall{args: c.args[i+1:], depth: c.depth + 1, pos: c.pos, noFn: true}
	n.name, _ = c.args[i].lit()
	if c.words != nil && len(c.words) == len(c.args) {
		n.words = c.words[i+1:]
	}
	return n
}

// wrap runs the command at args[i] (the wrapper's inner command).
func (a *analyzer) wrap(st *state, c *cmdCall, i int) {
	if i >= len(c.args) {
		return
	}
	if _, ok := c.args[i].lit(); !ok {
		a.refuse(DynamicCommand, c.name, "the wrapped command name is not a literal", c.pos)
		return
	}
	a.dispatch(st, c.sub(i))
}

// hasExpansion: a command word with a parameter, command or arithmetic
// expansion is a dynamic command name, even when its value is tracked.
func hasExpansion(w *syntax.Word) bool {
	return partsExpand(w.Parts)
}

func partsExpand(ps []syntax.WordPart) bool {
	for _, p := range ps {
		switch p := p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst:
			return true
		case *syntax.DblQuoted:
			if partsExpand(p.Parts) {
				return true
			}
		case *syntax.BraceExp:
			for _, e := range p.Elems {
				if partsExpand(e.Parts) {
					return true
				}
			}
		}
	}
	return false
}

// isArithValue: x=$((…)) holds a number whatever the operands were.
func isArithValue(w *syntax.Word) bool {
	ps := w.Parts
	if len(ps) == 1 {
		if q, ok := ps[0].(*syntax.DblQuoted); ok {
			ps = q.Parts
		}
	}
	if len(ps) != 1 {
		return false
	}
	_, ok := ps[0].(*syntax.ArithmExp)
	return ok
}
