package zones

import (
	"errors"
	"testing"
)

// drop is a kind the built-ins don't have, defined only here: a write-only
// inbox that may be created and moved into but not read. Its op set is
// incomparable with protected's, so it tests that "stricter" is the
// intersection of sets, not an order.
var drop = mustDefine(KindSpec{
	Name:    "drop",
	Allows:  Ops(OpCreate, OpMoveIn),
	Colour:  Colour{ANSI: "35", CSS: "#7b1fa2"},
	English: "drop new files in, never read them",
	Russian: "класть новые файлы, но не читать",
})

func mustDefine(s KindSpec) Mode {
	m, err := Define(s)
	if err != nil {
		panic(err)
	}
	return m
}

// TestStricter is the intersection of every pair of built-in kinds, written
// out: row ∩ column.
func TestStricter(t *testing.T) {
	kinds := []Mode{NoZone, Hidden, Protected, Create, Edit, Write}
	want := [][]Mode{
		// none    hidden  protected  create     edit       write
		{NoZone, NoZone, NoZone, NoZone, NoZone, NoZone},             // none
		{NoZone, Hidden, Hidden, Hidden, Hidden, Hidden},             // hidden
		{NoZone, Hidden, Protected, Protected, Protected, Protected}, // protected
		{NoZone, Hidden, Protected, Create, Create, Create},          // create
		{NoZone, Hidden, Protected, Create, Edit, Edit},              // edit
		{NoZone, Hidden, Protected, Create, Edit, Write},             // write
	}
	for i, a := range kinds {
		for j, b := range kinds {
			got := Stricter(a, b)
			if got != want[i][j] {
				t.Errorf("Stricter(%s, %s) = %s, want %s", a, b, got, want[i][j])
			}
			if a != NoZone && b != NoZone && got.Ops() != a.Ops()&b.Ops() {
				t.Errorf("Stricter(%s, %s) allows %s, not the intersection %s", a, b, got.Ops(), a.Ops()&b.Ops())
			}
		}
	}
}

// TestLaundersPairs: content may move only where it is no freer than it
// was. A row is the source, a column the destination.
func TestLaundersPairs(t *testing.T) {
	kinds := []Mode{NoZone, Hidden, Protected, Create, Edit, Write}
	want := []string{
		// destination: none hidden protected create edit write
		"..LLLL", // none
		"..LLLL", // hidden
		"...LLL", // protected
		"....LL", // create
		".....L", // edit
		"......", // write
	}
	for i, from := range kinds {
		for j, to := range kinds {
			if got, exp := Launders(from, to), want[i][j] == 'L'; got != exp {
				t.Errorf("Launders(%s → %s) = %v, want %v", from, to, got, exp)
			}
		}
	}
}

func TestListedAndAtMost(t *testing.T) {
	for _, c := range []struct {
		m      Mode
		listed bool
	}{{NoZone, false}, {Hidden, false}, {Protected, true}, {Create, true}, {Edit, true}, {Write, true}, {drop, false}} {
		if got := c.m.Listed(); got != c.listed {
			t.Errorf("%s listed = %v, want %v", c.m, got, c.listed)
		}
	}
	if !Protected.AtMost(Edit) || Edit.AtMost(Protected) || !Hidden.AtMost(NoZone) || drop.AtMost(Protected) || Protected.AtMost(drop) {
		t.Error("AtMost is not set inclusion")
	}
}

// TestDefinedKind judges the test-only kind through the zone table.
func TestDefinedKind(t *testing.T) {
	if got, ok := ParseMode("drop"); !ok || got != drop {
		t.Fatalf("ParseMode(drop) = %v, %v", got, ok)
	}
	for _, c := range []struct {
		a, b, want Mode
	}{
		{drop, Protected, Hidden}, // {create, move-in} ∩ {read} = nothing
		{drop, Hidden, Hidden},
		{drop, Create, drop},
		{drop, Edit, drop},
		{drop, Write, drop},
		{drop, NoZone, NoZone},
	} {
		if got, back := Stricter(c.a, c.b), Stricter(c.b, c.a); got != c.want || back != c.want {
			t.Errorf("Stricter(%s, %s) = %s, %s; want %s", c.a, c.b, got, back, c.want)
		}
	}
	if !Launders(drop, Edit) || Launders(Edit, drop) || !Launders(drop, Protected) || !Launders(Protected, drop) {
		t.Error("laundering between drop and the built-ins is wrong")
	}
	if drop.Describe("ru") != "класть новые файлы, но не читать" || drop.Colour().ANSI != "35" {
		t.Error("drop's words or colour are lost")
	}

	tab, err := New(vault, []Entry{{".", Edit}, {"inbox", drop}, {"мета", Protected}}, Options{Protect: []string{"inbox/rules.md"}})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]Mode{
		"inbox":          drop,
		"inbox/new.md":   drop,
		"INBOX/new.md":   drop,   // exact "." edit, folded drop: edit ∩ drop
		"inbox/.git/x":   Hidden, // the control cap (protected) ∩ drop
		"inbox/rules.md": Hidden, // the config cap (protected) ∩ drop
		"мета/x":         Protected,
	} {
		if got := tab.Zone(at(p)); got != want {
			t.Errorf("Zone(%q) = %s, want %s", p, got, want)
		}
	}
	if !tab.Zone(at("inbox/x")).Allows(OpCreate) || tab.Zone(at("inbox/x")).Allows(OpRead) {
		t.Error("drop must allow create and not read")
	}
	if w := tab.Where(OpRead); len(w) != 2 {
		t.Errorf("Where(read) = %v, want . and мета", w)
	}
}

func TestDefineRejects(t *testing.T) {
	words := func(s KindSpec) KindSpec { s.English, s.Russian = "x", "х"; return s }
	for _, s := range []KindSpec{
		words(KindSpec{Name: "drop", Allows: Ops(OpRead, OpDelete)}),            // taken
		words(KindSpec{Name: "reader", Allows: Ops(OpRead)}),                    // protected's set
		words(KindSpec{Name: "Big", Allows: Ops(OpRead, OpLink)}),               // not a config name
		words(KindSpec{Name: "", Allows: Ops(OpRead, OpLink)}),                  //
		words(KindSpec{Name: "runner", Allows: Ops(OpRead, OpExec)}),            // exec is the wall's
		words(KindSpec{Name: "append", Allows: Ops(OpCreate, OpModify)}),        // ∩ create = {create}: no such kind
		{Name: "mute", Allows: Ops(OpRead, OpLink)},                             // no words
		words(KindSpec{Name: "none", Allows: Ops(OpRead, OpModify, OpMoveOut)}), // no zone is no kind
		words(KindSpec{Name: "loud", Allows: Ops(OpRead, OpLink), Colour: Colour{ANSI: "31m\x1b]0;x"}}),
		words(KindSpec{Name: "styled", Allows: Ops(OpRead, OpLink), Colour: Colour{CSS: "red;}body{x:y"}}),
	} {
		if m, err := Define(s); err == nil || !errors.Is(err, ErrKindTable) {
			t.Errorf("Define(%+v) = %s, %v; want an error", s, m, err)
		}
	}
	if _, ok := ParseMode("append"); ok {
		t.Error("a rejected kind was added anyway")
	}
}
