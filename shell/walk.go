package shell

import (
	"errors"
	"maps"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/zones"
)

// maxSteps bounds the work of one analysis (statements and words visited,
// counting re-analysis of loops and re-parsed scripts). A command past it is
// refused as too deep rather than analysed slowly.
const maxSteps = 200000

type parseKey struct {
	src  string
	lang syntax.LangVariant
}

type parseResult struct {
	f   *syntax.File
	err error
}

type analyzer struct {
	parsed   map[parseKey]parseResult
	opts     Options
	effects  []Effect
	seen     map[Effect]int // an effect without its Command → its index
	programs map[string]bool
	refusal  *Refusal
	steps    int
	// Names this command hard-linked to an existing file: a later write to
	// one changes that file, so it is a modify, never a create.
	linked map[string]bool
	// Statements run in the background, with the state they started from.
	bg []bgJob
	// Folders where a glob stood where options are read, let through
	// because no name there started with a dash (opts.go, optionSafe).
	optionGlobs map[string]string
	// The folders cd went into, and the names the command removes or
	// moves away (paths.go, checkCds).
	cds, gone []string
}

type bgJob struct {
	s  *syntax.Stmt
	st *state
}

func newAnalyzer(opts Options) *analyzer {
	if opts.Stat == nil {
		opts.Stat = lstat
	}
	if opts.ReadDir == nil {
		opts.ReadDir = readDir
	}
	if opts.Readlink == nil {
		opts.Readlink = readlink
	}
	return &analyzer{opts: opts, seen: map[Effect]int{}, programs: map[string]bool{}, parsed: map[parseKey]parseResult{}, linked: map[string]bool{}}
}

// input is what a shell reading its standard input would read.
type input uint8

const (
	inNull    input = iota // nothing (the runner's stdin is /dev/null)
	inLiteral              // a script visible in the command (state.stdinText)
	inDynamic              // something that can't be seen
)

type fdKind uint8

const (
	fdPipe    fdKind = iota // the runner's own pipe, or a pipe of the command
	fdFile                  // a file (path)
	fdNull                  // /dev/null and friends
	fdUnknown               // something that can't be known
)

type fdBind struct {
	kind fdKind
	path string
}

// state is what the analysis knows at one point of the script.
type state struct {
	// cwd is the working directory as the kernel knows it (every link on
	// the way resolved); pwd is bash's logical one ($PWD, the path cd
	// took, links kept), which cd without -P climbs from. "" = unknown.
	cwd        string
	cwdKnown   bool
	pwd        string
	vars       map[string]*value
	intVars    map[string]bool
	ifsChanged bool
	funcs      map[string][]*syntax.Stmt // a nil body: the name may also not be a function
	fds        map[int]fdBind
	stdin      input
	stdinText  string
	depth      int
	calls      int  // function call nesting
	posix      bool // a POSIX sh script: no brace expansion

	fsState // what the command did to the file system so far (paths.go)
}

func (a *analyzer) initialState() *state {
	st := &state{
		vars: map[string]*value{}, intVars: map[string]bool{}, funcs: map[string][]*syntax.Stmt{},
		fds:     map[int]fdBind{0: {kind: fdNull}, 1: {kind: fdPipe}, 2: {kind: fdPipe}},
		fsState: newFSState(),
	}
	st.stat = a.opts.Stat
	if r := a.resolveAbs(st, a.opts.Cwd, true); !r.unknown && !r.none {
		st.cwd, st.cwdKnown = r.abs, true
		if r.abs == a.opts.Cwd {
			// Else bash's $PWD is the path it was started in, if its
			// environment says so, or the real one: either.
			st.pwd = r.abs
		}
	}
	return st
}

func (s *state) clone() *state {
	c := *s
	c.vars = maps.Clone(s.vars)
	c.intVars = maps.Clone(s.intVars)
	c.funcs = maps.Clone(s.funcs)
	c.fds = maps.Clone(s.fds)
	c.fsState = s.fsState.clone()
	return &c
}

