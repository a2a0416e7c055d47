package zones

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
)

// Mode is a zone's kind: an index into the kind table. What a kind means is
// all in its entry there (the ops it allows, its colour, its description);
// code asks Allows, never which kind it is or where it stands in an order.
type Mode uint8

// The built-in kinds, in the order init defines them.
const (
	NoZone    Mode = iota // in no zone: every effect denied, not listed
	Hidden                // not even readable, not listed
	Protected             // read only
	Create                // new files only
	Edit                  // create, change, move; never delete
	Write                 // anything, deleting included
)

// OpSet is a set of ops.
type OpSet uint16

// Ops returns the set of the ops given.
func Ops(ops ...Op) OpSet {
	var s OpSet
	for _, op := range ops {
		if op < numOps {
			s |= 1 << op
		}
	}
	return s
}

// Has reports whether op is in the set.
func (s OpSet) Has(op Op) bool { return op < numOps && s&(1<<op) != 0 }

// String lists the ops by name: "read,create".
func (s OpSet) String() string {
	var names []string
	for op := Op(0); op < numOps; op++ {
		if s.Has(op) {
			names = append(names, op.String())
		}
	}
	if names == nil {
		return "nothing"
	}
	return strings.Join(names, ",")
}

// zoneOps are the ops a zone can allow at all: exec never, since only the
// wall can bound a program whose effects can't be known.
var zoneOps = Ops(OpRead, OpCreate, OpModify, OpDelete, OpMoveOut, OpMoveIn, OpLink)

// Colour is how a kind is shown to a person.
type Colour struct {
	ANSI string // SGR parameters for a terminal ("32" is green)
	CSS  string // a CSS colour for the admin panel
}

// KindSpec is one entry of the kind table.
type KindSpec struct {
	Name string // as the config spells it: lower case letters, digits, '-' and '_'
	// Allows are the ops a path in the zone may have. For OpMoveIn it is
	// the "as create" half: a move over an existing file is a modify, and
	// laundering is the caller's check (see Launders).
	Allows OpSet
	Colour Colour
	// English and Russian say in a few words what the kind allows, for
	// refusals and listings: "read only", «только чтение».
	English, Russian string
}

// maxKinds bounds the table, so that intersections are a fixed array that
// Table.Zone reads without allocating.
const maxKinds = 32

// registry is the kind table. It is never changed once published: Define
// copies it, so readers need no lock.
type registry struct {
	n     int
	kinds [maxKinds]KindSpec
	// meet[a][b] is the kind whose ops are the intersection of a's and
	// b's: the stricter of two zones.
	meet [maxKinds][maxKinds]Mode
}

// kinds is the published table; defineMu serialises Define. kinds is
// built by a variable initialiser, not init, so that a test's package-level
// kind (var drop = ...) is defined after the built-ins.
var (
	kinds    = builtinKinds()
	defineMu sync.Mutex
)

func builtinKinds() *atomic.Pointer[registry] {
	r := &registry{n: 1}
	r.kinds[NoZone] = KindSpec{Name: "none", Colour: Colour{ANSI: "90", CSS: "#6b7280"}, English: "nothing", Russian: "ничего"}
	builtins := []struct {
		want Mode
		spec KindSpec
	}{
		{Hidden, KindSpec{Name: "hidden", Colour: Colour{ANSI: "31", CSS: "#c62828"},
			English: "not even readable", Russian: "даже чтение закрыто"}},
		{Protected, KindSpec{Name: "protected", Allows: Ops(OpRead), Colour: Colour{ANSI: "33", CSS: "#c62828"},
			English: "read only", Russian: "только чтение"}},
		{Create, KindSpec{Name: "create", Allows: Ops(OpRead, OpCreate, OpMoveIn), Colour: Colour{ANSI: "34", CSS: "#6b7280"},
			English: "new files only", Russian: "только новые файлы"}},
		{Edit, KindSpec{Name: "edit", Allows: Ops(OpRead, OpCreate, OpModify, OpMoveOut, OpMoveIn), Colour: Colour{ANSI: "36", CSS: "#6b7280"},
			English: "create, change and move, but never delete", Russian: "создавать, менять и перемещать, но не удалять"}},
		{Write, KindSpec{Name: "write", Allows: zoneOps, Colour: Colour{ANSI: "32", CSS: "#6b7280"},
			English: "anything, deleting included", Russian: "всё, включая удаление"}},
	}
	for _, b := range builtins {
		next, m, err := r.with(b.spec)
		if err != nil || m != b.want {
			panic(fmt.Sprintf("zones: built-in kind %s: %v", b.spec.Name, err))
		}
		r = next
	}
	p := new(atomic.Pointer[registry])
	p.Store(r)
	return p
}

// ErrKindTable is wrapped by every error Define returns.
var ErrKindTable = errors.New("zones: kind table")

// Define adds a zone kind to the table and returns it. It is meant for init
// time and tests. Every kind's op set is distinct and a subset of write's,
// and the intersection of the new kind with each existing one must be some
// kind's set: "the stricter of two zones" is then always a kind with its
// own name and words, never a set no one described.
func Define(spec KindSpec) (Mode, error) {
	defineMu.Lock()
	defer defineMu.Unlock()
	r, m, err := kinds.Load().with(spec)
	if err != nil {
		return NoZone, err
	}
	kinds.Store(r)
	return m, nil
}

