package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/zones"
)

// maxAlternatives caps brace expansion, loop values and joined branch values.
// Past it a word is Unknown: the analysis stays linear and never guesses.
const maxAlternatives = 64

// field is one word after expansion, as far as it can be known statically.
type field struct {
	s       string // the literal text, escapes and quotes removed
	meta    int    // index in s of the first active glob character, -1 if none
	unknown bool   // some part can't be known
	proc    bool   // a process substitution: a pipe path, no file
	quoted  bool   // some part was quoted (an empty quoted word is still a field)
	deep    bool   // with meta: any path at any depth under the folder (find's {})
	// splits: an unknown part is unquoted, so at run time it may split into
	// more fields, which then start with anything.
	splits bool
	// knownHead: an unknown field starts with known text (s's first
	// character), before any part that can't be known or may be empty.
	knownHead bool
}

func (f field) lit() (string, bool) {
	if f.unknown || f.proc || f.meta >= 0 {
		return "", false
	}
	return f.s, true
}

// value is what a tracked variable may hold: one or more alternatives, each
// a literal or (match) a path matching a glob pattern.
type value struct {
	alts    []alt
	numeric bool // every alternative is an integer (also when unknown: the result of arithmetic)
	known   bool
}

type alt struct {
	s     string
	match bool // s is a glob pattern; the value is some path matching it
}

func unknownValue() *value { return &value{} }

func literalValue(s string) *value {
	return &value{alts: []alt{{s: s}}, known: true, numeric: isNumber(s)}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// seq is one alternative of a partly expanded word: a list of fields
// (splitting can make several), the last one still open for concatenation.
type seq []field

func concat(a, b seq) seq {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	out := make(seq, 0, len(a)+len(b)-1)
	out = append(out, a[:len(a)-1]...)
	l, r := a[len(a)-1], b[0]
	j := field{s: l.s + r.s, meta: l.meta, unknown: l.unknown || r.unknown, proc: l.proc || r.proc, quoted: l.quoted || r.quoted,
		splits: l.splits || r.splits}
	switch {
	case l.unknown:
		j.knownHead = l.knownHead
	case l.s != "":
		j.knownHead = true
	default:
		j.knownHead = !r.unknown || r.knownHead
	}
	if j.meta < 0 && r.meta >= 0 {
		j.meta = len(l.s) + r.meta
	}
	out = append(out, j)
	return append(out, b[1:]...)
}

// product concatenates every alternative of a with every one of b.
func product(a, b []seq) ([]seq, bool) {
	if len(a)*len(b) > maxAlternatives {
		return nil, false
	}
	out := make([]seq, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, concat(x, y))
		}
	}
	return out, true
}

type expandMode uint8

const (
	modeFields expandMode = iota // command arguments: split, glob, braces
	modeAssign                   // assignment values: one field, no split, no glob
)

// words expands command arguments into fields.
func (a *analyzer) words(st *state, ws []*syntax.Word) []field {
	var out []field
	for _, w := range ws {
		out = append(out, a.word(st, w, modeFields)...)
	}
	a.globReads(st, out)
	return out
}

// globReads: expanding a glob lists the folders it walks (echo hidden/*
// shows names), which is a read of its folder's subtree.
func (a *analyzer) globReads(st *state, fs []field) {
	for _, f := range fs {
		if f.meta >= 0 && !f.unknown && !f.proc {
			a.emitResolved(a.resolve(st, f, true), zones.OpRead, "glob", pathOpts{subtree: true})
		}
	}
}

// word expands one word. Substitutions inside it are analysed as they are met.
func (a *analyzer) word(st *state, w *syntax.Word, mode expandMode) []field {
	if w == nil {
		return nil
	}
	if mode == modeFields && !st.posix {
		// On a copy: the tree keeps its shape (and positions) for printing.
		cp := *w
		if syntax.SplitBraces(&cp) {
			w = &cp
		}
	}
	alts := a.parts(st, w.Parts, false, mode, true)
	var out []field
	for _, s := range alts {
		for _, f := range s {
			if mode == modeFields && !f.quoted && !f.unknown && !f.proc && f.s == "" && f.meta < 0 {
				continue // an unquoted empty expansion is no field at all
			}
			if mode == modeAssign {
				f.meta = -1
			}
			out = append(out, f)
		}
	}
	if mode == modeAssign && len(out) != 1 {
		if len(out) == 0 {
			return []field{{meta: -1, quoted: true}}
		}
		return []field{{meta: -1, unknown: true}}
	}
	return out
}

func unknownSeq() []seq { return []seq{{{meta: -1, unknown: true}}} }