func (s *state) setVar(name string, v *value) {
	s.vars[name] = v
	if name == "IFS" {
		s.ifsChanged = true
	}
}

// join is the state after one of a or b ran: what differs is unknown.
func join(x, y *state) *state {
	out := x.clone()
	if x.cwdKnown != y.cwdKnown || x.cwd != y.cwd {
		out.cwdKnown = false
	}
	if x.pwd != y.pwd {
		out.pwd = ""
	}
	for k, v := range y.vars {
		if w, ok := x.vars[k]; !ok || !sameValue(v, w) {
			out.vars[k] = joinValue(w, v)
		}
	}
	for k, w := range x.vars {
		if _, ok := y.vars[k]; !ok {
			out.vars[k] = joinValue(w, nil)
		}
	}
	for k := range y.intVars {
		out.intVars[k] = true
	}
	out.ifsChanged = x.ifsChanged || y.ifsChanged
	for k, b := range y.funcs {
		xb, ok := x.funcs[k]
		if !ok {
			xb = []*syntax.Stmt{nil}
		}
		out.funcs[k] = unionBodies(xb, b)
	}
	for k, b := range x.funcs {
		if _, ok := y.funcs[k]; !ok {
			out.funcs[k] = unionBodies(b, []*syntax.Stmt{nil})
		}
	}
	for k, v := range y.fds {
		if w, ok := x.fds[k]; !ok || w != v {
			out.fds[k] = fdBind{kind: fdUnknown}
		}
	}
	for k := range x.fds {
		if _, ok := y.fds[k]; !ok {
			out.fds[k] = fdBind{kind: fdUnknown}
		}
	}
	if x.stdin != y.stdin || x.stdinText != y.stdinText {
		out.stdin = inDynamic
	}
	out.foldFS(y)
	for k := range y.links {
		if _, both := x.links[k]; !both && x.stat != nil && x.stat(k).Exists {
			// Made on one path only, over a name that is there on the
			// other ([ c ] && ln -sf ../мета/план.md notes/a.md): either.
			delete(out.links, k)
			out.taint[k] = true
		}
	}
	for k := range out.made {
		if !x.made[k] || !y.made[k] {
			delete(out.made, k) // made on one path only
		}
	}
	return out
}

