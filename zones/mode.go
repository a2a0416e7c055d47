package zones

// Mode is a zone's kind. The order is from strictest to most permissive, so
// the stricter of two modes is the smaller one.
type Mode uint8

const (
	NoZone    Mode = iota // in no zone: every effect denied, not listed
	Hidden                // not even readable, not listed
	Protected             // read only
	Create                // new files only
	Edit                  // create, change, move; never delete
	Write                 // anything, deleting included
	numModes
)

var modeNames = [numModes]string{"none", "hidden", "protected", "create", "edit", "write"}

// String returns the mode's name as the config spells it ("none" for no zone).
func (m Mode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return "unknown"
}

// ParseMode reads a config zone name. "none" is not accepted: no zone is the
// absence of an entry, never something a user configures.
func ParseMode(s string) (Mode, bool) {
	for i, n := range modeNames {
		if n == s && Mode(i) != NoZone {
			return Mode(i), true
		}
	}
	return 0, false
}

// MarshalText makes modes print by name in JSON.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// allows is the zone table of DESIGN.md §3 for the ops a zone alone decides.
// move-in and link depend on more than the zone (does the destination exist,
// where does the content come from) and are judged by Allows below.
var allows = [numModes][numOps]bool{
	NoZone:    {},
	Hidden:    {},
	Protected: {OpRead: true},
	Create:    {OpRead: true, OpCreate: true, OpMoveIn: true},
	Edit:      {OpRead: true, OpCreate: true, OpModify: true, OpMoveOut: true, OpMoveIn: true},
	Write:     {OpRead: true, OpCreate: true, OpModify: true, OpDelete: true, OpMoveOut: true, OpMoveIn: true, OpLink: true},
}

// Allows reports whether a zone of mode m permits op on a path in it. For
// OpMoveIn it answers the "as create" half; a move-in over an existing file is
// a modify, and laundering is the caller's check (see Launders). OpExec is
// never allowed by a zone: only the wall can run what can't be analysed.
func (m Mode) Allows(op Op) bool {
	if m >= numModes || op >= numOps {
		return false
	}
	return allows[m][op]
}

// Launders reports whether moving (or hard-linking) content from a zone of
// mode from into a zone of mode to would let it be deleted or changed more
// freely than where it was. write → edit is fine; edit → write is not.
func Launders(from, to Mode) bool {
	return to > from
}

// Listed reports whether paths in a zone of mode m appear in list and search.
func (m Mode) Listed() bool { return m > Hidden }