// parts expands word parts into alternatives. first says the parts start a word
// (where a tilde expands).
func (a *analyzer) parts(st *state, ps []syntax.WordPart, quoted bool, mode expandMode, first bool) []seq {
	acc := []seq{nil}
	for i, p := range ps {
		next := a.part(st, p, quoted, mode, first && i == 0)
		var ok bool
		acc, ok = product(acc, next)
		if !ok {
			// Still walk the rest for substitutions, but the word is unknown.
			for _, q := range ps[i+1:] {
				a.part(st, q, quoted, mode, false)
			}
			return unknownSeq()
		}
	}
	return acc
}

func litField(s string) field { return field{s: s, meta: -1} }

func (a *analyzer) part(st *state, p syntax.WordPart, quoted bool, mode expandMode, first bool) []seq {
	out := a.partFields(st, p, quoted, mode, first)
	if pe, ok := p.(*syntax.ParamExp); ok && simpleParam(pe) && pe.Param != nil && countParam(st, pe.Param.Value) {
		// $$, $!, $#…: digits only. (The "0" stands for them: an unknown
		// field's text is read only for its first character.)
		for _, sq := range out {
			for i := range sq {
				if sq[i].unknown && sq[i].s == "" {
					sq[i].s, sq[i].knownHead = "0", true
				}
			}
		}
		return out
	}
	if !quoted && mode == modeFields {
		switch p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			for _, sq := range out {
				for i := range sq {
					if sq[i].unknown {
						sq[i].splits = true
					}
				}
			}
		}
	}
	return out
}

func (a *analyzer) partFields(st *state, p syntax.WordPart, quoted bool, mode expandMode, first bool) []seq {
	switch p := p.(type) {
	case *syntax.Lit:
		if quoted {
			return []seq{{{s: unescapeDouble(p.Value), meta: -1, quoted: true}}}
		}
		v := p.Value
		if mode == modeAssign && tildeInAssign(v) {
			return unknownSeq() // $HOME or ~user: not known here
		}
		if first && strings.HasPrefix(v, "~") {
			// $HOME or ~user: not known here, but a path ("/…") or the
			// text itself ("~…"), never an option and never split.
			return []seq{{{s: "~", meta: -1, unknown: true, knownHead: true}}}
		}
		return []seq{{unescapeLit(v)}}
	case *syntax.SglQuoted:
		if p.Dollar {
			s, ok := decodeANSI(p.Value)
			if !ok {
				return unknownSeq()
			}
			return []seq{{{s: s, meta: -1, quoted: true}}}
		}
		return []seq{{{s: p.Value, meta: -1, quoted: true}}}
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return []seq{{{meta: -1, quoted: true}}}
		}
		if p.Dollar {
			// $"…" is a locale translation: the text could be anything.
			a.parts(st, p.Parts, true, mode, false)
			return unknownSeq()
		}
		out := a.parts(st, p.Parts, true, mode, false)
		for _, s := range out {
			for i := range s {
				s[i].quoted = true
			}
		}
		return out
	case *syntax.ParamExp:
		return a.paramExp(st, p, quoted, mode)
	case *syntax.CmdSubst:
		a.subshell(st, p.Stmts, inDynamic)
		return unknownSeq()
	case *syntax.ArithmExp:
		a.arith(st, p.X)
		return unknownSeq()
	case *syntax.ProcSubst:
		in := inNull
		if p.Op == syntax.CmdOut {
			in = inDynamic
		}
		a.subshell(st, p.Stmts, in)
		return []seq{{{meta: -1, proc: true}}}
	case *syntax.ExtGlob:
		if quoted {
			return []seq{{litField(p.Op.String() + p.Pattern.Value + ")")}}
		}
		return []seq{{{s: p.Op.String() + p.Pattern.Value + ")", meta: 0}}}
	case *syntax.BraceExp:
		return a.braceExp(st, p, quoted, mode)
	}
	return unknownSeq()
}

// countParam reports whether the parameter holds a number that is never
// negative: bash's own counters and ids, while the script has not set them.
func countParam(st *state, name string) bool {
	if _, set := st.vars[name]; set {
		return false
	}
	switch name {
	case "#", "?", "$", "!", "RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "SRANDOM", "EPOCHSECONDS":
		return true
	}
	return false
}

func tildeInAssign(v string) bool {
	return strings.HasPrefix(v, "~") || strings.Contains(v, ":~")
}

