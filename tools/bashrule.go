package tools

import (
	"path"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// BashCall is the fact the bash planners (the vault's bash, Claude Code's
// Bash through the hook) attach to a call, for the bash rule.
type BashCall struct {
	// Refusal is the answer when the command can't be analysed, or bash
	// can't run here at all (the wall is required and can't be raised).
	Refusal *policy.Deny
	// Overlay says the command runs on an overlay of the vault, so what it
	// really changes is judged before it is applied: the wall no longer
	// needs removal and rename kept to write zones.
	Overlay bool
	// Real marks the call the bash tool judges after the command ran: its
	// effects are the changes it really made, not predictions.
	Real bool
}

// BashPart is the fact on each effect of a command: what the bash rule
// needs of the part of the command that causes it.
type BashPart struct {
	Command  string // the command word ("rm", "sed", or ">" for a bare redirect)
	ByRename bool   // it replaces or removes the name by a rename (mv, sed -i)
	Why      string // exec: why the program can't be analysed, in the agent's language
}

func refusalOf(p *Plan) *policy.Deny {
	f, _ := p.Facts.(BashCall)
	return f.Refusal
}

// BashRule judges calls that carry BashCall facts, before the zones: it
// reports a command the analysis could not understand, refuses programs of
// unknown effect the wall does not hold (and, under the wall, those allow
// does not list when it lists any), reads of unknown paths without the
// wall, and removals or renames outside write zones (the one thing the
// wall enforces per zone that the zone table alone would allow in an edit
// zone).
func BashRule(allow []string) policy.Rule {
	return policy.Rule{Name: "bash", Check: func(c *policy.ToolCall) *policy.Deny { return checkBash(c, allow) }}
}

func checkBash(c *policy.ToolCall, allow []string) *policy.Deny {
	f, ok := c.Facts.(BashCall)
	if !ok {
		return nil
	}
	if f.Refusal != nil {
		return f.Refusal
	}
	// A command has many parts. When one is refused for bash's own reasons,
	// tell every refused part — the zones' refusals too — so the model can
	// mend them all at once; when only zones refuse, the zones rule speaks.
	var all policy.Reasons
	own := false
	for i := range c.Effects {
		e := &c.Effects[i]
		var d *policy.Deny
		switch {
		case f.Real:
			d = realEffectDeny(c, e)
		case f.Overlay && isRemoval(e):
			// judged on what the command really does, by the zones
		default:
			d = bashEffectDeny(c, e, allow)
		}
		if d != nil {
			own = true
		} else {
			d = policy.JudgeEffect(c, e)
		}
		all.Add(d)
	}
	if !own {
		return nil
	}
	return all.Deny()
}

// bashEffectDeny is the bash rule's own judgement of one effect.
func bashEffectDeny(c *policy.ToolCall, e *policy.Effect, allow []string) *policy.Deny {
	deny := func(m say.Message) *policy.Deny {
		return &policy.Deny{Effect: e, Reason: m.Text(c.Lang)}
	}
	part, _ := e.Fact.(BashPart)
	switch e.Op {
	case zones.OpExec:
		if !e.Confined {
			return deny(say.ExecRefused{Program: e.Cause, Why: part.Why})
		}
		if prog := execProgram(part.Command, e.Cause); len(allow) > 0 && !slices.Contains(allow, prog) {
			return deny(say.ExecNotAllowed{Program: prog, Allowed: allow})
		}
	case zones.OpRead:
		if e.Unknown && !e.Confined {
			// Without the wall an unknown path could be any file on the
			// machine, not only in the vault: the server's own
			// /proc/<pid>/environ, a key in its home. So it is refused, and
			// the model is told to write the path out (stricter than read
			// on the whole vault, which would let a guessed pid through).
			return deny(say.UnknownRead{Command: e.Cause})
		}
	case zones.OpDelete, zones.OpMoveOut, zones.OpModify:
		if e.Op == zones.OpModify && !part.ByRename {
			return nil
		}
		if e.Unknown || e.Zone.Allows(zones.OpDelete) || !e.Zone.Allows(zones.OpRead) {
			return nil // the wall lets bash remove where delete is allowed; the zones rule has the better reason for the rest
		}
		if e.Op == zones.OpDelete && !e.Zone.Allows(zones.OpModify) {
			return nil // protected or create: the zone reason says it all
		}
		if e.Op == zones.OpDelete {
			// deleting: only a write zone can
			return deny(say.BashRemove{Path: e.Path.String(), Command: part.Command, Zone: e.Zone,
				Where: policy.Where(c.Zones, zones.OpDelete)})
		}
		// an edit zone lets the file tools move and edit, by checked
		// operations rather than a shell's rename
		tool := map[zones.Op]string{zones.OpMoveOut: "move", zones.OpModify: "edit"}[e.Op]
		return deny(say.BashRename{Op: e.Op, Path: e.Path.String(), Command: part.Command, Zone: e.Zone, Tool: tool})
	}
	return nil
}

// isRemoval tells an effect that removes or replaces a name: the part of
// a command the wall alone keeps to write zones.
func isRemoval(e *policy.Effect) bool {
	switch e.Op {
	case zones.OpDelete, zones.OpMoveOut, zones.OpModify:
		return true
	}
	return false
}

// execProgram is the program an exec effect would run: its command word, or
// the first word of what runs ("rg --pre" → "rg").
func execProgram(command, runs string) string {
	if command != "" {
		return path.Base(command)
	}
	if f := strings.Fields(runs); len(f) > 0 {
		return path.Base(f[0])
	}
	return ""
}
