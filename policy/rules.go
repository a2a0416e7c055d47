package policy

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

// ZonesRule judges every effect against the zone table: what its path's kind
// allows, laundering, anchors, links and every zone inside a subtree.
var ZonesRule = Rule{Name: "zones", Check: checkZones}

// maxReasons bounds how many denied parts of one bash command are told.
const maxReasons = 8

func checkZones(c *ToolCall) *Deny {
	var first *Deny
	var reasons []string
	for i := range c.Effects {
		d := checkEffect(c, &c.Effects[i])
		if d == nil {
			continue
		}
		if !IsBash(c.Tool) {
			return d
		}
		// A command has many parts: tell the model every part that is
		// refused, so it can fix them all at once.
		if first == nil {
			first = d
		}
		if !slices.Contains(reasons, d.Reason) && len(reasons) < maxReasons {
			reasons = append(reasons, d.Reason)
		}
	}
	if first != nil && len(reasons) > 1 {
		first.Reason = strings.Join(reasons, "\n")
	}
	return first
}

func checkEffect(c *ToolCall, e *Effect) *Deny {
	deny := func(key string, args ...any) *Deny {
		return &Deny{Effect: e, Reason: msg(c.Lang, key, args...)}
	}
	lang, t := c.Lang, c.Zones
	if e.Op == zones.OpExec {
		return nil // the bash rule decides what runs; zones have no say
	}
	phrase := OpPhrase(lang, e.Op)
	if e.Unknown {
		if e.Op != zones.OpRead {
			return deny("unknownPath", phrase, "", "", "", "", "", e.Command)
		}
		if c.Walled {
			return nil // the wall hides what can't be read
		}
		// Without the wall an unknown path could be any file on the
		// machine, not only in the vault: the server's own
		// /proc/<pid>/environ, a key in its home. So it is refused, and
		// the model is told to write the path out (stricter than read
		// on the whole vault, which would let a guessed pid through).
		return deny("unknownReadNoWall", phrase, "", "", "", "", "", e.Command)
	}
	op := e.Op
	if op == zones.OpMoveIn && e.Exists {
		op = zones.OpModify // a move over an existing file replaces it
	}
	if !e.Zone.Allows(op) {
		key := "zone"
		switch {
		case e.Path.Outside() && e.Zone == zones.NoZone:
			key = "outside"
		case e.Zone == zones.NoZone:
			key = "noZone"
		}
		return deny(key, OpPhrase(lang, op), e.shown(), e.Zone, ModeAllows(lang, e.Zone), where(lang, t, op))
	}
	if e.SymlinkTo != "" && (e.Op == zones.OpModify || e.Op == zones.OpCreate) {
		return deny("symlink", phrase, e.Path, e.SymlinkTo)
	}
	if e.Links > 1 && (op == zones.OpModify || op == zones.OpDelete) {
		return deny("hardLinks", phrase, e.Path, strconv.Itoa(e.Links))
	}
	switch e.Op {
	case zones.OpMoveIn:
		if (!e.Source.IsZero() || e.SourceUnknown) && zones.Launders(e.SourceZone, e.Zone) {
			return deny("launder", "", e.Path, e.SourceZone, e.Zone, "", e.Source)
		}
	case zones.OpLink:
		// A hard link shares its content: the linked file's zone must
		// allow linking too, so the new name is no freer than the old.
		if e.SourceUnknown || e.Source.IsZero() || !e.SourceZone.Allows(zones.OpLink) {
			return deny("linkSource", "", e.Path, e.SourceZone, "", "", e.Source)
		}
	case zones.OpDelete, zones.OpMoveOut:
		if !e.Path.Outside() && t.IsAnchor(e.Path) {
			return deny("anchor", phrase, e.Path)
		}
	}
	if e.Subtree {
		for _, in := range t.Within(e.Path) {
			if !in.Mode.Allows(op) {
				if !in.Mode.Listed() {
					return deny("subtreeHidden", phrase, e.Path, "", "", where(lang, t, op))
				}
				return deny("subtree", phrase, e.Path, in.Mode, ModeAllows(lang, in.Mode), where(lang, t, op), in.Path)
			}
			if (op == zones.OpDelete || op == zones.OpMoveOut) && t.IsAnchor(in.Path) {
				return deny("anchorInside", phrase, e.Path, "", "", "", in.Path)
			}
		}
	}
	return nil
}

// ReadBeforeWriteRule refuses to overwrite or edit an existing file that
// this session has not read, or that changed since it read it: the model
// must not clobber what it has not seen.
var ReadBeforeWriteRule = Rule{Name: "read_before_write", Check: checkReadBeforeWrite}

// overwriters are the tools that replace or edit a file's content; bash
// redirects are judged by zones alone.
var overwriters = []string{"write", "edit", "Write", "Edit", "MultiEdit", "NotebookEdit"}

func checkReadBeforeWrite(c *ToolCall) *Deny {
	if !slices.Contains(overwriters, c.Tool) {
		return nil
	}
	for i := range c.Effects {
		e := &c.Effects[i]
		if e.Op != zones.OpModify || !e.Exists || c.Session == nil || c.Session.State == nil {
			continue
		}
		if !HasRead(c.Session.State, e.Path.String(), e.Size, e.ModTime) {
			return &Deny{Effect: e, Reason: msg(c.Lang, "readFirst", OpPhrase(c.Lang, e.Op), e.Path)}
		}
	}
	return nil
}

// Stamp is what a session remembers of a file it read or wrote.
type Stamp struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

func readKey(path string) string { return "read:" + path }

// MarkRead records that the session has seen path as it is now (after a
// read, or after its own write: a model may edit what it just wrote).
func MarkRead(s *State, path string, size int64, mod time.Time) {
	s.Set(readKey(path), Stamp{Size: size, ModTime: mod})
}

// Forget drops what the session knew of path (after a delete or a move).
func Forget(s *State, path string) { s.Delete(readKey(path)) }

// HasRead reports whether the session saw path with this size and mtime.
func HasRead(s *State, path string, size int64, mod time.Time) bool {
	v, ok := s.Get(readKey(path))
	if !ok {
		return false
	}
	st, ok := v.(Stamp)
	return ok && st.Size == size && st.ModTime.Equal(mod)
}

// shown is the path a refusal names: never one in a hidden or no-zone
// place that the caller did not spell out itself.
func (e *Effect) shown() string {
	if !e.Zone.Listed() && e.AsGiven != "" {
		return e.AsGiven
	}
	return e.Path.String()
}