func unionBodies(a, b []*syntax.Stmt) []*syntax.Stmt {
	out := append([]*syntax.Stmt(nil), a...)
	for _, s := range b {
		found := false
		for _, t := range out {
			if t == s {
				found = true
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

func sameValue(a, b *value) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.known != b.known || a.numeric != b.numeric || len(a.alts) != len(b.alts) {
		return false
	}
	for i := range a.alts {
		if a.alts[i] != b.alts[i] {
			return false
		}
	}
	return true
}

// joinValue: a variable that one branch leaves unassigned holds something
// from the environment, which is unknown.
func joinValue(a, b *value) *value {
	if a == nil || b == nil || !a.known || !b.known {
		num := a != nil && b != nil && a.numeric && b.numeric
		return &value{numeric: num}
	}
	out := &value{known: true, numeric: a.numeric && b.numeric, alts: append([]alt(nil), a.alts...)}
	for _, x := range b.alts {
		dup := false
		for _, y := range out.alts {
			if x == y {
				dup = true
			}
		}
		if !dup {
			out.alts = append(out.alts, x)
		}
	}
	if len(out.alts) > maxAlternatives {
		return &value{numeric: out.numeric}
	}
	return out
}

func sameState(x, y *state) bool {
	if x.cwdKnown != y.cwdKnown || x.cwd != y.cwd || x.pwd != y.pwd || x.ifsChanged != y.ifsChanged || x.stdin != y.stdin {
		return false
	}
	if len(x.vars) != len(y.vars) || len(x.links) != len(y.links) || len(x.taint) != len(y.taint) ||
		len(x.fds) != len(y.fds) || len(x.funcs) != len(y.funcs) || len(x.intVars) != len(y.intVars) {
		return false
	}
	for k, v := range x.vars {
		if !sameValue(v, y.vars[k]) {
			return false
		}
	}
	for k, v := range x.fds {
		if y.fds[k] != v {
			return false
		}
	}
	for k, v := range x.links {
		if y.links[k] != v {
			return false
		}
	}
	for k, v := range x.taint {
		if w, ok := y.taint[k]; !ok || w != v {
			return false
		}
	}
	for k, v := range x.funcs {
		w := y.funcs[k]
		if len(w) != len(v) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

func (a *analyzer) stop() bool { return a.refusal != nil }

func (a *analyzer) refuse(code RefusalCode, cmd, detail string, pos syntax.Pos) {
	if a.refusal == nil {
		a.refusal = &Refusal{Code: code, Command: cmd, Detail: detail, Pos: pos}
	}
}

func (a *analyzer) step() bool {
	a.steps++
	if a.steps > maxSteps {
		a.refuse(TooDeep, "", "analysis budget exceeded", syntax.Pos{})
		return false
	}
	return !a.stop()
}

// emit adds an effect unless the same one is there already. Two that differ
// only in the command are one effect; a glob's listing read gives way to the
// command's own name.
func (a *analyzer) emit(e Effect) {
	k := e
	k.Command = ""
	if i, ok := a.seen[k]; ok {
		if a.effects[i].Command == "glob" {
			a.effects[i].Command = e.Command
		}
		return
	}
	a.seen[k] = len(a.effects)
	a.effects = append(a.effects, e)
}

func (a *analyzer) exec(st *state, cmd string, why ExecWhy, detail string) {
	a.emit(Effect{Op: zones.OpExec, Command: cmd, Why: why, Detail: detail})
}

// script parses src and analyses it on st, at nesting depth depth.
func (a *analyzer) script(st *state, src string, depth int) {
	a.scriptLang(st, src, depth, syntax.LangBash)
}

func (a *analyzer) scriptLang(st *state, src string, depth int, lang syntax.LangVariant) {
	if depth > a.opts.MaxDepth {
		a.refuse(TooDeep, "", "nesting past depth "+strconv.Itoa(a.opts.MaxDepth), syntax.Pos{})
		return
	}
	if len(src) > MaxCommandSize {
		a.refuse(TooLarge, "", "nested script over the size limit", syntax.Pos{})
		return
	}
	// Parsing costs in proportion to the text, and loops and functions may
	// analyse one nested script many times: charge it, and parse it once.
	a.steps += len(src) / 32
	if !a.step() {
		return
	}
	key := parseKey{src: src, lang: lang}
	parsed, ok := a.parsed[key]
	if !ok {
		f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(src), "")
		parsed = parseResult{f: f, err: err}
		a.parsed[key] = parsed
	}
	f, err := parsed.f, parsed.err
	if err != nil {
		var pe syntax.ParseError
		var le syntax.LangError
		switch {
		case errors.As(err, &pe):
			a.refuse(ParseError, "", pe.Text, pe.Pos)
		case errors.As(err, &le):
			a.refuse(ParseError, "", le.Error(), le.Pos)
		default:
			a.refuse(ParseError, "", err.Error(), syntax.Pos{})
		}
		return
	}
	old, oldPosix := st.depth, st.posix
	st.depth, st.posix = depth, lang == syntax.LangPOSIX
	a.stmts(st, f.Stmts)
	st.depth, st.posix = old, oldPosix
}

func (a *analyzer) stmts(st *state, ss []*syntax.Stmt) {
	for _, s := range ss {
		if a.stop() {
			return
		}
		a.stmt(st, s)
	}
}

// subshell analyses statements in a copy of st; only file system changes
// come back.
func (a *analyzer) subshell(st *state, ss []*syntax.Stmt, in input) {
	c := st.clone()
	if in == inDynamic {
		c.stdin = inDynamic
	}
	a.stmts(c, ss)
	st.foldFS(c)
}

func (a *analyzer) stmt(st *state, s *syntax.Stmt) {
	if !a.step() {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		// It runs alongside what follows: analyse it as a subshell, then
		// again if what follows changed the file system under it.
		c := st.clone()
		a.bg = append(a.bg, bgJob{s: s, st: st.clone()})
		a.stmtCmd(c, s)
		st.foldFS(c)
		return
	}
	a.stmtCmd(st, s)
}

func (a *analyzer) stmtCmd(st *state, s *syntax.Stmt) {
	if call, ok := s.Cmd.(*syntax.CallExpr); ok || s.Cmd == nil {
		a.call(st, call, s.Redirs)
		return
	}
	// Redirects on a compound command apply to all of it.
	inner := st
	if len(s.Redirs) > 0 {
		inner = st.clone()
		a.redirects(inner, s.Redirs, "", inner)
	}
	a.command(inner, s.Cmd)
	if inner != st {
		// Variables set in a redirected block persist (it is not a subshell);
		// the redirect's own descriptors do not.
		fds, stdin, text := st.fds, st.stdin, st.stdinText
		*st = *inner
		st.fds, st.stdin, st.stdinText = fds, stdin, text
	}
}

func (a *analyzer) command(st *state, c syntax.Command) {
	switch c := c.(type) {
	case *syntax.Block:
		a.stmts(st, c.Stmts)
	case *syntax.Subshell:
		a.subshell(st, c.Stmts, inNull)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			a.stmt(st, c.X)
			b := st.clone()
			a.stmt(b, c.Y)
			*st = *join(st, b)
		default: // | and |&
			a.pipeline(st, c)
		}
	case *syntax.IfClause:
		a.ifClause(st, c)
	case *syntax.WhileClause:
		a.loop(st, func(s *state) {
			a.stmts(s, c.Cond)
			a.stmts(s, c.Do)
		})
	case *syntax.ForClause:
		a.forClause(st, c)
	case *syntax.CaseClause:
		a.word(st, c.Word, modeAssign)
		out := st.clone()
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.word(st, p, modeAssign)
			}
			b := st.clone()
			a.stmts(b, it.Stmts)
			out = join(out, b)
		}
		*st = *out
	case *syntax.FuncDecl:
		if c.Name == nil {
			return
		}
		names := []*syntax.Lit{c.Name}
		names = append(names, c.Names...)
		for _, n := range names {
			if n != nil {
				st.funcs[n.Value] = []*syntax.Stmt{c.Body}
			}
		}
	case *syntax.ArithmCmd:
		a.arith(st, c.X)
	case *syntax.TestClause:
		a.test(st, c.X)
	case *syntax.DeclClause:
		a.decl(st, c)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arith(st, x)
		}
	case *syntax.TimeClause:
		if c.Stmt != nil {
			a.stmt(st, c.Stmt)
		}
	case *syntax.CoprocClause:
		if c.Name != nil {
			a.word(st, c.Name, modeAssign)
		}
		if c.Stmt != nil {
			b := st.clone()
			a.stmt(b, c.Stmt)
			st.foldFS(b)
		}
	case *syntax.TestDecl:
		a.refuse(ParseError, "", "@test is not bash", c.Pos())
	default:
		a.refuse(ParseError, "", "unsupported command", c.Pos())
	}
}

