package policy

import (
	"path"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// BashRule comes first: it refuses commands the analysis could not
// understand, programs of unknown effect when no wall bounds them, and
// removals or renames outside write zones (the one thing the wall enforces
// per zone that the zone table alone would allow in an edit zone).
var BashRule = Rule{Name: "bash", Check: checkBash}

func init() {
	Register("exec",
		`run %[1]q (%[2]s): vaultgate can't know what it would touch, and without the OS wall around bash it runs only what it can check. Use the file tools (read, write, edit, move, delete, list, search), or commands with literal paths.`,
		`запустить %[1]q (%[2]s) нельзя: vaultgate не может знать, что она затронет, а без защитной стенки ОС bash выполняет только проверяемое. Используйте файловые инструменты (read, write, edit, move, delete, list, search) или команды с явными путями.`)
	Register("execNotAllowed",
		`run %[1]q: it is not in bash.allow, the programs of unknown effect this agent may run under the wall (%[2]s).`,
		`запустить %[1]q нельзя: её нет в bash.allow — списке программ, которые этот агент может запускать внутри стенки (%[2]s).`)
	Register("bashRename",
		`%[1]s %[2]q with %[3]q: bash may remove or rename files only in write zones, and %[2]q is in zone %[4]s. %[5]s`,
		`%[1]s «%[2]s» командой %[3]q нельзя: bash может удалять и переименовывать только в зонах write, а «%[2]s» — в зоне %[4]s. %[5]s`)
	Register("useTool", "Use the %s tool instead: it can do this here.", "Используйте инструмент %s: он может сделать это здесь.")
}

// IsBash reports whether a tool runs shell commands: the vault's bash, or
// Claude Code's built-in Bash seen through the hook.
func IsBash(tool string) bool { return tool == "bash" || tool == "Bash" }

func checkBash(c *ToolCall) *Deny {
	if !IsBash(c.Tool) {
		return nil
	}
	if c.Refusal != nil {
		return c.Refusal
	}
	// A command has many parts. When one is refused for bash's own reasons,
	// tell every refused part — the zones' refusals too — so the model can
	// mend them all at once; when only zones refuse, the zones rule speaks.
	var first *Deny
	var reasons []string
	own := false
	for i := range c.Effects {
		e := &c.Effects[i]
		d := bashEffectDeny(c, e)
		if d != nil {
			own = true
		} else if d = checkEffect(c, e); d == nil {
			continue
		}
		if first == nil {
			first = d
		}
		if !slices.Contains(reasons, d.Reason) && len(reasons) < maxReasons {
			reasons = append(reasons, d.Reason)
		}
	}
	if !own {
		return nil
	}
	first.Reason = strings.Join(reasons, "\n")
	return first
}

// bashEffectDeny is the bash rule's own judgement of one effect.
func bashEffectDeny(c *ToolCall, e *Effect) *Deny {
	switch e.Op {
	case zones.OpExec:
		if !c.Walled {
			return &Deny{Effect: e, Reason: msg(c.Lang, "exec", e.Detail, e.Why)}
		}
		if prog := execProgram(e); len(c.BashAllow) > 0 && !slices.Contains(c.BashAllow, prog) {
			return &Deny{Effect: e, Reason: msg(c.Lang, "execNotAllowed", prog, joinComma(c.BashAllow))}
		}
	case zones.OpDelete, zones.OpMoveOut, zones.OpModify:
		if e.Op == zones.OpModify && !e.ByRename {
			return nil
		}
		if e.Unknown || e.Zone.Allows(zones.OpDelete) || !e.Zone.Allows(zones.OpRead) {
			return nil // the wall lets bash remove where delete is allowed; the zones rule has the better reason for the rest
		}
		if e.Op == zones.OpDelete && !e.Zone.Allows(zones.OpModify) {
			return nil // protected or create: the zone reason says it all
		}
		hint := where(c.Lang, c.Zones, zones.OpDelete) // deleting: only a write zone can
		if e.Op != zones.OpDelete {
			// an edit zone lets the file tools move and edit, by checked
			// operations rather than a shell's rename
			hint = msg(c.Lang, "useTool", map[zones.Op]string{zones.OpMoveOut: "move", zones.OpModify: "edit"}[e.Op])
		}
		return &Deny{Effect: e, Reason: msg(c.Lang, "bashRename", OpPhrase(c.Lang, e.Op), e.Path, e.Command, e.Zone, hint)}
	}
	return nil
}

// execProgram is the program an exec effect would run: its command word, or
// the first word of its detail ("rg --pre" → "rg").
func execProgram(e *Effect) string {
	if e.Command != "" {
		return path.Base(e.Command)
	}
	if f := strings.Fields(e.Detail); len(f) > 0 {
		return path.Base(f[0])
	}
	return ""
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
