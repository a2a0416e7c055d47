package policy

import (
	"slices"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// ZonesRule judges every effect against the zone table: what its path's kind
// allows, laundering, anchors, links and every zone inside a subtree.
var ZonesRule = Rule{Name: "zones", Check: checkZones}

// MaxReasons bounds how many refused effects one deny tells.
const MaxReasons = 8

func checkZones(c *ToolCall) *Deny {
	var all Reasons
	for i := range c.Effects {
		d := JudgeEffect(c, &c.Effects[i])
		if d == nil {
			continue
		}
		if !c.TellAll {
			return d
		}
		all.Add(d)
	}
	return all.Deny()
}

// Reasons gathers the refusals of one call's effects into one deny that
// tells each in turn (once each, at most MaxReasons), so the model can mend
// them all at once.
type Reasons struct {
	first *Deny
	told  []string
}

// Add counts d (nil is ignored).
func (r *Reasons) Add(d *Deny) {
	if d == nil {
		return
	}
	if r.first == nil {
		r.first = d
	}
	if !slices.Contains(r.told, d.Reason) && len(r.told) < MaxReasons {
		r.told = append(r.told, d.Reason)
	}
}

// Deny is the first refusal with every reason told, or nil if none.
func (r *Reasons) Deny() *Deny {
	if r.first != nil && len(r.told) > 1 {
		r.first.Reason = strings.Join(r.told, "\n")
	}
	return r.first
}

// JudgeEffect is the zones rule's judgement of one effect, for a tool's own
// rule that tells the zones' refusals alongside its own.
func JudgeEffect(c *ToolCall, e *Effect) *Deny {
	d := judgeEffect(c, e)
	if d != nil && e.hiddenInside() {
		// One of the paths a folder effect covers, in (or from) a zone
		// that may not be read: the refusal names the folder only, never
		// that path, not even that it exists.
		op := e.Op
		d.Reason = say.SubtreeHidden{Op: op, Path: e.Folder.String(), Where: Where(c.Zones, op)}.Text(c.Lang)
	}
	return d
}

// hiddenInside tells an effect on a path inside a folder effect whose path,
// or whose content's source, is in a zone that may not be read.
func (e *Effect) hiddenInside() bool {
	if e.Folder.IsZero() {
		return false
	}
	return !e.Zone.Listed() || (!e.Source.IsZero() || e.SourceUnknown) && !e.SourceZone.Listed()
}

func judgeEffect(c *ToolCall, e *Effect) *Deny {
	deny := func(m say.Message) *Deny {
		return &Deny{Effect: e, Reason: m.Text(c.Lang)}
	}
	t := c.Zones
	if e.Op == zones.OpExec || e.Unknown {
		// Nothing here can be placed in a zone beforehand: only the OS wall
		// can hold it to the zones. The tool's own rule, earlier in the
		// chain, has the better reason; this one fails closed without it.
		if e.Confined {
			return nil
		}
		if e.Op == zones.OpExec {
			return deny(say.UnconfinedRun{Program: e.Cause})
		}
		return deny(say.UnknownPath{Op: e.Op, Command: e.Cause})
	}
	op := e.Op
	if op == zones.OpMoveIn && e.Exists {
		op = zones.OpModify // a move over an existing file replaces it
	}
	if !e.Zone.Allows(op) {
		switch {
		case e.Path.Outside() && e.Zone == zones.NoZone:
			return deny(say.OutsideRefused{Op: op, Path: e.shown(), Where: Where(t, op)})
		case e.Zone == zones.NoZone:
			return deny(say.NoZoneRefused{Op: op, Path: e.shown(), Where: Where(t, op)})
		}
		return deny(say.Refused{Op: op, Path: e.shown(), Zone: e.Zone, In: e.root(t), Where: Where(t, op)})
	}
	if d := judgeLeads(c, e); d != nil {
		return d
	}
	path := e.Path.String()
	if e.SymlinkTo != "" && (e.Op == zones.OpModify || e.Op == zones.OpCreate) {
		return deny(say.Symlink{Op: e.Op, Path: path, Target: e.SymlinkTo})
	}
	if e.Links > 1 && (op == zones.OpModify || op == zones.OpDelete) {
		return deny(say.HardLinks{Op: e.Op, Path: path, Links: e.Links})
	}
	switch e.Op {
	case zones.OpMoveIn:
		if (!e.Source.IsZero() || e.SourceUnknown) && zones.Launders(e.SourceZone, e.Zone) {
			return deny(say.Launder{Source: e.Source.String(), Path: path, From: e.SourceZone, To: e.Zone})
		}
	case zones.OpLink:
		// A hard link shares its content: the linked file's zone must
		// allow linking too, so the new name is no freer than the old.
		if e.SourceUnknown || e.Source.IsZero() || !e.SourceZone.Allows(zones.OpLink) {
			return deny(say.LinkSource{Source: e.Source.String(), Path: path, Zone: e.SourceZone})
		}
	case zones.OpDelete, zones.OpMoveOut:
		if !e.Path.Outside() && t.IsAnchor(e.Path) {
			return deny(say.ZoneRoot{Op: e.Op, Path: path})
		}
	}
	// A read of a whole folder that the OS wall confines can't reach a
	// zone inside it that may not be read: the wall has covered it.
	if e.Subtree && !(e.Confined && op == zones.OpRead) {
		for _, in := range t.Within(e.Path) {
			if in.Pattern && (op != zones.OpRead || e.Found != nil) {
				// A name pattern could match anywhere inside; a folder's
				// delete or move is judged path by path on what it holds,
				// where each such path meets the pattern's zone itself,
				// and a read by what the planner found it covers there
				// (below).
				continue
			}
			if !in.Mode.Allows(op) {
				if !in.Mode.Listed() {
					return deny(say.SubtreeHidden{Op: e.Op, Path: path, Where: Where(t, op)})
				}
				return deny(say.SubtreeRefused{Op: e.Op, Path: path, Inside: in.Path.String(), Zone: in.Mode, Where: Where(t, op)})
			}
			if (op == zones.OpDelete || op == zones.OpMoveOut) && t.IsAnchor(in.Path) {
				return deny(say.ZoneRootInside{Op: e.Op, Path: path, Inside: in.Path.String()})
			}
		}
		if op == zones.OpRead && e.Found != nil {
			// What the name patterns cover inside the folder, as it is
			// now: a read of it reaches each of them.
			for _, p := range e.Found.Paths {
				m := t.Zone(p)
				switch {
				case m.Allows(op):
				case !m.Listed():
					return deny(say.SubtreeHidden{Op: e.Op, Path: path, Where: Where(t, op)})
				default:
					return deny(say.SubtreeRefused{Op: e.Op, Path: path, Inside: p.String(), Zone: m, Where: Where(t, op)})
				}
			}
		}
	}
	return nil
}

// judgeLeads is the one place that decides where a symlink the caller
// leaves in the vault may lead (Effect.Leads: one it makes, or one it moves
// so that it leads elsewhere): only where the caller may read. Never out
// of the vault, never into a zone that may not be read (hidden, no zone),
// never to a control path (zones.ControlWhy) or a name vaultgate reserves
// (zones.IsReserved), which the zone table caps at protected and so lets
// be read; a link to a folder leads to all it holds, and the zone table's
// entries inside it. A target that does not exist yet is judged by the
// path it names. vaultgate itself never reads through a link that leads
// out (Vault.Resolve), but Obsidian, a sync plugin or a backup follows it.
// The reason names the link and its target as stored, never the place a
// link on the way led it to.
func judgeLeads(c *ToolCall, e *Effect) *Deny {
	for _, l := range e.Leads {
		if m := leadRefusal(c.Zones, l); m != nil {
			return &Deny{Effect: e, Reason: m.Text(c.Lang)}
		}
	}
	return nil
}

func leadRefusal(t *zones.Table, l Lead) say.Message {
	at, target := l.At.String(), l.Target
	switch {
	case l.Unknown || l.To.IsZero() || t == nil:
		return say.LinkUnplaced{Path: at, Target: target}
	case l.To.Outside():
		return say.LinkOutside{Path: at, Target: target}
	}
	reach := append([]zones.Path{l.To}, l.Inside...)
	if l.Dir {
		for _, in := range t.Within(l.To) {
			// A name pattern inside is judged on the paths it covers
			// there (Inside); one that might match some day does not
			// refuse a link to every folder.
			if !in.Pattern {
				reach = append(reach, in.Path)
			}
		}
	}
	control := false
	for _, p := range reach {
		if p.Outside() || !t.Zone(p).Allows(zones.OpRead) {
			return say.LinkUnreadable{Path: at, Target: target}
		}
		if zones.ControlWhy(p) != "" || zones.ReservedIn(p) {
			control = true
		}
	}
	if control {
		return say.LinkControl{Path: at, Target: target}
	}
	return nil
}

// ReadBeforeWriteRule refuses an effect marked NeedsFreshRead on an
// existing file that this session has not read, or that changed since it
// read it: the model must not clobber what it has not seen. Effects the
// planner does not mark (a shell redirect) are judged by the zones alone.
var ReadBeforeWriteRule = Rule{Name: "read_before_write", Check: checkReadBeforeWrite}

func checkReadBeforeWrite(c *ToolCall) *Deny {
	if c.Session == nil || c.Session.State == nil {
		return nil
	}
	for i := range c.Effects {
		e := &c.Effects[i]
		if !e.NeedsFreshRead || !e.Exists {
			continue
		}
		if !HasRead(c.Session.State, e.Path.String(), e.Size, e.ModTime) {
			return &Deny{Effect: e, Reason: say.ReadFirst{Op: e.Op, Path: e.Path.String()}.Text(c.Lang)}
		}
	}
	return nil
}

// Stamp is what a session remembers of a file it read or wrote.
type Stamp struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

// Where is the sentence that tells the model where op is allowed in t, for
// the refusals here and a tool's own rule that points the model elsewhere.
func Where(t *zones.Table, op zones.Op) say.Where {
	if t == nil {
		return say.Where{Op: op}
	}
	return say.Where{Op: op, Areas: t.Where(op)}
}

// root is what gives the refused effect's path its zone, for the refusal
// to name (zones.Table.RootOf). A path the caller may not read is never
// placed, but by the name pattern it matches, and only when the caller
// spelled the path itself (a link's target is not told).
func (e *Effect) root(t *zones.Table) zones.Root {
	if t == nil || e.Path.Outside() {
		return zones.Root{}
	}
	r := t.RootOf(e.Path)
	if !e.Zone.Listed() && (!r.Pattern || e.AsGiven != "") {
		return zones.Root{}
	}
	return r
}

// shown is the path a refusal names: never one in a hidden or no-zone
// place that the caller did not spell out itself.
func (e *Effect) shown() string {
	if !e.Zone.Listed() && e.AsGiven != "" {
		return e.AsGiven
	}
	return e.Path.String()
}