func (a *analyzer) ifClause(st *state, c *syntax.IfClause) {
	a.stmts(st, c.Cond)
	then := st.clone()
	a.stmts(then, c.Then)
	els := st.clone()
	if c.Else != nil {
		if len(c.Else.Cond) == 0 && !c.Else.ThenPos.IsValid() {
			a.stmts(els, c.Else.Then)
		} else {
			a.ifClause(els, c.Else)
		}
	}
	*st = *join(then, els)
}

// loop analyses a body that may run zero or more times, until the state
// it leaves stops changing (each pass widens what differs to unknown).
func (a *analyzer) loop(st *state, body func(*state)) {
	cur := st.clone()
	for range 4 {
		b := cur.clone()
		body(b)
		if a.stop() {
			return
		}
		next := join(cur, b)
		if sameState(next, cur) {
			*st = *next
			return
		}
		cur = widen(next, cur)
	}
	*st = *cur
}

// widen makes everything that changed between two loop passes unknown, so the
// next pass is the last one that can differ.
func widen(next, prev *state) *state {
	out := next.clone()
	for k, v := range next.vars {
		if !sameValue(v, prev.vars[k]) {
			out.vars[k] = &value{numeric: v.numeric && (prev.vars[k] == nil || prev.vars[k].numeric)}
		}
	}
	if next.cwd != prev.cwd || next.cwdKnown != prev.cwdKnown {
		out.cwdKnown = false
	}
	if next.pwd != prev.pwd {
		out.pwd = ""
	}
	for k, v := range next.fds {
		if prev.fds[k] != v {
			out.fds[k] = fdBind{kind: fdUnknown}
		}
	}
	for k := range next.links {
		if prev.links[k] != next.links[k] {
			out.taint[k] = true
			delete(out.links, k)
		}
	}
	return out
}