// with returns a copy of old with spec added and its intersections with
// every kind computed.
func (old *registry) with(spec KindSpec) (*registry, Mode, error) {
	fail := func(format string, args ...any) (*registry, Mode, error) {
		return nil, NoZone, fmt.Errorf("%w: %q: %s", ErrKindTable, spec.Name, fmt.Sprintf(format, args...))
	}
	if !validKindName(spec.Name) {
		return fail("a kind's name is lower case letters, digits, '-' and '_'")
	}
	if old.n >= maxKinds {
		return fail("the table holds at most %d kinds", maxKinds)
	}
	if spec.Allows&^zoneOps != 0 {
		return fail("a zone can't allow %s", spec.Allows&^zoneOps)
	}
	if spec.English == "" || spec.Russian == "" {
		return fail("the kind needs its description in English and Russian")
	}
	if !validColour(spec.Colour) {
		return fail("a colour is SGR digits and ';' for the terminal, and #rgb or #rrggbb for the panel")
	}
	for m := Mode(0); int(m) < old.n; m++ {
		if old.kinds[m].Name == spec.Name {
			return fail("already defined")
		}
		if m != NoZone && old.kinds[m].Allows == spec.Allows {
			return fail("allows the same as %q", old.kinds[m].Name)
		}
	}
	kindOf := func(s OpSet) (Mode, bool) {
		for m := Mode(1); int(m) < old.n; m++ {
			if old.kinds[m].Allows == s {
				return m, true
			}
		}
		return NoZone, false
	}
	r := *old
	self := Mode(r.n)
	r.kinds[self] = spec
	r.n++
	r.meet[self][self] = self
	r.meet[self][NoZone], r.meet[NoZone][self] = NoZone, NoZone
	for m := Mode(1); m < self; m++ {
		both := spec.Allows & old.kinds[m].Allows
		meet, ok := kindOf(both)
		switch {
		case both == spec.Allows:
			meet = self
		case ok:
		default:
			return fail("its intersection with %q allows %s, which no kind does: define that kind first", old.kinds[m].Name, both)
		}
		r.meet[self][m], r.meet[m][self] = meet, meet
	}
	return &r, self, nil
}

// validColour keeps a kind's colours from carrying anything but a colour
// into a terminal or a style sheet. Empty means the default.
func validColour(c Colour) bool {
	for i := 0; i < len(c.ANSI); i++ {
		if (c.ANSI[i] < '0' || c.ANSI[i] > '9') && c.ANSI[i] != ';' {
			return false
		}
	}
	if c.CSS == "" {
		return true
	}
	if c.CSS[0] != '#' || (len(c.CSS) != 4 && len(c.CSS) != 7) {
		return false
	}
	for _, r := range c.CSS[1:] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

func validKindName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Kinds returns every defined kind in the order they were defined, NoZone
// first.
func Kinds() []Mode {
	r := kinds.Load()
	out := make([]Mode, r.n)
	for i := range out {
		out[i] = Mode(i)
	}
	return out
}

// spec returns m's entry; an undefined m is described as no zone, which
// allows nothing.
func (m Mode) spec() *KindSpec {
	r := kinds.Load()
	if int(m) >= r.n {
		return &r.kinds[NoZone]
	}
	return &r.kinds[m]
}

// String returns the kind's name as the config spells it ("none" for no
// zone).
func (m Mode) String() string {
	if int(m) >= kinds.Load().n {
		return "unknown"
	}
	return m.spec().Name
}

// MarshalText makes modes print by name in JSON.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// ParseMode reads a config zone name. "none" is not accepted: no zone is the
// absence of an entry, never something a user configures.
func ParseMode(s string) (Mode, bool) {
	r := kinds.Load()
	for m := Mode(1); int(m) < r.n; m++ {
		if r.kinds[m].Name == s {
			return m, true
		}
	}
	return NoZone, false
}

// Ops returns the set of ops the kind allows.
func (m Mode) Ops() OpSet { return m.spec().Allows }

// Allows reports whether a zone of mode m permits op on a path in it. For
// OpMoveIn it answers the "as create" half; a move-in over an existing file is
// a modify, and laundering is the caller's check (see Launders). OpExec is
// never allowed by a zone: only the wall can run what can't be analysed.
func (m Mode) Allows(op Op) bool { return m.spec().Allows.Has(op) }

// Listed reports whether paths in a zone of mode m appear in list and search:
// those that may be read.
func (m Mode) Listed() bool { return m.Allows(OpRead) }

// AtMost reports whether m allows nothing that o does not.
func (m Mode) AtMost(o Mode) bool { return m.Ops()&^o.Ops() == 0 }

// Colour returns how the kind is shown.
func (m Mode) Colour() Colour { return m.spec().Colour }

// Describe says in a few words what the kind allows, in lang ("en" or "ru").
func (m Mode) Describe(lang string) string {
	if lang == "ru" {
		return m.spec().Russian
	}
	return m.spec().English
}

// Stricter returns the kind that allows what both a and b allow, and nothing
// else. No zone is stricter than every kind, an empty one included.
func Stricter(a, b Mode) Mode { return kinds.Load().stricter(a, b) }

func (r *registry) stricter(a, b Mode) Mode {
	if int(a) >= r.n || int(b) >= r.n {
		return NoZone
	}
	return r.meet[a][b]
}

// Launders reports whether moving (or hard-linking) content from a zone of
// mode from into a zone of mode to would let it be deleted or changed more
// freely than where it was: to allows an op that from does not. write →
// edit is fine; edit → write is not.
func Launders(from, to Mode) bool { return !to.AtMost(from) }

// Len returns how many ops are in the set.
func (s OpSet) Len() int { return bits.OnesCount16(uint16(s)) }
