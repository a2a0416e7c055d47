package zones

// Op is what an effect does to a path. Rules judge ops, never raw tool
// arguments, so one table guards every tool and every entry point.
type Op uint8

const (
	OpRead    Op = iota // read a file, list a folder, search
	OpCreate            // make a new file or folder
	OpModify            // overwrite, edit, append, truncate, chmod, touch an existing file
	OpDelete            // remove a file or folder
	OpMoveOut           // the source of a move or rename
	OpMoveIn            // the destination of a move or rename
	OpLink              // the name of a new hard link
	OpExec              // a program whose effects can't be known statically
	numOps
)

var opNames = [numOps]string{"read", "create", "modify", "delete", "move-out", "move-in", "link", "exec"}

// String returns the op's name as the audit log and `check` print it.
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "unknown"
}

// ParseOp is the inverse of String.
func ParseOp(s string) (Op, bool) {
	for i, n := range opNames {
		if n == s {
			return Op(i), true
		}
	}
	return 0, false
}

// MarshalText makes ops print by name in JSON.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText accepts the names String gives.
func (o *Op) UnmarshalText(b []byte) error {
	v, ok := ParseOp(string(b))
	if !ok {
		return &UnknownNameError{Kind: "op", Name: string(b)}
	}
	*o = v
	return nil
}

// UnknownNameError is returned for an op or zone mode name that does not exist.
type UnknownNameError struct {
	Kind string
	Name string
}

func (e *UnknownNameError) Error() string { return "unknown " + e.Kind + " " + `"` + e.Name + `"` }