func (a *analyzer) braceExp(st *state, b *syntax.BraceExp, quoted bool, mode expandMode) []seq {
	if b.Sequence {
		var lits []string
		for _, e := range b.Elems {
			s, ok := wordLit(e)
			if !ok {
				return unknownSeq()
			}
			lits = append(lits, s)
		}
		vals, ok := braceSequence(lits)
		if !ok {
			return unknownSeq()
		}
		out := make([]seq, len(vals))
		for i, v := range vals {
			out[i] = seq{litField(v)}
		}
		return out
	}
	var out []seq
	for _, e := range b.Elems {
		out = append(out, a.parts(st, e.Parts, quoted, mode, false)...)
		if len(out) > maxAlternatives {
			return unknownSeq()
		}
	}
	return out
}

// braceSequence expands {x..y[..step]} for numbers and single letters.
func braceSequence(lits []string) ([]string, bool) {
	if len(lits) < 2 {
		return nil, false
	}
	step := 1
	if len(lits) == 3 {
		n, err := strconv.Atoi(lits[2])
		if err != nil || n == 0 {
			return nil, false
		}
		if n < 0 {
			n = -n
		}
		step = n
	}
	var from, to int
	letters := false
	if x, err := strconv.Atoi(lits[0]); err == nil {
		y, err := strconv.Atoi(lits[1])
		if err != nil {
			return nil, false
		}
		from, to = x, y
	} else if len(lits[0]) == 1 && len(lits[1]) == 1 {
		from, to, letters = int(lits[0][0]), int(lits[1][0]), true
	} else {
		return nil, false
	}
	var out []string
	add := func(i int) bool {
		if len(out) >= maxAlternatives {
			return false
		}
		if letters {
			out = append(out, string(rune(i)))
		} else {
			out = append(out, strconv.Itoa(i))
		}
		return true
	}
	if from <= to {
		for i := from; i <= to; i += step {
			if !add(i) {
				return nil, false
			}
		}
	} else {
		for i := from; i >= to; i -= step {
			if !add(i) {
				return nil, false
			}
		}
	}
	return out, true
}

// wordLit returns a word's text when it is one plain literal.
func wordLit(w *syntax.Word) (string, bool) {
	if w == nil || len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(l.Value, "\\*?[~") {
		return "", false
	}
	return l.Value, true
}

var specialParams = "@*#?-$!0123456789"

func (a *analyzer) paramExp(st *state, p *syntax.ParamExp, quoted bool, mode expandMode) []seq {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.NestedParam != nil {
		a.part(st, p.NestedParam, quoted, mode, false)
		name = ""
	}
	if p.Index != nil && !allIndex(p.Index) {
		a.arith(st, p.Index)
	}
	if p.Slice != nil {
		if p.Slice.Offset != nil {
			a.arith(st, p.Slice.Offset)
		}
		if p.Slice.Length != nil {
			a.arith(st, p.Slice.Length)
		}
	}
	if p.Repl != nil {
		a.word(st, p.Repl.Orig, modeAssign)
		a.word(st, p.Repl.With, modeAssign)
	}
	var v *value
	if name != "" && !strings.Contains(specialParams, name) {
		v = st.vars[name]
	}
	if p.Excl {
		// ${!x}: x names the variable, and a name like a[$(cmd)] runs cmd.
		if p.Names == 0 && (v == nil || !v.known || !allValidNames(v)) {
			a.exec(st, "${!"+name+"}", DynamicExpansion, "${!"+name+"}")
		}
		return unknownSeq()
	}
	if p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Width || p.IsSet {
		return unknownSeq()
	}
	if p.Exp != nil {
		op := p.Exp.Op
		if op == syntax.OtherParamOps {
			flag, _ := wordLit(p.Exp.Word)
			if flag == "P" && (v == nil || !v.known || !promptSafe(v)) {
				a.exec(st, "${"+name+"@P}", DynamicExpansion, "${"+name+"@P}")
			}
			if flag == "Q" || flag == "E" || flag == "P" || flag == "A" || flag == "K" || flag == "k" {
				return unknownSeq()
			}
			if flag == "a" || flag == "U" || flag == "u" || flag == "L" {
				return unknownSeq()
			}
			return unknownSeq()
		}
		wordAlts := func() []seq {
			if p.Exp.Word == nil {
				return []seq{{{meta: -1, quoted: quoted}}}
			}
			return a.parts(st, p.Exp.Word.Parts, quoted, mode, false)
		}
		switch op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
			syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
			w := wordAlts()
			if op == syntax.AssignUnset || op == syntax.AssignUnsetOrNull {
				if name != "" && (v == nil || !v.known) {
					st.setVar(name, unknownValue())
				}
			}
			if v != nil && v.known && nonEmpty(v) {
				return a.valueSeqs(st, v, quoted)
			}
			if op == syntax.ErrorUnset || op == syntax.ErrorUnsetOrNull {
				return unknownSeq()
			}
			if v != nil && v.known {
				return w
			}
			return unknownSeq()
		case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			w := wordAlts()
			if v != nil && v.known && nonEmpty(v) {
				return w
			}
			return unknownSeq()
		default:
			wordAlts()
			return unknownSeq()
		}
	}
	if v == nil || !v.known {
		return unknownSeq()
	}
	return a.valueSeqs(st, v, quoted)
}