func (a *analyzer) forClause(st *state, c *syntax.ForClause) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		var items []field
		if l.InPos.IsValid() {
			items = a.words(st, l.Items)
		} else {
			items = []field{{meta: -1, unknown: true}} // "$@"
		}
		v := &value{known: true, numeric: true}
		for _, f := range items {
			switch {
			case f.unknown || f.proc:
				v = &value{}
			case v.known && f.meta >= 0:
				v.alts = append(v.alts, alt{s: f.s, match: true})
				v.numeric = false
			case v.known:
				v.alts = append(v.alts, alt{s: f.s})
				v.numeric = v.numeric && isNumber(f.s)
			}
			if !v.known {
				break
			}
		}
		if len(v.alts) > maxAlternatives {
			v = &value{}
		}
		if len(v.alts) == 0 && v.known {
			return // no items: the body never runs
		}
		name := l.Name.Value
		// Bound before the first pass, so a body that leaves it alone
		// needs one pass only.
		st.setVar(name, v)
		a.loop(st, func(s *state) {
			s.setVar(name, v)
			a.stmts(s, c.Do)
		})
	case *syntax.CStyleLoop:
		if l.Init != nil {
			a.arith(st, l.Init)
		}
		a.loop(st, func(s *state) {
			if l.Cond != nil {
				a.arith(s, l.Cond)
			}
			a.stmts(s, c.Do)
			if l.Post != nil {
				a.arith(s, l.Post)
			}
		})
	}
}

// pipeline analyses each part in a subshell with its standard input from the
// part before. If any part changed the file system state, all parts are
// analysed again with it, since they run at the same time.
func (a *analyzer) pipeline(st *state, c *syntax.BinaryCmd) {
	var parts []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 && !s.Negated && !s.Background {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		parts = append(parts, s)
	}
	flatten(c.X)
	flatten(c.Y)
	run := func(base *state) *state {
		fsAfter := base.clone()
		in, text := base.stdin, base.stdinText
		for _, p := range parts {
			b := base.clone()
			b.stdin, b.stdinText = in, text
			a.stmt(b, p)
			fsAfter.foldFS(b)
			in, text = literalOutput(p)
		}
		return fsAfter
	}
	after := run(st)
	if !a.stop() && (len(after.links) != len(st.links) || len(after.taint) != len(st.taint)) {
		after = run(after)
	}
	st.foldFS(after)
}

