package claude

import (
	"slices"

	"github.com/vaultgate/vaultgate/say"
)

// Treatment is what the hook does with one of Claude Code's built-in
// tools.
type Treatment int

const (
	// Retired: a name an older Claude Code used; the hook knows it as no
	// built-in (refused unless [hook] allow names it), and it is listed
	// only for vaultgate run --claude, which refuses it by name.
	Retired Treatment = iota
	// Judged: planned by what it would do to which path (package tools)
	// and judged like the vault's own tools; [hook] allow can't reach it.
	Judged
	// Passed: it touches no file of the vault — it talks to the person
	// or to other agents, plans, schedules a prompt, or loads deferred
	// tools and skills. What a subagent, a scheduled prompt or a skill
	// then does goes through the hook call by call.
	Passed
	// Refused: it touches files or runs programs in ways the hook can't
	// judge, so it is refused whatever [hook] allow says, with why.
	Refused
)

// Builtin is one of Claude Code's built-ins, as the hook treats it.
type Builtin struct {
	Name      string
	Treatment Treatment
	// Refusal is a refused built-in's reason, as the model reads it.
	Refusal say.BuiltinWhy
	// RefusedWhen refuses some calls of a passed built-in (a durable
	// CronCreate writes a file of Claude Code's), with why; nil for none.
	RefusedWhen func(input map[string]any) *say.BuiltinWhy
	// UnderRun says the built-in is refused under vaultgate run --claude,
	// where the vault is not in the agent's view and its own files are
	// all a built-in could touch; Instead is the vault's tool that does
	// its work ("" for none), which the refusal points to.
	UnderRun bool
	Instead  string
}

// catalogue is every built-in of the Claude Code vaultgate is tested
// against (2.1.332), each named on purpose; any other tool is refused by
// default unless [hook] allow names it (the hook_scope rule).
var catalogue = []Builtin{
	{Name: "Read", Treatment: Judged, UnderRun: true, Instead: "read"},
	{Name: "Write", Treatment: Judged, UnderRun: true, Instead: "write"},
	{Name: "Edit", Treatment: Judged, UnderRun: true, Instead: "edit"},
	{Name: "MultiEdit", Treatment: Judged, UnderRun: true, Instead: "edit"},
	{Name: "NotebookEdit", Treatment: Judged, UnderRun: true, Instead: "edit"},
	{Name: "Glob", Treatment: Judged, UnderRun: true, Instead: "list"},
	{Name: "Grep", Treatment: Judged, UnderRun: true, Instead: "search"},
	{Name: "Bash", Treatment: Judged, UnderRun: true, Instead: "bash"}, // rewritten to run through vaultgate exec (exec.go)

	{Name: "Agent", Treatment: Passed, RefusedWhen: isolatedAgent}, // a subagent; its own tool calls are hooked
	{Name: "Task", Treatment: Passed, RefusedWhen: isolatedAgent},
	{Name: "AskUserQuestion", Treatment: Passed},
	{Name: "EnterPlanMode", Treatment: Passed},
	{Name: "ExitPlanMode", Treatment: Passed},
	{Name: "TodoWrite", Treatment: Passed},
	{Name: "TaskCreate", Treatment: Passed},
	{Name: "TaskGet", Treatment: Passed},
	{Name: "TaskList", Treatment: Passed},
	{Name: "TaskUpdate", Treatment: Passed},
	{Name: "TaskStop", Treatment: Passed},
	{Name: "TaskOutput", Treatment: Passed},
	{Name: "KillShell", Treatment: Passed, UnderRun: true, Instead: ""},
	{Name: "BashOutput", Treatment: Passed, UnderRun: true, Instead: "bash"},
	{Name: "ToolSearch", Treatment: Passed}, // loads deferred tools, the vault's own among them
	{Name: "Skill", Treatment: Passed},
	{Name: "ListMcpResourcesTool", Treatment: Passed},
	{Name: "CronCreate", Treatment: Passed, RefusedWhen: durableCron},
	{Name: "CronDelete", Treatment: Passed},
	{Name: "CronList", Treatment: Passed},
	{Name: "ScheduleWakeup", Treatment: Passed},
	{Name: "ListAgents", Treatment: Passed},
	{Name: "SendMessage", Treatment: Passed},
	{Name: "ReportFindings", Treatment: Passed},

	{Name: "EnterWorktree", Treatment: Refused, Refusal: say.WhyWorktree, UnderRun: true, Instead: ""},
	{Name: "ExitWorktree", Treatment: Refused, Refusal: say.WhyWorktree, UnderRun: true, Instead: ""},
	{Name: "Monitor", Treatment: Refused, Refusal: say.WhyMonitor, UnderRun: true, Instead: ""},
	{Name: "Workflow", Treatment: Refused, Refusal: say.WhyWorkflow},
	{Name: "PowerShell", Treatment: Refused, Refusal: say.WhyPowerShell},
	{Name: "NotebookRead", Treatment: Refused, Refusal: say.WhyUnjudgedRead, UnderRun: true, Instead: "read"},
	{Name: "LSP", Treatment: Refused, Refusal: say.WhyUnjudgedRead},
	{Name: "ReadMcpResourceTool", Treatment: Refused, Refusal: say.WhyOtherServers},

	{Name: "LS", Treatment: Retired, UnderRun: true, Instead: "list"},
	{Name: "KillBash", Treatment: Retired, UnderRun: true},
}

