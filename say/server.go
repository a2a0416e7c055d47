package say

import (
	"fmt"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// The server's words: what the model is told at initialize, and the failures
// of the gate and the hook themselves.

// Instructions is what the model reads at initialize, so that it need not
// learn the zones by being refused. Zones are the listed ones only: a hidden
// zone's name is not the model's business.
type Instructions struct {
	Zones []ZoneLine
}

// ZoneLine is one zone of the instructions.
type ZoneLine struct {
	Path string
	Mode zones.Mode
}

func (m Instructions) Text(l Lang) string {
	var b strings.Builder
	b.WriteString(l.pick(
		"File tools over a notes vault. Paths are relative to the vault root. "+
			"Every call is checked against zones; a refusal says where the action is allowed. "+
			"Read a file before you overwrite or edit it. "+
			"Every change you make is kept, and the person can see it and undo it, so ordinary edits need no fear; "+
			"deleting is still refused where the zones refuse it.\nZones:\n",
		"Файловые инструменты над хранилищем заметок. Пути — от корня хранилища. "+
			"Каждый вызов проверяется по зонам; отказ говорит, где действие разрешено. "+
			"Прочитайте файл, прежде чем перезаписывать или менять его. "+
			"Каждое ваше изменение сохраняется, и человек может его увидеть и отменить, так что обычных правок бояться не нужно; "+
			"удаление по-прежнему запрещено там, где его запрещают зоны.\nЗоны:\n"))
	for _, z := range m.Zones {
		fmt.Fprintf(&b, "- %s: %s (%s)\n", z.Path, z.Mode, ZoneAllows{z.Mode}.Text(l))
	}
	return b.String()
}

// HookToolRefused is a Claude Code tool the hook neither judges nor lets
// through; Server is the vault's MCP server name.
type HookToolRefused struct {
	Tool, Server string
}

func (m HookToolRefused) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`%[1]s is not allowed here: vaultgate lets through the vault's own tools (mcp__%[2]s__*), Claude Code's tools it can check (Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash), its tools that touch no file (Agent, TodoWrite, AskUserQuestion, plan mode, ToolSearch, Skill, …), and those [hook] allow lists; %[1]s is none of them. A person can add it to [hook] allow in vaultgate's config.`, m.Tool, m.Server),
		fmt.Sprintf(`%[1]s здесь запрещён: vaultgate пропускает инструменты хранилища (mcp__%[2]s__*), проверяемые инструменты Claude Code (Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash), его инструменты, не касающиеся файлов (Agent, TodoWrite, AskUserQuestion, режим плана, ToolSearch, Skill, …), и перечисленные в [hook] allow; %[1]s не из них. Человек может добавить его в [hook] allow в конфигурации vaultgate.`, m.Tool, m.Server))
}

// BuiltinWhy is why the hook refuses one of Claude Code's own tools
// whatever [hook] allow says.
type BuiltinWhy struct{ en, ru string }

var (
	WhyWorktree = BuiltinWhy{`it makes or removes a git worktree under .claude/worktrees and moves the session into it, which vaultgate can't judge`,
		`он создаёт или удаляет git worktree в .claude/worktrees и переносит туда сессию, а этого vaultgate проверить не может`}
	WhyMonitor = BuiltinWhy{`it runs a command of its own that vaultgate can't judge; run the command with Bash, which vaultgate checks`,
		`он запускает собственную команду, которую vaultgate проверить не может; запустите её через Bash, который vaultgate проверяет`}
	WhyWorkflow = BuiltinWhy{`it runs a workflow script whose agents and files vaultgate can't judge as one call`,
		`он запускает сценарий workflow, чьих агентов и файлы vaultgate не может проверить как один вызов`}
	WhyPowerShell = BuiltinWhy{`vaultgate analyses bash only; use Bash`,
		`vaultgate разбирает только bash; используйте Bash`}
	WhyUnjudgedRead = BuiltinWhy{`it reads files in a way vaultgate can't judge; use Read, or the vault's read tool`,
		`он читает файлы так, что vaultgate не может это проверить; используйте Read или инструмент read хранилища`}
	WhyOtherServers = BuiltinWhy{`it reads resources of MCP servers other than the vault's`,
		`он читает ресурсы других MCP-серверов, не хранилища`}
	WhyDurableCron = BuiltinWhy{`a durable job is written to .claude/scheduled_tasks.json, a control file of the project; schedule it without durable`,
		`долговременное задание пишется в .claude/scheduled_tasks.json, управляющий файл проекта; запланируйте его без durable`}
	WhyAgentIsolation = BuiltinWhy{`with isolation it runs the subagent on a copy of the repository (a git worktree under .claude/worktrees, or a remote environment) that holds every tracked file, hidden notes too, where vaultgate can't judge what it reads; run it without isolation`,
		`с isolation он запускает субагента на копии репозитория (git worktree в .claude/worktrees или удалённой среде), где лежат все отслеживаемые файлы, скрытые заметки тоже, и vaultgate не может проверить, что он читает; запустите его без isolation`}
)