// literalOutput: what a pipeline part writes, when it is a plain echo or
// printf of literals (`echo 'rm x' | bash`).
func literalOutput(s *syntax.Stmt) (input, string) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return inDynamic, ""
	}
	var lits []string
	for _, w := range call.Args {
		l, ok := staticWord(w)
		if !ok {
			return inDynamic, ""
		}
		lits = append(lits, l)
	}
	switch lits[0] {
	case "echo":
		args := lits[1:]
		nl := "\n"
		if len(args) > 0 && args[0] == "-n" {
			args, nl = args[1:], ""
		}
		if len(args) > 0 && strings.HasPrefix(args[0], "-") {
			return inDynamic, ""
		}
		return inLiteral, strings.Join(args, " ") + nl
	case "printf":
		if len(lits) == 2 && !strings.ContainsAny(lits[1], "%\\") {
			return inLiteral, lits[1]
		}
		if len(lits) >= 3 && (lits[1] == "%s\\n" || lits[1] == "%s\n") {
			return inLiteral, strings.Join(lits[2:], "\n") + "\n"
		}
	}
	return inDynamic, ""
}

// staticWord returns a word's value when it has no expansions at all.
func staticWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{~") {
				return "", false
			}
			b.WriteString(unescapeLit(p.Value).s)
		case *syntax.SglQuoted:
			if p.Dollar {
				s, ok := decodeANSI(p.Value)
				if !ok {
					return "", false
				}
				b.WriteString(s)
				continue
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// --- arithmetic and tests

// arith checks an arithmetic expression: every operand must be a literal
// number or a variable known to hold one, since bash evaluates a variable's
// text as arithmetic again (and a[$(cmd)] in data runs cmd).
func (a *analyzer) arith(st *state, x syntax.ArithmExpr) {
	if !a.step() {
		return
	}
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		if isAssignOp(x.Op) {
			a.arith(st, x.Y)
			if n := arithName(x.X); n != "" {
				st.setVar(n, &value{numeric: true})
				return
			}
		}
		a.arith(st, x.X)
		a.arith(st, x.Y)
	case *syntax.UnaryArithm:
		a.arith(st, x.X)
		if (x.Op == syntax.Inc || x.Op == syntax.Dec) && arithName(x.X) != "" {
			st.setVar(arithName(x.X), &value{numeric: true})
		}
	case *syntax.ParenArithm:
		a.arith(st, x.X)
	case *syntax.FlagsArithm:
		a.arith(st, x.X)
	case *syntax.Word:
		a.arithWord(st, x)
	}
}

func isAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn, syntax.PowAssgn,
		syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn:
		return true
	}
	return false
}

func arithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok && validName(l.Value) {
		return l.Value
	}
	return ""
}

func (a *analyzer) arithWord(st *state, w *syntax.Word) {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if isArithNumber(p.Value) {
				return
			}
			if validName(p.Value) && numericParam(st, p.Value) {
				return
			}
		case *syntax.ParamExp:
			if p.Length && p.Exp == nil && p.Slice == nil && p.Repl == nil && (p.Index == nil || allIndex(p.Index)) {
				return // ${#x} and ${#a[@]} are numbers
			}
			if (p.Short || simpleParam(p)) && p.Param != nil && p.Index == nil && numericParam(st, p.Param.Value) {
				return
			}
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if q, ok := p.Parts[0].(*syntax.ParamExp); ok && simpleParam(q) && q.Param != nil && q.Index == nil && numericParam(st, q.Param.Value) {
					return
				}
			}
		}
	}
	// Walk it for substitutions, then call it what it is.
	a.word(st, w, modeAssign)
	a.exec(st, "arithmetic", DynamicArithmetic, wordText(w))
}

func simpleParam(p *syntax.ParamExp) bool {
	return !p.Excl && !p.Length && p.Exp == nil && p.Slice == nil && p.Repl == nil && p.NestedParam == nil
}

func isArithNumber(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s = s[2:]
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	if i := strings.IndexByte(s, '#'); i > 0 {
		if _, err := strconv.Atoi(s[:i]); err != nil {
			return false
		}
		s = s[i+1:]
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '@' || c == '_') {
				return false
			}
		}
		return s != ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// wordText prints a word for a Detail.
