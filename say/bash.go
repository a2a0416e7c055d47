package say

import (
	"fmt"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

// The bash tool's words: refusals of commands and programs, and its result.

// ExecRefused is a program of unknown effect with no wall to bound it.
// Program is the program or the option that runs one; Why is an ExecWhy's
// text.
type ExecRefused struct {
	Program, Why string
}

func (m ExecRefused) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`run %q (%s): vaultgate can't know what it would touch, and without the OS wall around bash it runs only what it can check. Use the file tools (read, write, edit, move, delete, list, search), or commands with literal paths.`, m.Program, m.Why),
		fmt.Sprintf(`запустить %q (%s) нельзя: vaultgate не может знать, что она затронет, а без защитной стенки ОС bash выполняет только проверяемое. Используйте файловые инструменты (read, write, edit, move, delete, list, search) или команды с явными путями.`, m.Program, m.Why))
}

// ExecNotAllowed is a program of unknown effect that is not in the agent's
// bash.allow.
type ExecNotAllowed struct {
	Program string
	Allowed []string
}

func (m ExecNotAllowed) Text(l Lang) string {
	list := strings.Join(m.Allowed, ", ")
	return l.pick(
		fmt.Sprintf(`run %q: it is not in bash.allow, the programs of unknown effect this agent may run under the wall (%s).`, m.Program, list),
		fmt.Sprintf(`запустить %q нельзя: её нет в bash.allow — списке программ, которые этот агент может запускать внутри стенки (%s).`, m.Program, list))
}

// BashRemove is a removal by a bash command outside write zones.
type BashRemove struct {
	Path, Command string
	Zone          zones.Mode
	Where         Where
}

func (m BashRemove) Text(l Lang) string {
	return bashRename(l, zones.OpDelete, m.Path, m.Command, m.Zone, m.Where.Text(l))
}

// BashRename is a move, or an edit by rename (sed -i), by a bash command in
// an edit zone, where the file tool Tool can do it by checked steps.
type BashRename struct {
	Op            zones.Op
	Path, Command string
	Zone          zones.Mode
	Tool          string
}

func (m BashRename) Text(l Lang) string {
	hint := l.pick(
		fmt.Sprintf("Use the %s tool instead: it can do this here.", m.Tool),
		fmt.Sprintf("Используйте инструмент %s: он может сделать это здесь.", m.Tool))
	return bashRename(l, m.Op, m.Path, m.Command, m.Zone, hint)
}

func bashRename(l Lang, op zones.Op, path, command string, zone zones.Mode, hint string) string {
	v := verb(op, l)
	return l.pick(
		fmt.Sprintf(`%s %q with %q: bash may remove or rename files only in write zones, and %q is in zone %s. %s`, v, path, command, path, zone, hint),
		fmt.Sprintf(`%s «%s» командой %q нельзя: bash может удалять и переименовывать только в зонах write, а «%s» — в зоне %s. %s`, v, path, command, path, zone, hint))
}

// BashParse is a command that can't be parsed.
type BashParse struct {
	Problem string
}

func (m BashParse) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash: the command can't be parsed (%s); nothing ran.`, m.Problem),
		fmt.Sprintf(`bash: команду нельзя разобрать (%s); ничего не выполнено.`, m.Problem))
}

// BashDynamic is a command whose name is only known when it runs.
type BashDynamic struct {
	Command string
}

func (m BashDynamic) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash: a command whose name is only known when it runs (%q) can't be checked, so it is refused. Write the command's name out.`, m.Command),
		fmt.Sprintf(`bash: команду, имя которой известно только при выполнении (%q), нельзя проверить, поэтому она запрещена. Напишите имя команды явно.`, m.Command))
}

// BashNoCwd is a hook's Bash call whose input does not say where it runs.
type BashNoCwd struct{}

func (m BashNoCwd) Text(l Lang) string {
	return l.pick(
		`bash: the hook's input has no absolute "cwd", so where the command would run is unknown and its relative paths can't be checked; it is refused.`,
		`bash: во входных данных хука нет абсолютного «cwd», поэтому неизвестно, где выполнится команда, и её относительные пути нельзя проверить; она запрещена.`)
}

// BashPrivilege is a command that would run with other privileges.
type BashPrivilege struct {
	Command string
}

func (m BashPrivilege) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash: %q is refused: vaultgate never runs commands with other privileges (sudo, su, doas).`, m.Command),
		fmt.Sprintf(`bash: %q запрещена: vaultgate никогда не выполняет команды с чужими правами (sudo, su, doas).`, m.Command))
}

