package policy

import (
	"fmt"
	"slices"
	"time"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// Effect is one thing a call would do to one path.
type Effect struct {
	Op   zones.Op
	Path zones.Path // vault-relative, or absolute outside the vault
	Zone zones.Mode // Path's zone, filled in by Zoned
	// AsGiven is the path as the caller spelled it, when symlinks made
	// Path differ: a refusal in a hidden zone names this, so that a link
	// does not tell the model where the hidden file really is.
	AsGiven string

	Subtree bool // the effect covers everything below Path too
	// Covers is, on a folder effect (a move, delete or mode change of a
	// folder with all it holds, Subtree), how many paths inside the folder
	// it covers: each is an effect of its own right after it, marked with
	// Folder (tools' Set.cover, for every entry point). The rules judge
	// each; the audit keeps the folder's effect with this count.
	Covers int
	// Folder is, on an effect on a path inside a folder effect, that
	// folder: a refusal of a path in a zone that may not be read names
	// only the folder (SubtreeHidden).
	Folder  zones.Path
	Unknown bool // the path can't be known before the call runs
	// Confined says the OS wall will hold the effect to what the zones
	// allow whatever it turns out to touch, so an effect the zones can't
	// judge beforehand (an unknown path, a program that runs) may go ahead.
	Confined bool
	// Found is, on a read of a whole folder (Subtree) that no wall
	// confines (Claude Code's Glob and Grep, bash without the wall), what
	// the planner found in it now that the table's name patterns cover.
	// A name pattern then refuses the read only through a path it covers
	// that is there, judged by its zone: one that might match some day
	// refuses nothing. nil: the planner did not look (or could not), and
	// a pattern that may hide something inside refuses the read, as it
	// could match anywhere there.
	Found *Found

	// Source and SourceZone say where a move-in's or link's content comes
	// from, for the laundering check.
	Source        zones.Path
	SourceZone    zones.Mode
	SourceUnknown bool // the content's origin can't be known: judged as no zone

	Exists    bool      // Path exists now: a move-in over it is a modify
	Size      int64     // for read-before-write: the file as it is now
	ModTime   time.Time //
	Links     int       // hard links of the file at Path (0 = unknown or not a file)
	SymlinkTo string    // Path's last component is a symlink to this (vault path)
	// Leads are the symlinks the effect leaves at a name where they lead
	// somewhere new: one it makes (a bash command's ln -s, a program's
	// symlink, one put where a file stood), or one it moves (the move
	// tool, a rename in bash; a folder moved with links inside) so that
	// its target, read from the new place, leads elsewhere. The zones rule
	// lets each lead only where the caller may read (judgeLeads).
	Leads []Lead
	// NeedsFreshRead marks an effect that replaces what the file holds now:
	// read_before_write lets it through only if the session has seen the
	// file as it is. The planner knows which effects these are.
	NeedsFreshRead bool

	// Cause is what in the call brings the effect about, in the call's own
	// words, for reasons and the audit: a command word ("rm", ">"), or for
	// an effect with no path (exec) the program or option that runs.
	Cause string
	// Fact is what the planner knows of this effect that only the tool's
	// own rule reads: a typed value of the tool's package, nil for most.
	Fact any
}

// Lead is a symlink an effect leaves, and where it leads: its target read
// from the link's folder as the kernel (and so Obsidian, a sync plugin, a
// backup) follows it, through the vault's links as they stand. The
// planner finds it (it reads the disk); the zones rule judges it.
type Lead struct {
	At     zones.Path // the symlink
	Target string     // its target, as stored
	// To is where it leads: a vault path, or outside the vault. Unknown
	// when that can't be told (a ".." after a name, whose meaning a link
	// made later would change; a loop of links; a folder too large to
	// walk): refused.
	To      zones.Path
	Unknown bool
	// Dir says To is a folder: a link to it leads to everything inside
	// too. Inside are the paths in it, found by walking it (links not
	// followed), whose zone differs from their folder's or whose name is a
	// control path's or a reserved one; the zone table's entries inside it
	// are judged besides, whether they exist yet or not.
	Dir    bool
	Inside []zones.Path
}

// Found is what a planner found inside a folder that a name pattern
// covers (Effect.Found): each such path, none inside another, as the zones
// spell it.
type Found struct {
	Paths []zones.Path
}

// Deny is a rule's refusal. Reason is written for the model, in the
// agent's language, and says where the effect would be allowed.
type Deny struct {
	Rule   string
	Effect *Effect
	Reason string
}

func (d *Deny) Error() string { return d.Reason }

// Session is the caller a call belongs to. State lives as long as it
// (see State for where that is, for each entry point).
type Session struct {
	ID    string
	Agent string
	State *State
}

// ToolCall is one call as the rules see it.
type ToolCall struct {
	Tool    string
	Args    map[string]any
	Effects []Effect
	Session *Session
	Via     string // how the call came: stdio, http, hook, exec, run, check, cli

	Zones *zones.Table
	Lang  say.Lang // the language of every reason
	// TellAll asks for a refusal that names every refused effect, not only
	// the first: a call of many parts (a shell command) can then be mended
	// at once.
	TellAll bool
	// Facts is what the tool's planner found that only the tool's own rule
	// reads: a typed value of the tool's package, nil for most tools. The
	// rules here never look at it, nor at tool names.
	Facts any
}

// Zoned fills in each effect's zone (and its source's) from the table.
func Zoned(t *zones.Table, effects []Effect) {
	for i := range effects {
		e := &effects[i]
		if !e.Unknown && !e.Path.IsZero() {
			e.Zone = t.Zone(e.Path)
		}
		switch {
		case e.SourceUnknown:
			e.SourceZone = zones.NoZone // never laundered, never linked
		case !e.Source.IsZero():
			e.SourceZone = t.Zone(e.Source)
		}
	}
}

// Rule is a named check. Check returns a deny or nil.
type Rule struct {
	Name  string
	Check func(*ToolCall) *Deny
}

// Chain is an ordered list of rules: the first deny is the answer.
type Chain []Rule

// Judge runs the chain on call. A rule that panics is a deny naming it.
func (c Chain) Judge(call *ToolCall) *Deny {
	for _, r := range c {
		if d := r.run(call); d != nil {
			if d.Rule == "" {
				d.Rule = r.Name
			}
			return d
		}
	}
	return nil
}

// JudgeEach judges call as a whole and, on a deny, each of its effects
// alone, to tell which the chain refused on its own and why (each reason
// once): what a command of many parts really changed is refused as a
// whole, naming every part to mend. A rule that refuses only the call as
// a whole is the one reason then.
func (c Chain) JudgeEach(call *ToolCall) (d *Deny, refused []bool, reasons []string) {
	if d = c.Judge(call); d == nil {
		return nil, nil, nil
	}
	refused = make([]bool, len(call.Effects))
	for i := range call.Effects {
		one := *call
		one.Effects = call.Effects[i : i+1]
		if rd := c.Judge(&one); rd != nil {
			refused[i] = true
			if !slices.Contains(reasons, rd.Reason) {
				reasons = append(reasons, rd.Reason)
			}
		}
	}
	if len(reasons) == 0 {
		reasons = []string{d.Reason}
	}
	return d, refused, reasons
}

func (r Rule) run(call *ToolCall) (d *Deny) {
	defer func() {
		if p := recover(); p != nil {
			d = &Deny{Rule: r.Name, Reason: say.RuleFailed{Rule: r.Name, Problem: fmt.Sprint(p)}.Text(call.Lang)}
		}
	}()
	if r.Check == nil {
		return &Deny{Rule: r.Name, Reason: say.RuleWithoutCheck{Rule: r.Name}.Text(call.Lang)}
	}
	return r.Check(call)
}

// Builtin returns the tool-blind part of the built-in chain in its fixed
// order: zones, and read_before_write when enabled. The server puts the
// tools' own rules before it and library users' rules after it.
func Builtin(readBeforeWrite bool) Chain {
	c := Chain{ZonesRule}
	if readBeforeWrite {
		c = append(c, ReadBeforeWriteRule)
	}
	return c
}