// HookBuiltinRefused is a built-in of Claude Code that the hook refuses on
// purpose: it touches files, or runs programs, in a way the hook can't
// judge.
type HookBuiltinRefused struct {
	Tool string
	Why  BuiltinWhy
}

func (m HookBuiltinRefused) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`%s is not allowed here: %s.`, m.Tool, m.Why.en), fmt.Sprintf(`%s здесь запрещён: %s.`, m.Tool, m.Why.ru))
}

// AuditFailed is a call whose audit line could not be written: its result
// is withheld, for a call the person can't see must not look done.
type AuditFailed struct {
	Problem string
}

func (m AuditFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("the audit log could not be written (%s); the call's result is withheld", m.Problem),
		fmt.Sprintf("журнал аудита не удалось записать (%s); результат вызова не выдаётся", m.Problem))
}

// InternalError is a bug in a planner or tool, caught so that the call is
// refused and recorded.
type InternalError struct {
	Tool, Problem string
}

func (m InternalError) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("internal error in %s: %s", m.Tool, m.Problem),
		fmt.Sprintf("внутренняя ошибка в %s: %s", m.Tool, m.Problem))
}

// UnknownTool is a call of a tool the agent does not have.
type UnknownTool struct {
	Tool string
}

func (m UnknownTool) Text(l Lang) string {
	return l.pick(fmt.Sprintf("unknown tool %q", m.Tool), fmt.Sprintf("неизвестный инструмент %q", m.Tool))
}

// VaultLockFailed is a call that changes files and could not take the
// vault's lock, so it was not run: unserialised, it could race another.
type VaultLockFailed struct {
	Problem string
}

func (m VaultLockFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("the vault lock could not be taken (%s); nothing was done", m.Problem),
		fmt.Sprintf("не удалось взять блокировку хранилища (%s); ничего не сделано", m.Problem))
}

// HistoryFailed is a change refused because its pre-image could not be
// kept (a full disk, a failed write): unkept, it could not be undone.
type HistoryFailed struct {
	Path, Problem string
}

func (m HistoryFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("%q was not changed: what undo needs of the change (its state before, and after) could not be kept (%s)", m.Path, m.Problem),
		fmt.Sprintf("«%s» не изменён: то, что нужно для отмены изменения (состояние до и после), не удалось сохранить (%s)", m.Path, m.Problem))
}

// HookBashOff is a Bash call of an agent whose [bash] enabled is false.
type HookBashOff struct{}

func (HookBashOff) Text(l Lang) string {
	return l.pick(
		`Bash is off for this agent ([bash] enabled = false in vaultgate's config). Use the file tools.`,
		`Bash выключен для этого агента ([bash] enabled = false в конфигурации vaultgate). Используйте файловые инструменты.`)
}

// HookNoExec is a Bash call the hook can't hand to vaultgate exec: Problem
// says why (no vaultgate binary beside the hook, say).
type HookNoExec struct {
	Problem string
}

func (m HookNoExec) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`Bash is refused: vaultgate runs Claude Code's Bash commands inside its wall with "vaultgate exec", and can't here: %s. A person can install vaultgate beside vaultgate-hook.`, m.Problem),
		fmt.Sprintf(`Bash запрещён: vaultgate выполняет команды Bash от Claude Code внутри своей стенки через "vaultgate exec", а здесь не может: %s. Человек может установить vaultgate рядом с vaultgate-hook.`, m.Problem))
}

// HookSandboxOn is a Bash call under wall = "required" while Claude Code's
// own sandbox is on: vaultgate's wall can't be shown to stand inside it.
// Settings is the settings file that turns it on.
type HookSandboxOn struct {
	Settings string
}

func (m HookSandboxOn) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`Bash is refused: vaultgate's config requires its OS wall around every command (wall = "required"), and Claude Code's own sandbox is on (%s), inside which that wall can't be raised. A person can turn Claude Code's sandbox off for this vault (vaultgate's wall takes its place) or set [bash] wall = "best-effort".`, m.Settings),
		fmt.Sprintf(`Bash запрещён: конфигурация vaultgate требует защитную стенку ОС вокруг каждой команды (wall = "required"), а включена собственная песочница Claude Code (%s), внутри которой эту стенку не поднять. Человек может выключить песочницу Claude Code для этого хранилища (её место займёт стенка vaultgate) или задать [bash] wall = "best-effort".`, m.Settings))
}