// BashAnalysisFailed is a command the analysis failed on; it does not run.
type BashAnalysisFailed struct {
	Problem string
}

func (m BashAnalysisFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash: the analysis of the command failed (%s); nothing ran.`, m.Problem),
		fmt.Sprintf(`bash: разбор команды не удался (%s); ничего не выполнено.`, m.Problem))
}

// BashTooLarge is a command longer than the analysis reads.
type BashTooLarge struct {
	MaxKiB int
}

func (m BashTooLarge) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash: the command is over %d KiB; split it into smaller commands.`, m.MaxKiB),
		fmt.Sprintf(`bash: команда длиннее %d КиБ; разбейте её на команды поменьше.`, m.MaxKiB))
}

// BashTooDeep is a command that nests shells and wrappers too deeply.
type BashTooDeep struct {
	Detail string
}

func (m BashTooDeep) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash: the command nests shells and wrappers too deeply (%s); write it plainly.`, m.Detail),
		fmt.Sprintf(`bash: в команде слишком глубоко вложены оболочки и обёртки (%s); напишите её проще.`, m.Detail))
}

// BashWallRequired is bash switched off because the config requires a wall
// that can't be raised here; Problem says what is missing.
type BashWallRequired struct {
	Problem string
}

func (m BashWallRequired) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash is off: the config requires the OS wall around bash (wall = "required"), and it can't be raised here: %s. A person can set [bash] wall = "best-effort" or "off" to run commands with less; until then use the file tools.`, m.Problem),
		fmt.Sprintf(`bash выключен: конфигурация требует защитную стенку ОС вокруг bash (wall = "required"), а здесь её не поднять: %s. Человек может задать [bash] wall = "best-effort" или "off", чтобы выполнять команды с меньшей защитой; пока используйте файловые инструменты.`, m.Problem))
}

// BashCwdOutside is a bash call asked to run from a folder that is not
// one of the vault's.
type BashCwdOutside struct {
	Dir string
}

func (m BashCwdOutside) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`bash runs only from a folder inside the vault, and %q is not one.`, m.Dir),
		fmt.Sprintf(`bash выполняется только из папки внутри хранилища, а %q — не такая папка.`, m.Dir))
}

// ExecWhy says why a program's effect can't be known before it runs. The
// values are the vars below; the bash planner maps the analysis' reasons to
// them.
type ExecWhy struct {
	en, ru string
}

func (m ExecWhy) Text(l Lang) string { return l.pick(m.en, m.ru) }