// durableCron refuses a CronCreate that Claude Code keeps on disk.
func durableCron(input map[string]any) *say.BuiltinWhy {
	if input["durable"] == true {
		return &say.WhyDurableCron
	}
	return nil
}

// isolatedAgent refuses a subagent started with isolation: "worktree"
// checks every tracked file out under .claude/worktrees (hidden notes too,
// for the worktree is a copy vaultgate's zones do not name), as
// EnterWorktree does; "remote" runs it on a copy of the repository in a
// cloud environment, where no hook runs. Any value is refused, so a mode a
// later Claude Code adds is refused until it is placed here; an absent or
// null field is the subagent working in the session's own folder. A
// subagent whose definition (its frontmatter) asks for isolation is not
// seen here: the definitions live in .claude/agents, a control path, or in
// the person's own home and plugins.
func isolatedAgent(input map[string]any) *say.BuiltinWhy {
	if v, ok := input["isolation"]; ok && v != nil {
		return &say.WhyAgentIsolation
	}
	return nil
}

// Lookup finds a built-in by name.
func Lookup(name string) (Builtin, bool) {
	i := slices.IndexFunc(catalogue, func(b Builtin) bool { return b.Name == name })
	if i < 0 {
		return Builtin{}, false
	}
	return catalogue[i], true
}

// Named lists the built-ins treated so, in the catalogue's order.
func Named(t Treatment) []string {
	var out []string
	for _, b := range catalogue {
		if b.Treatment == t {
			out = append(out, b.Name)
		}
	}
	return out
}

// Verdict says what the hook does with a call of a tool it does not judge
// by its effects: pass, refuse (why != nil), or neither (not a built-in:
// the tool falls to [hook] allow).
func Verdict(tool string, input map[string]any) (pass bool, why *say.BuiltinWhy) {
	b, ok := Lookup(tool)
	switch {
	case !ok || b.Treatment == Judged || b.Treatment == Retired:
		return false, nil
	case b.Treatment == Refused:
		w := b.Refusal
		return false, &w
	case b.RefusedWhen != nil:
		if w := b.RefusedWhen(input); w != nil {
			return false, w
		}
	}
	return true, nil
}

// RunInstead returns the vault's tool for a built-in refused under
// vaultgate run --claude, and whether it is refused there at all.
func RunInstead(tool string) (instead string, refused bool) {
	b, ok := Lookup(tool)
	return b.Instead, ok && b.UnderRun
}