func wordText(w *syntax.Word) (s string) {
	defer func() {
		// The printer does not expect every shape SplitBraces leaves.
		if recover() != nil {
			s = "(word)"
		}
	}()
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	s = b.String()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

func (a *analyzer) test(st *state, x syntax.TestExpr) {
	if !a.step() {
		return
	}
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, y := range []syntax.TestExpr{x.X, x.Y} {
				if w, ok := y.(*syntax.Word); ok {
					a.arithWord(st, w)
				} else {
					a.test(st, y)
				}
			}
			return
		case syntax.TsNewer, syntax.TsOlder, syntax.TsDevIno:
			a.testPath(st, x.X)
			a.testPath(st, x.Y)
			return
		}
		a.test(st, x.X)
		a.test(st, x.Y)
	case *syntax.UnaryTest:
		switch x.Op {
		case syntax.TsNot, syntax.TsParen, syntax.TsEmpStr, syntax.TsNempStr, syntax.TsOptSet, syntax.TsFdTerm:
			a.test(st, x.X)
		case syntax.TsVarSet, syntax.TsRefVar:
			if w, ok := x.X.(*syntax.Word); ok {
				if s, ok := staticWord(w); !ok || !validName(s) {
					a.word(st, w, modeAssign)
					a.exec(st, "[[", DynamicArithmetic, "-v "+wordText(w))
				}
			}
		default:
			a.testPath(st, x.X)
		}
	case *syntax.ParenTest:
		a.test(st, x.X)
	case *syntax.Word:
		a.word(st, x, modeAssign)
	}
}

// testPath: a file test reads the file's metadata.
func (a *analyzer) testPath(st *state, x syntax.TestExpr) {
	w, ok := x.(*syntax.Word)
	if !ok {
		a.test(st, x)
		return
	}
	for _, f := range a.word(st, w, modeAssign) {
		a.pathEffect(st, f, zones.OpRead, "[[", pathOpts{follow: true})
	}
}

// --- redirects

// redirects applies a statement's redirects to fds (the table the command
// sees) and emits their effects.
func (a *analyzer) redirects(st *state, rs []*syntax.Redirect, cmd string, target *state) {
	if cmd == "" {
		cmd = ">"
	}
	for _, r := range rs {
		if a.stop() {
			return
		}
		a.redirect(st, r, cmd, target)
	}
}