// The reasons a program's effect can't be known.
var (
	WhyInterpreter       = ExecWhy{"an interpreter runs code of its own", "интерпретатор выполняет свой код"}
	WhyVersionControl    = ExecWhy{"git runs a repository's hooks and config", "git выполняет хуки и настройки репозитория"}
	WhyBuildTool         = ExecWhy{"a build tool runs project scripts", "сборщик выполняет скрипты проекта"}
	WhyScript            = ExecWhy{"a script runs code vaultgate can't see", "скрипт выполняет код, который vaultgate не видит"}
	WhyShellBuiltin      = ExecWhy{"this shell builtin changes what later commands do", "эта встроенная команда меняет поведение следующих команд"}
	WhyUnknownProgram    = ExecWhy{"a program vaultgate does not know", "программа, которую vaultgate не знает"}
	WhyUnknownOption     = ExecWhy{"an option vaultgate does not know", "параметр, который vaultgate не знает"}
	WhyProgramOption     = ExecWhy{"an option that runs another program", "параметр, который запускает другую программу"}
	WhyDynamicArithmetic = ExecWhy{"arithmetic on a value only known when it runs can execute code hidden in data", "арифметика над значением, известным только при выполнении, может выполнить код, спрятанный в данных"}
	WhyDangerousEnv      = ExecWhy{"a variable that changes how programs start", "переменная, меняющая запуск программ"}
	WhySedScript         = ExecWhy{"a sed script that writes files or runs commands", "скрипт sed, который пишет файлы или выполняет команды"}
	WhyDynamicExpansion  = ExecWhy{"an expansion that evaluates data as code", "подстановка, выполняющая данные как код"}
	WhyDynamicArgument   = ExecWhy{"an argument only known when it runs (a variable, a substitution, or a glob that may match a name starting with \"-\"), where the program reads options: it could be one that runs a program or writes a file; put \"--\" before it", "аргумент, известный только при выполнении (переменная, подстановка или шаблон, который может совпасть с именем, начинающимся с «-»), там, где программа читает опции: это может оказаться опция, которая запускает программу или пишет файл; поставьте перед ним «--»"}
	WhyMachine           = ExecWhy{"it changes the machine (its name, clock, mounts, network, services), not the vault, which no zone covers", "она меняет машину (её имя, часы, монтирование, сеть, службы), а не хранилище, и никакая зона этого не покрывает"}
	WhyCdMayFail         = ExecWhy{"it goes with cd into a folder the command also removes or moves away: if that cd fails, what follows runs in another folder than the one it was checked in", "она переходит командой cd в папку, которую сама же удаляет или переносит: если cd не удастся, дальнейшее выполнится в другой папке, не в той, где его проверяли"}
	// WhyUnexplained is for a reason the catalogue has no words for: a bug
	// the planner's test catches, worded so that it still refuses sensibly.
	WhyUnexplained = ExecWhy{"vaultgate can't tell what it would do", "vaultgate не может понять, что она сделает"}
)

// GitHidden is told after a walled command that ran git in a vault whose
// .git is hidden (it holds a copy of every note, hidden ones too): git
// there finds no repository, or one of its own, and its words ("not a git
// repository", every note untracked or deleted) are not the vault's state.
type GitHidden struct{}

func (m GitHidden) Text(l Lang) string {
	return l.pick(
		"vaultgate: git finds no repository of the vault here: its .git is hidden from you, since it holds a copy of every note, hidden ones too. What git says is not the state of the vault's files; they are as the file tools show them. Do not re-create or restore anything on git's word: ask the person, who can run git.",
		"vaultgate: git не находит здесь репозиторий хранилища: его .git от вас скрыт, потому что в нём копия каждой заметки, скрытых тоже. Что говорит git — не состояние файлов хранилища; они такие, как их показывают файловые инструменты. Ничего не создавайте заново и не восстанавливайте по словам git: спросите человека, он может запустить git.")
}

// BashResult is what the bash tool returns: the exit code, and the output.
type BashResult struct {
	ExitCode       int
	TimedOut       bool
	Timeout        time.Duration // when TimedOut
	Stdout, Stderr string
}

func (m BashResult) Text(l Lang) string {
	var b strings.Builder
	b.WriteString(l.pick(fmt.Sprintf("exit code: %d", m.ExitCode), fmt.Sprintf("код выхода: %d", m.ExitCode)))
	if m.TimedOut {
		b.WriteString(l.pick(
			fmt.Sprintf(" (timed out after %s; every process of the call was ended)", m.Timeout),
			fmt.Sprintf(" (время вышло через %s; все процессы вызова завершены)", m.Timeout)))
	}
	b.WriteString("\n")
	for _, out := range []struct{ name, text string }{{"stdout", m.Stdout}, {"stderr", m.Stderr}} {
		if out.text == "" {
			continue
		}
		b.WriteString(out.name + ":\n" + out.text)
		if !strings.HasSuffix(out.text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
