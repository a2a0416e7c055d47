package shell

import (
	"path/filepath"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// A spec says what one command does, as data: the options it knows and what
// each does to the effects, and the role of each operand. compiled.run is the
// one interpreter: it parses a call with the spec's options and turns the
// operands into effects by their roles. The table (table.go) holds a spec for
// every command the analysis knows.
//
// Hooks are only for the parts of a command that are not options and
// operands (a sed script, a find expression, tar's modes, dd's key=value
// operands, env's NAME=VALUE, xargs' replace string); they see the call
// already parsed by the same parser.
type spec struct {
	opts optSpec
	does does   // what each option does
	args []role // the operands' roles in order; the last one repeats
	// output is the 1-based place of an operand that is a file written
	// before the others are read (uniq in out); later operands are ignored.
	output int
	whole  bool // the operands are always whole subtrees (du, rg)
	here   bool // no path operand means the working directory (ls)
	// hereIfTree: no path operand means the working directory when the
	// operands are subtrees (grep -r).
	hereIfTree bool
	transfer   transfer // sources and a destination (mv, cp, install, ln, rsync)
	extracts   bool     // unless an option lists only, the archive is unpacked into the into folder (unzip)

	// rewrite adjusts the arguments before parsing, for syntax getopt
	// can't describe (tar's dashless bundle, chmod -w, jq --arg NAME VALUE).
	rewrite func(inv *invocation)
	// hook runs after the options are parsed and their values emitted; it
	// returns false when it has done all the command does.
	hook func(a *analyzer, st *state, inv *invocation) bool
	raw  bool // the arguments are not options and operands: the hook reads them
	// builtin is a shell builtin that changes what the analysis knows (cd,
	// set, read…) rather than the file system.
	builtin func(a *analyzer, st *state, c *cmdCall)
}

// role is what a command does to one operand.
type role uint8

const (
	notPath    role = iota // a pattern, a mode, an owner, a format
	literal                // not a path, and it must be a literal (timeout's duration)
	reads                  // reads the file (follows a final symlink); "-" is the standard input
	readsFile              // reads the file; "-" names a file too (unzip's archive, dd if=)
	deletes                // removes the name; a subtree with subtree; links made under it are forgotten
	removesDir             // removes an empty folder; with parents each parent named too (rmdir -p)
	creates                // writes the file: create, or modify if it exists
	makesDir               // creates a folder; with parents each missing one on the way (mkdir -p)
	modifies               // changes the file in place (chmod, chown)
	edits                  // reads the file, or with inPlace rewrites it by rename (sed -i)
	runs                   // the wrapped command starts here
)

// optEffect is what an option does to the command's effects.
type optEffect uint32

const (
	subtree     optEffect = 1 << iota // the operands are whole subtrees (rm -r, chmod -R)
	derefTree                         // a recursion follows the links inside the tree: what they reach is unknown
	noFollow                          // the op acts on a final symlink itself (chown -h, touch -h, cp -P)
	follow                            // the op follows a final symlink it would otherwise replace (sed --follow-symlinks, ln -L)
	readsValue                        // the option's value is a file read
	readsTree                         // the option's value is a folder read whole (jq -L)
	writesValue                       // the option's value is a file written (sort -o)
	intoValue                         // the option's value is the folder the operands go into (mv -t, unzip -d)
	onto                              // the destination is the name itself, never a folder (mv -T)
	givesFirst                        // the option stands in for the first operand (grep -e, chmod --reference)
	runsProgram                       // the option runs a program: exec
	unmodelled                        // the analysis does not model the option: exec
	parents                           // mkdir -p, rmdir -p
	backup                            // mv -b: the replaced name is kept as name~
	hardLink                          // cp -l: the destination is a hard link, not a copy
	symbolic                          // ln -s
	relative                          // ln -r: the target is named from here
	replaces                          // ln -f: what is at the name is removed first
	makesDirs                         // install -d: the operands are folders to create
	dryRun                            // rsync -n: nothing is written
	mirrors                           // rsync --delete: names missing from the sources are removed
	remoteShell                       // rsync -e: a remote shell runs
	listsOnly                         // unzip -l: the archive is read, nothing unpacked
	lookupOnly                        // command -v: nothing runs
	inPlace                           // sed -i[SUFFIX]: the file is rewritten by rename, the original kept under SUFFIX
	readsList                         // the option's value is a file read that names more files, read too (tar -T, --files0-from)
	checksLists                       // the operands are lists of files, each read (sha256sum -c)
	setsMachine                       // the option changes the machine, not the vault (date -s, hostname -F): exec
)

// does maps option names (space separated, without dashes) to what they do.
type does map[string]optEffect

// index is does keyed by single option names.
func (d does) index() map[string]optEffect {
	m := map[string]optEffect{}
	for names, e := range d {
		for _, n := range strings.Fields(names) {
			m[n] |= e
		}
	}
	return m
}

// invocation is one call as the interpreter sees it.
type invocation struct {
	*cmdCall
	args  []field // the arguments to parse (after rewrite)
	opts  []opt
	ops   []field
	first int                  // cmdCall.args index of the first operand, for noPerm (wrappers); else -1
	on    optEffect            // what the given options do, together
	idx   map[string]optEffect // the spec's options by name
	reads []field              // files rewrite found read (jq --slurpfile)
}

// argIndex is the index in cmdCall.args of operand i, or -1 when unknown.
func (inv *invocation) argIndex(i int) int {
	if inv.first < 0 {
		return -1
	}
	return inv.first + i
}

// is reports whether any given option does e.
func (inv *invocation) is(e optEffect) bool { return inv.on&e != 0 }

// values returns the values of the given options that do e, in order.
func (inv *invocation) values(e optEffect) []field {
	var out []field
	for _, o := range inv.opts {
		if inv.idx[o.name]&e != 0 && o.has {
			out = append(out, o.val)
		}
	}
	return out
}

// compiled is a spec with what run needs worked out once.
type compiled struct {
	*spec
	idx       map[string]optEffect // does, by single option name
	announce  zones.Op             // see announces
	announced bool
}

func (s *spec) compile() *compiled {
	c := &compiled{spec: s, idx: s.does.index()}
	c.announce, c.announced = c.announces()
	return c
}

// mainRole is the role of the operands past the leading ones.
func (s *spec) mainRole() role {
	if len(s.args) == 0 {
		return notPath
	}
	return s.args[len(s.args)-1]
}

// announces says which unknown effect a dynamic word stands for, when it may
// be an option or more operands the analysis can't place: for commands that
// read or change files in place, it is reported before them.
func (s *compiled) announces() (zones.Op, bool) {
	if s.transfer != nil || s.extracts {
		return 0, false
	}
	switch s.mainRole() {
	case reads:
		return zones.OpRead, true
	case modifies:
		return zones.OpModify, true
	case notPath:
		for _, e := range s.idx {
			if e&readsValue != 0 {
				return zones.OpRead, true
			}
		}
	}
	return 0, false
}

func roleOp(r role) zones.Op {
	switch r {
	case deletes, removesDir:
		return zones.OpDelete
	case creates, makesDir:
		return zones.OpCreate
	case modifies:
		return zones.OpModify
	}
	return zones.OpRead
}

// run interprets the spec for one call. In order: the arguments are parsed
// (an unknown option makes the command exec); an option that runs a program
// or that the analysis does not model makes it exec; the files named by
// option values are read or written; the hook, if any, has its say; a
// dynamic word that may hide operands is announced; the output operand is
// written; then each operand gets its role's effect, or the sources and
// destination go to the transfer.
func (s *compiled) run(a *analyzer, st *state, c *cmdCall) {
	if s.builtin != nil {
		s.builtin(a, st, c)
		return
	}
	if s.raw && s.hook == nil {
		return // inert: runs nothing, touches no file
	}
	inv := &invocation{cmdCall: c, args: c.args, idx: s.idx}
	if s.rewrite != nil {
		s.rewrite(inv)
	}
	if s.raw {
		s.hook(a, st, inv)
		return
	}
	p, ok := a.parse(st, c.name, inv.args, &s.opts)
	if !ok {
		return
	}
	inv.opts, inv.ops, inv.first = p.opts, p.ops, -1
	if s.rewrite == nil && s.opts.noPerm {
		// Only then do the operands line up with the words, one to one.
		inv.first = p.first
	}
	for _, o := range inv.opts {
		e := s.idx[o.name]
		inv.on |= e
		switch {
		case e&runsProgram != 0:
			a.exec(st, c.name, ProgramOption, c.name+" "+dash(o.name))
			return
		case e&unmodelled != 0:
			a.exec(st, c.name, UnknownOption, c.name+" "+dash(o.name))
			return
		case e&setsMachine != 0:
			a.exec(st, c.name, Machine, c.name+" "+dash(o.name))
			return
		}
	}
	follows := pathOpts{follow: true}
	a.emitPaths(st, inv.reads, zones.OpRead, c.name, follows)
	a.emitPaths(st, inv.values(readsValue), zones.OpRead, c.name, follows)
	if lists := inv.values(readsList); len(lists) > 0 || inv.is(checksLists) {
		// What the list names is only known when it runs.
		a.emitPaths(st, lists, zones.OpRead, c.name, follows)
		a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: c.name})
	}
	a.emitPaths(st, inv.values(readsTree), zones.OpRead, c.name, pathOpts{follow: true, subtree: true})
	a.emitPaths(st, inv.values(writesValue), zones.OpCreate, c.name, pathOpts{follow: true, mode: orCreate})
	if s.hook != nil && !s.hook(a, st, inv) {
		return
	}
	roles := s.args
	if inv.is(givesFirst) && len(roles) > 1 {
		roles = roles[1:]
	}
	if s.announced && c.dynamic() {
		a.emit(Effect{Op: s.announce, Unknown: true, Command: c.name})
	}
	ops := inv.ops
	if s.output > 0 && len(ops) >= s.output {
		a.pathEffect(st, ops[s.output-1], zones.OpCreate, c.name, pathOpts{follow: true, mode: orCreate})
		ops = ops[:s.output-1]
	}
	sub := s.whole || inv.is(subtree)
	if s.transfer != nil {
		s.transfer(a, st, inv, sub)
		return
	}
	main := notPath
	if len(roles) > 0 {
		main = roles[len(roles)-1]
	}
	if sub && inv.is(derefTree) && main != notPath {
		// Links inside the tree lead anywhere.
		a.emit(Effect{Op: roleOp(main), Unknown: true, Command: c.name})
	}
	lead := max(len(roles)-1, 0)
	for i := 0; i < lead && i < len(ops); i++ {
		if !a.operand(st, inv, roles[i], ops[i], inv.argIndex(i), sub) {
			return
		}
	}
	for i := lead; i < len(ops); i++ {
		if !a.operand(st, inv, main, ops[i], inv.argIndex(i), sub) {
			return
		}
	}
	if len(ops) <= lead && (s.here || s.hereIfTree && sub) {
		a.operand(st, inv, main, litField("."), -1, sub)
	}
	if s.extracts {
		a.unpack(st, inv)
	}
}

