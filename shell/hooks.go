package shell

import (
	"path/filepath"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// machineOperands makes exec a command whose operands, but those show
// says only show something, set the machine (hostname NAME, date MMDDhhmm).
func machineOperands(show func(string) bool) func(a *analyzer, st *state, inv *invocation) bool {
	return func(a *analyzer, st *state, inv *invocation) bool {
		for _, f := range inv.ops {
			if s, ok := f.lit(); !ok || !show(s) {
				if !ok {
					s = "(dynamic)"
				}
				a.exec(st, inv.name, Machine, inv.name+" "+s)
				return false
			}
		}
		return true
	}
}

// envHook runs the command env starts, after its NAME=VALUE operands, in
// a state where -C has changed the folder.
func envHook(a *analyzer, st *state, inv *invocation) bool {
	inner := st.clone()
	for _, d := range values(inv.opts, "C", "chdir") {
		runCd(a, inner, &cmdCall{name: "cd", args: []field{d}})
	}
	for i, f := range inv.ops {
		s, ok := f.lit()
		switch {
		case !ok:
			a.refuse(DynamicCommand, "env", "a dynamic argument to env", inv.pos)
			return false
		case s == "-": // the same as -i
		case strings.Contains(s, "="):
			if name := s[:strings.IndexByte(s, '=')]; dangerousEnv(name) {
				a.exec(st, "env", DangerousEnv, name)
			}
		default:
			a.wrap(inner, inv.cmdCall, inv.argIndex(i))
			st.foldFS(inner)
			return false
		}
	}
	return false
}

// xargsHook runs the command xargs starts with what it reads as more
// arguments, or in place of the replace string (-I).
func xargsHook(a *analyzer, st *state, inv *invocation) bool {
	if has(inv.opts, "process-slot-var") {
		a.exec(st, "xargs", DangerousEnv, "xargs --process-slot-var")
		return false
	}
	c := inv.cmdCall
	inner := &cmdCall{name: "echo", depth: c.depth + 1, pos: c.pos, noFn: true}
	if len(inv.ops) > 0 {
		name, ok := inv.ops[0].lit()
		if !ok {
			a.refuse(DynamicCommand, "xargs", "the command xargs runs is not a literal", c.pos)
			return false
		}
		inner.name = name
		inner.args = append([]field(nil), c.args[inv.argIndex(0)+1:]...)
	}
	repl := ""
	for _, o := range inv.opts {
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
	return false
}

// builtinHook: builtin NAME runs the builtin NAME, and fails for any other.
func builtinHook(a *analyzer, st *state, inv *invocation) bool {
	c := inv.cmdCall
	if len(c.args) == 0 {
		return false
	}
	n, ok := c.args[0].lit()
	if !ok {
		a.refuse(DynamicCommand, "builtin", "a dynamic builtin name", c.pos)
		return false
	}
	if !builtins[n] {
		return false // not a builtin: bash fails
	}
	a.wrap(st, c, 0)
	return false
}

// jqArgs takes out what getopt can't describe: --arg NAME VALUE and its
// kin take two values, and --args ends the options and the files.
func jqArgs(inv *invocation) {
	var args []field
	for i := 0; i < len(inv.args); i++ {
		s, _ := inv.args[i].lit()
		switch s {
		case "--arg", "--argjson", "--slurpfile", "--rawfile":
			if (s == "--slurpfile" || s == "--rawfile") && i+2 < len(inv.args) {
				inv.reads = append(inv.reads, inv.args[i+2])
			}
			for _, v := range inv.args[i+1 : min(i+3, len(inv.args))] {
				if v.unknown && v.splits || !v.unknown && v.meta >= 0 {
					// It may be several words: those after it are read
					// as options again, so the parser must see a word it
					// can't fix there.
					args = append(args, field{meta: -1, unknown: true, splits: true})
					break
				}
			}
			i += 2
			continue
		case "--args", "--jsonargs":
			i = len(inv.args)
			continue
		}
		args = append(args, inv.args[i])
	}
	inv.args = args
}

// ddOperands are dd's KEY=VALUE operands and what each does to its value.
var ddOperands = map[string]role{"if": readsFile, "of": creates,
	"bs": notPath, "ibs": notPath, "obs": notPath, "cbs": notPath, "count": notPath, "skip": notPath,
	"seek": notPath, "iseek": notPath, "oseek": notPath, "conv": notPath, "status": notPath,
	"iflag": notPath, "oflag": notPath}

func ddHook(a *analyzer, st *state, inv *invocation) bool {
	for _, f := range inv.args {
		s, ok := f.lit()
		if !ok {
			if f.unknown {
				a.exec(st, "dd", DynamicArgument, "dd")
				return false
			}
			s = f.s
		}
		k, v, found := strings.Cut(s, "=")
		if !found {
			a.exec(st, "dd", UnknownOption, "dd "+s)
			return false
		}
		r, known := ddOperands[k]
		if !known {
			a.exec(st, "dd", UnknownOption, "dd "+k+"=")
			return false
		}
		val := field{s: v, meta: -1}
		if f.meta >= 0 {
			val.meta = f.meta - len(k) - 1
		}
		a.operand(st, inv, r, val, -1, false)
	}
	return false
}

// sedScripts lets sed through only when every script is a literal that
// writes, reads and runs nothing.
func sedScripts(a *analyzer, st *state, inv *invocation) bool {
	if has(inv.opts, "f", "file") {
		a.exec(st, "sed", SedScript, "sed -f")
		return false
	}
	scripts := values(inv.opts, "e", "expression")
	if len(scripts) == 0 {
		if len(inv.ops) == 0 {
			return false
		}
		scripts = inv.ops[:1]
	}
	for _, s := range scripts {
		text, ok := s.lit()
		if !ok {
			a.exec(st, "sed", SedScript, "sed (dynamic script)")
			return false
		}
		if bad := sedUnsafe(text); bad != "" {
			a.exec(st, "sed", SedScript, "sed "+bad)
			return false
		}
	}
	return true
}

// edit is sed's operand: read, or with -i rewritten by rename, the
// original kept under the suffix.
func (a *analyzer) edit(st *state, inv *invocation, f field) {
	if !inv.is(inPlace) {
		a.emitPaths(st, []field{f}, zones.OpRead, inv.name, pathOpts{follow: true})
		return
	}
	suffix := ""
	if s := inv.values(inPlace); len(s) > 0 {
		suffix, _ = s[len(s)-1].lit()
	}
	r := a.resolve(st, f, inv.is(follow))
	a.emitResolved(r, zones.OpModify, inv.name, pathOpts{rename: true})
	if suffix != "" && !r.unknown && !r.none {
		if strings.Contains(suffix, "*") || strings.Contains(suffix, "/") {
			a.emit(Effect{Op: zones.OpCreate, Unknown: true, Command: inv.name})
		} else {
			a.emitResolved(resolved{abs: r.abs + suffix}, zones.OpCreate, inv.name, pathOpts{mode: orCreate})
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

// chmodMode takes out a mode that looks like an option (chmod -w f): it
// is the first operand.
func chmodMode(inv *invocation) {
	var args []field
	mode := false
	for _, f := range inv.args {
		if s, ok := f.lit(); ok && !mode && len(s) > 1 && s[0] == '-' && strings.Trim(s[1:], "rwxXstugo") == "" && !strings.ContainsAny(s[1:], "fvcR") {
			mode = true
			continue
		}
		args = append(args, f)
	}
	inv.args = args
	if mode {
		inv.on |= givesFirst
	}
}

// tarBundle spreads the old style's first word, a bundle without a dash
// (tar xzf a.tar), into options, each valued one taking the next word.
func tarBundle(inv *invocation) {
	args := inv.args
	if len(args) == 0 {
		return
	}
	s, ok := args[0].lit()
	if !ok || s == "" || strings.HasPrefix(s, "-") {
		return
	}
	var out []field
	next := 1
	for _, ch := range s {
		out = append(out, litField("-"+string(ch)))
		if strings.ContainsRune("fCXTbIF", ch) && next < len(args) {
			out = append(out, args[next])
			next++
		}
	}
	inv.args = append(out, args[next:]...)
}

// tarModes: what tar does depends on its mode. Extracting writes the whole
// tree of -C DIR; creating writes the archive and reads the members.
func tarModes(a *analyzer, st *state, inv *invocation) bool {
	opts := inv.opts
	for _, f := range values(opts, "f", "file") {
		if s, ok := f.lit(); ok && strings.Contains(s, ":") && !has(opts, "force-local") {
			a.exec(st, "tar", ProgramOption, "tar -f host:file (remote shell)")
			return false
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
	switch {
	case has(opts, "x", "extract", "get"):
		a.emitPaths(st, archive, zones.OpRead, "tar", pathOpts{follow: true})
		if has(opts, "O", "to-stdout") {
			return false
		}
		r := a.resolve(st, dir, true)
		a.emitResolved(r, zones.OpModify, "tar", pathOpts{subtree: true})
		a.emitResolved(r, zones.OpDelete, "tar", pathOpts{subtree: true})
		a.intoTree(st, r, "tar", zones.OpModify, zones.OpDelete)
		a.taintResolved(st, r, false)
	case has(opts, "t", "list", "d", "diff", "compare"):
		a.emitPaths(st, archive, zones.OpRead, "tar", pathOpts{follow: true})
		if has(opts, "d", "diff", "compare") {
			a.tarMembers(st, dir, inv.ops)
		}
	case has(opts, "c", "create", "r", "append", "u", "update", "A", "concatenate", "catenate"):
		a.emitPaths(st, archive, zones.OpCreate, "tar", pathOpts{follow: true, mode: orCreate})
		if inv.is(derefTree) {
			a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "tar"})
		}
		a.tarMembers(st, dir, inv.ops)
	default:
		a.exec(st, "tar", UnknownOption, "tar (no mode)")
	}
	return false
}

func (a *analyzer) tarMembers(st *state, dir field, ops []field) {
	for _, m := range ops {
		f := m
		if s, ok := m.lit(); ok && !filepath.IsAbs(s) && !dir.unknown {
			f = field{s: dir.s + "/" + s, meta: -1} // not cleaned: a ".." in it comes after dir's links
		} else if !m.unknown && !filepath.IsAbs(m.s) && dir.unknown {
			f = field{meta: -1, unknown: true}
		}
		a.pathEffect(st, f, zones.OpRead, "tar", pathOpts{follow: true, subtree: true})
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

// findExpression reads find's options, start points and expression: tests,
// actions that write or delete, and -exec commands, analysed in turn.
func findExpression(a *analyzer, st *state, inv *invocation) bool {
	c := inv.cmdCall
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
		if !ok && !a.optionSafe(st, args[i], false, "find") {
			// find * with a file named -delete deletes everything.
			a.exec(st, "find", DynamicArgument, "find")
			return false
		}
		starts = append(starts, args[i])
		i++
	}
	for j := i; j < len(args); j++ {
		if s, _ := args[j].lit(); s == "-files0-from" {
			// The start points are read from a file: any path at all.
			starts = []field{{meta: -1, unknown: true}}
			a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: "find"})
			break
		}
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
			return false
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
				a.removed(r)
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
				return false // find rejects it
			}
			a.findExec(st, c, args[i:j], starts, s == "-execdir" || s == "-okdir")
			i = j + 1
		default:
			a.exec(st, "find", UnknownOption, "find "+s)
			return false
		}
	}
	return false
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
			inner.cwdKnown, inner.pwd = false, ""
		}
		args := make([]field, 0, len(cmd)-1)
		for _, f := range cmd[1:] {
			if t, ok := f.lit(); ok && strings.Contains(t, "{}") {
				if s.unknown {
					args = append(args, field{meta: -1, unknown: true})
					continue
				}
				base := strings.TrimRight(s.s, "/")
				meta := len(base) + 1
				if s.meta >= 0 && s.meta < meta {
					meta = s.meta // a glob start (find *): {} is any path under its folder
				}
				args = append(args, field{s: base + "/*", meta: meta, deep: true})
				continue
			}
			args = append(args, f)
		}
		if _, known := table()[baseName(name)]; !known {
			a.programs[baseName(name)] = true
			a.exec(st, "find", ProgramOption, "find -exec "+name)
			return
		}
		inner.cwd = st.cwd
		a.dispatch(inner, &cmdCall{name: name, args: args, depth: c.depth + 1, pos: c.pos, noFn: true})
		st.foldFS(inner)
	}
}