func nonEmpty(v *value) bool {
	for _, x := range v.alts {
		if x.s == "" {
			return false
		}
	}
	return true
}

func allValidNames(v *value) bool {
	for _, x := range v.alts {
		if x.match || !validName(x.s) {
			return false
		}
	}
	return true
}

// promptSafe: prompt expansion of a literal with no $, backquote or backslash
// is the literal itself.
func promptSafe(v *value) bool {
	for _, x := range v.alts {
		if x.match || strings.ContainsAny(x.s, "$`\\") {
			return false
		}
	}
	return true
}

// valueSeqs turns a tracked value into fields: unquoted, it is split on
// blanks and its glob characters are active.
func (a *analyzer) valueSeqs(st *state, v *value, quoted bool) []seq {
	out := make([]seq, 0, len(v.alts))
	for _, x := range v.alts {
		if x.match {
			out = append(out, seq{{s: x.s, meta: globIndex(x.s)}})
			continue
		}
		if quoted {
			out = append(out, seq{{s: x.s, meta: -1, quoted: true}})
			continue
		}
		if st.ifsChanged {
			out = append(out, seq{{meta: -1, unknown: true}})
			continue
		}
		out = append(out, splitValue(x.s))
	}
	return out
}

// splitValue splits an unquoted expansion on the default IFS. Leading or
// trailing blanks give empty fields at the edges, which concatenation then
// keeps apart from their neighbours.
func splitValue(s string) seq {
	if !strings.ContainsAny(s, " \t\n") {
		return seq{{s: s, meta: globIndex(s)}}
	}
	var out seq
	if s != "" && strings.ContainsRune(" \t\n", rune(s[0])) {
		out = append(out, field{meta: -1})
	}
	for _, w := range strings.Fields(s) {
		out = append(out, field{s: w, meta: globIndex(w)})
	}
	if strings.ContainsRune(" \t\n", rune(s[len(s)-1])) {
		out = append(out, field{meta: -1})
	}
	return out
}

// globIndex is the index of the first glob character of unquoted text.
func globIndex(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?':
			return i
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				return i
			}
		}
	}
	return -1
}

// unescapeLit removes backslash escapes from unquoted text and finds the
// first active glob character.
func unescapeLit(v string) field {
	if !strings.ContainsAny(v, "\\*?[") {
		return field{s: v, meta: -1}
	}
	var b strings.Builder
	meta := -1
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			i++
			if v[i] == '\n' {
				continue
			}
			b.WriteByte(v[i])
			continue
		}
		if (c == '*' || c == '?' || c == '[' && strings.IndexByte(v[i+1:], ']') >= 0) && meta < 0 {
			meta = b.Len()
		}
		b.WriteByte(c)
	}
	return field{s: b.String(), meta: meta}
}

// unescapeDouble removes the escapes that mean something inside "…".
func unescapeDouble(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				b.WriteByte(v[i+1])
				i++
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// decodeANSI decodes $'…'. Escapes it does not know exactly make it fail,
// so the word becomes unknown instead of guessed.
func decodeANSI(v string) (string, bool) {
	if !strings.Contains(v, "\\") {
		return v, true
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(v) {
			b.WriteByte('\\')
			break
		}
		switch v[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(v[i])
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[v[i]]
			j := i + 1
			for j < len(v) && j-i-1 < n && isHex(v[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			x, err := strconv.ParseUint(v[i+1:j], 16, 32)
			if err != nil || x == 0 {
				return "", false
			}
			if v[i] == 'x' {
				b.WriteByte(byte(x))
			} else {
				if !utf8.ValidRune(rune(x)) {
					return "", false
				}
				b.WriteRune(rune(x))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(v) && j-i < 3 && v[j] >= '0' && v[j] <= '7' {
				j++
			}
			x, _ := strconv.ParseUint(v[i:j], 8, 16)
			if x == 0 {
				return "", false
			}
			b.WriteByte(byte(x))
			i = j - 1
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// allIndex: ${a[@]} and ${a[*]} are not arithmetic.
func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && (l.Value == "@" || l.Value == "*")
}