func (a *analyzer) redirect(st *state, r *syntax.Redirect, cmd string, target *state) {
	n := -1
	if r.N != nil {
		if strings.HasPrefix(r.N.Value, "{") {
			// {var}>f: bash picks the descriptor and stores it in var.
			name := strings.Trim(r.N.Value, "{}")
			target.setVar(name, &value{numeric: true})
			n = -2
		} else {
			n = fdNumber(r.N.Value)
		}
	}
	bind := func(def int, b fdBind) {
		fd := n
		if fd == -1 {
			fd = def
		}
		if fd >= 0 {
			target.fds[fd] = b
		}
		if fd == 0 {
			target.stdin = inDynamic
			if b.kind == fdNull {
				target.stdin = inNull
			}
		}
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		in, text := inLiteral, ""
		if r.Hdoc != nil {
			if quotedDelim(r.Word) {
				text, _ = staticLit(r.Hdoc)
			} else {
				a.word(st, r.Hdoc, modeAssign)
				t, ok := staticLit(r.Hdoc)
				if !ok || strings.ContainsAny(t, "\\$`") {
					in = inDynamic
				}
				text = t
			}
			if r.Op == syntax.DashHdoc {
				text = stripTabs(text)
			}
		}
		bind(0, fdBind{kind: fdPipe})
		if n <= 0 {
			target.stdin, target.stdinText = in, text
		}
		return
	case syntax.WordHdoc:
		fs := a.word(st, r.Word, modeAssign)
		bind(0, fdBind{kind: fdPipe})
		if n <= 0 {
			if s, ok := fs[0].lit(); ok && !fs[0].unknown {
				target.stdin, target.stdinText = inLiteral, s+"\n"
			} else if len(fs) == 1 && !fs[0].unknown && !fs[0].proc {
				target.stdin, target.stdinText = inLiteral, fs[0].s+"\n"
			} else {
				target.stdin = inDynamic
			}
		}
		return
	case syntax.DplIn, syntax.DplOut:
		fs := a.word(st, r.Word, modeAssign)
		def := 1
		if r.Op == syntax.DplIn {
			def = 0
		}
		f := fs[0]
		if s, ok := f.lit(); ok {
			s = strings.TrimSuffix(s, "-")
			if s == "" && strings.HasSuffix(f.s, "-") {
				fd := n
				if fd == -1 {
					fd = def
				}
				delete(target.fds, fd)
				return
			}
			if m := fdNumber(s); m >= 0 {
				b, ok := st.fds[m]
				if !ok {
					b = fdBind{kind: fdUnknown}
				}
				bind(def, b)
				if strings.HasSuffix(f.s, "-") {
					delete(target.fds, m)
				}
				return
			}
			if r.Op == syntax.DplOut && n == -1 {
				// >&word with a file name is &>word.
				res := a.pathEffect(st, f, zones.OpCreate, cmd, pathOpts{follow: true, mode: orCreate})
				b := bindFor(res)
				target.fds[1], target.fds[2] = b, b
				return
			}
		}
		// A dynamic word: a descriptor or a file, either is possible.
		if r.Op == syntax.DplOut {
			a.emit(Effect{Op: zones.OpModify, Unknown: true, Command: cmd})
		}
		bind(def, fdBind{kind: fdUnknown})
		return
	}
	fs := a.word(st, r.Word, modeFields)
	a.globReads(st, fs)
	if len(fs) == 0 {
		return // an ambiguous redirect: bash fails the command
	}
	var op zones.Op
	o := pathOpts{follow: true}
	def := 1
	both := false
	switch r.Op {
	case syntax.RdrIn:
		op, def = zones.OpRead, 0
	case syntax.RdrInOut:
		op, def, o.mode = zones.OpCreate, 0, orCreate
	case syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
		op, o.mode, both = zones.OpCreate, orCreate, true
	default: // > >| >> >>|
		op, o.mode = zones.OpCreate, orCreate
	}
	for _, f := range fs {
		if f.meta >= 0 {
			f.unknown = true // a glob in a redirect: bash picks a file if exactly one matches
		}
		res := a.pathEffect(st, f, op, cmd, o)
		b := bindFor(res)
		if both {
			target.fds[1], target.fds[2] = b, b
		} else {
			bind(def, b)
		}
	}
}

func bindFor(r resolved) fdBind {
	switch {
	case r.unknown:
		return fdBind{kind: fdUnknown}
	case r.none:
		return fdBind{kind: fdNull}
	}
	return fdBind{kind: fdFile, path: r.abs}
}

func quotedDelim(w *syntax.Word) bool {
	if w == nil {
		return true
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, "\\") {
				return true
			}
		default:
			return true
		}
	}
	return false
}

func staticLit(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(l.Value)
	}
	return b.String(), true
}

func stripTabs(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, "\t")
	}
	return strings.Join(lines, "\n")
}

// background analyses each background statement again with the links the
// whole script made: it may run after any of them.
func (a *analyzer) background(final *state) {
	for i := 0; i < len(a.bg) && i < 256 && !a.stop(); i++ {
		j := a.bg[i]
		c := j.st.clone()
		c.foldFS(final)
		if c.sameFS(j.st.fsState) {
			continue
		}
		a.stmtCmd(c, j.s)
	}
}

// numericParam: a variable known to hold a number, or one of bash's own
// integer variables that the command has not assigned.
func numericParam(st *state, name string) bool {
	if v, ok := st.vars[name]; ok {
		return v != nil && v.numeric
	}
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "SRANDOM", "EPOCHSECONDS":
		return true
	}
	return false
}