// operand emits what role r does to one operand; false ends the command
// (the rest of the operands belong to a wrapped command).
func (a *analyzer) operand(st *state, inv *invocation, r role, f field, at int, sub bool) bool {
	name := inv.name
	switch r {
	case notPath:
	case literal:
		if _, ok := f.lit(); !ok {
			a.refuse(DynamicCommand, name, "a dynamic operand before the command it runs", inv.pos)
			return false
		}
	case reads:
		a.emitPaths(st, []field{f}, zones.OpRead, name, pathOpts{follow: true, subtree: sub})
	case readsFile:
		a.pathEffect(st, f, zones.OpRead, name, pathOpts{follow: true, subtree: sub})
	case deletes:
		r := a.pathEffect(st, f, zones.OpDelete, name, pathOpts{subtree: sub})
		a.forget(st, r)
		a.removed(r)
	case removesDir:
		r := a.pathEffect(st, f, zones.OpDelete, name, pathOpts{})
		a.removed(r)
		if inv.is(parents) && !r.unknown && !r.none {
			if s, ok := f.lit(); ok && hasDotDot(s) {
				// rmdir -p cuts the text, and the kernel walks each cut.
				a.emit(Effect{Op: zones.OpDelete, Unknown: true, Command: name})
			} else if ok {
				for d := filepath.Dir(filepath.Clean(s)); d != "." && d != "/"; d = filepath.Dir(d) {
					a.pathEffect(st, litField(d), zones.OpDelete, name, pathOpts{})
				}
			}
		}
	case creates:
		a.pathEffect(st, f, zones.OpCreate, name, pathOpts{follow: !inv.is(noFollow), mode: orCreate})
	case makesDir:
		a.makeDir(st, f, name, inv.is(parents))
	case modifies:
		a.pathEffect(st, f, zones.OpModify, name, pathOpts{follow: !inv.is(noFollow), subtree: sub})
	case edits:
		a.edit(st, inv, f)
	case runs:
		if inv.is(lookupOnly) {
			return false // command -v: a lookup runs nothing
		}
		if at < 0 {
			a.refuse(DynamicCommand, name, "the wrapped command can't be placed", inv.pos)
			return false
		}
		a.wrap(st, inv.cmdCall, at)
		return false
	}
	return true
}

func dash(n string) string {
	if len(n) == 1 {
		return "-" + n
	}
	return "--" + n
}
