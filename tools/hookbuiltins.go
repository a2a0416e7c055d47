package tools

import (
	"github.com/vaultgate/vaultgate/say"
)

// Claude Code's own tools that the hook does not plan by their effects,
// named on purpose, so that every built-in of the Claude Code vaultgate is
// tested against (2.1.332) is judged (hookTools), passed, or refused with
// its reason, and an unknown tool is refused by default (hook_scope).
//
// A tool passes when it touches no file of the vault: it talks to the
// person or to other agents, plans, schedules a prompt, or loads deferred
// tools and skills. What a subagent, a scheduled prompt or a skill then
// does goes through the hook call by call like any other tool call.
var passingBuiltins = map[string]bool{
	"Agent": true, "Task": true, // a subagent; its own tool calls are hooked
	"AskUserQuestion": true, "EnterPlanMode": true, "ExitPlanMode": true,
	"TodoWrite": true, "TaskCreate": true, "TaskGet": true, "TaskList": true, "TaskUpdate": true,
	"TaskStop": true, "TaskOutput": true, "KillShell": true, "BashOutput": true,
	"ToolSearch":           true, // loads deferred tools, the vault's own among them
	"Skill":                true,
	"ListMcpResourcesTool": true,
	"CronCreate":           true, // refused when durable (below)
	"CronDelete":           true, "CronList": true, "ScheduleWakeup": true,
	"ListAgents": true, "SendMessage": true, "ReportFindings": true,
}

// refusedBuiltins are built-ins that touch files or run programs in ways
// the hook can't judge: refused whatever [hook] allow says, with why.
var refusedBuiltins = map[string]say.BuiltinWhy{
	"EnterWorktree":       say.WhyWorktree,
	"ExitWorktree":        say.WhyWorktree,
	"Monitor":             say.WhyMonitor,
	"Workflow":            say.WhyWorkflow,
	"PowerShell":          say.WhyPowerShell,
	"NotebookRead":        say.WhyUnjudgedRead,
	"LSP":                 say.WhyUnjudgedRead,
	"ReadMcpResourceTool": say.WhyOtherServers,
}

// builtinVerdict says what the hook does with a built-in it does not plan
// by effects: pass, refuse (why != nil), or neither (not a built-in: the
// tool falls to [hook] allow).
func builtinVerdict(tool string, a args) (pass bool, why *say.BuiltinWhy) {
	if w, ok := refusedBuiltins[tool]; ok {
		return false, &w
	}
	if tool == "CronCreate" && a.m["durable"] == true {
		return false, &say.WhyDurableCron
	}
	return passingBuiltins[tool], nil
}

// HookBuiltins lists, for the README's table and its test, the built-ins
// that pass and those refused on purpose.
func HookBuiltins() (passing, refused []string) {
	for t := range passingBuiltins {
		passing = append(passing, t)
	}
	for t := range refusedBuiltins {
		refused = append(refused, t)
	}
	return passing, refused
}
