package say

import (
	"fmt"

	"github.com/vaultgate/vaultgate/zones"
)

// The policy rules' refusals. Each says what was refused, why, and where it
// would be allowed. A hidden or no-zone path is named only as the caller
// spelled it, so a refusal never tells the model where hidden things are.

// Refused is an op its zone does not allow. In is what gives Path its
// zone (zones.Table.RootOf), named so the model knows what the path lies
// in: a zone root of the config, a name pattern, a control path, or a name
// vaultgate keeps; a zero In.Path names nothing (a hidden path's root is
// never named, only a pattern it matches).
type Refused struct {
	Op    zones.Op
	Path  string
	Zone  zones.Mode
	In    zones.Root
	Where Where
}

func (m Refused) Text(l Lang) string {
	v, a, w := verb(m.Op, l), ZoneAllows{m.Zone}.Text(l), m.Where.Text(l)
	in := m.In.Path.String()
	var lies string
	switch {
	case in == "" || in == "." || in == m.Path && !m.In.Control && !m.In.Own:
	case m.In.Pattern:
		lies = l.pick("Its name matches "+in+". ", "Имя подходит под шаблон "+in+". ")
	case m.In.Control && in == m.Path:
		lies = l.pick(
			fmt.Sprintf("It is a control path (what is written there runs as the person's code or loosens a boundary), so always %s. ", m.Zone),
			fmt.Sprintf("Это управляющий путь (то, что там записано, исполняется как код человека или ослабляет границу), поэтому всегда %s. ", m.Zone))
	case m.In.Control:
		lies = l.pick(
			fmt.Sprintf("It lies in %s, a control path (what is written there runs as the person's code or loosens a boundary), so always %s. ", in, m.Zone),
			fmt.Sprintf("Путь лежит в %s, а это управляющий путь (то, что там записано, исполняется как код человека или ослабляет границу), поэтому всегда %s. ", in, m.Zone))
	case m.In.Own:
		lies = l.pick(in+" is vaultgate's own. ", in+" принадлежит самому vaultgate. ")
	default:
		lies = l.pick("It lies in "+in+". ", "Путь лежит в "+in+". ")
	}
	return l.pick(
		fmt.Sprintf(`%s %q: zone %s (%s). %s%s`, v, m.Path, m.Zone, a, lies, w),
		fmt.Sprintf(`%s «%s» нельзя: зона %s (%s). %s%s`, v, m.Path, m.Zone, a, lies, w))
}

// NoZoneRefused is an op on a vault path that no zone covers.
type NoZoneRefused struct {
	Op    zones.Op
	Path  string
	Where Where
}

func (m NoZoneRefused) Text(l Lang) string {
	v, w := verb(m.Op, l), m.Where.Text(l)
	return l.pick(
		fmt.Sprintf(`%s %q: the path is in no zone, so nothing is allowed there. %s`, v, m.Path, w),
		fmt.Sprintf(`%s «%s» нельзя: путь не входит ни в одну зону, там ничего нельзя. %s`, v, m.Path, w))
}

// OutsideRefused is an op on a path outside the vault that no zone covers.
type OutsideRefused struct {
	Op    zones.Op
	Path  string
	Where Where
}

func (m OutsideRefused) Text(l Lang) string {
	v, w := verb(m.Op, l), m.Where.Text(l)
	return l.pick(
		fmt.Sprintf(`%s %q: the path is outside the vault. Work inside the vault (paths relative to its root). %s`, v, m.Path, w),
		fmt.Sprintf(`%s «%s» нельзя: путь вне хранилища. Работайте внутри хранилища (пути от его корня). %s`, v, m.Path, w))
}

// SubtreeRefused is an op on a folder with everything in it, stopped by
// Inside, a path below it in a zone that does not allow it.
type SubtreeRefused struct {
	Op     zones.Op
	Path   string
	Inside string
	Zone   zones.Mode // Inside's zone
	Where  Where
}

func (m SubtreeRefused) Text(l Lang) string {
	v, a, w := verb(m.Op, l), ZoneAllows{m.Zone}.Text(l), m.Where.Text(l)
	return l.pick(
		fmt.Sprintf(`%s %q with everything inside it: %q inside it is in zone %s (%s). %s`, v, m.Path, m.Inside, m.Zone, a, w),
		fmt.Sprintf(`%s «%s» со всем содержимым нельзя: «%s» внутри — в зоне %s (%s). %s`, v, m.Path, m.Inside, m.Zone, a, w))
}

// SubtreeHidden is SubtreeRefused where the path that stops it is hidden or
// in no zone: it is not named, not even that it exists.
type SubtreeHidden struct {
	Op    zones.Op
	Path  string
	Where Where
}

func (m SubtreeHidden) Text(l Lang) string {
	v, w := verb(m.Op, l), m.Where.Text(l)
	return l.pick(
		fmt.Sprintf(`%s %q with everything inside it: some paths inside it are hidden from you. Act on the files and folders you can list instead. %s`, v, m.Path, w),
		fmt.Sprintf(`%s «%s» со всем содержимым нельзя: часть путей внутри скрыта от вас. Действуйте с файлами и папками, которые видны в списке. %s`, v, m.Path, w))
}

// UnknownPath is a change to a path only known when a command runs.
type UnknownPath struct {
	Op      zones.Op
	Command string
}

func (m UnknownPath) Text(l Lang) string {
	v := verb(m.Op, l)
	return l.pick(
		fmt.Sprintf(`%s a path that is only known when the command runs (in %q): vaultgate can't check it, so it is refused. Write the path out literally.`, v, m.Command),
		fmt.Sprintf(`%s путь, известный только при выполнении (в %q), нельзя: vaultgate не может его проверить. Напишите путь явно.`, v, m.Command))
}

// UnconfinedRun is a program of unknown effect that nothing holds to the
// zones (the zones rule's fallback when no tool's rule spoke first).
type UnconfinedRun struct {
	Program string
}

func (m UnconfinedRun) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`run %q: vaultgate can't know what it would touch, and nothing holds it to the zones, so it is refused.`, m.Program),
		fmt.Sprintf(`запустить %q нельзя: vaultgate не может знать, что она затронет, и ничто не удержит её в зонах.`, m.Program))
}

// UnknownRead is a read of a path only known when a command runs, without
// the wall: such a path could be any file on the machine.
type UnknownRead struct {
	Command string
}

func (m UnknownRead) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`read a path that is only known when the command runs (in %q): without the OS wall around bash such a path could be any file on the machine, so it is refused. Write the path out literally, or use the read, list and search tools.`, m.Command),
		fmt.Sprintf(`прочитать путь, известный только при выполнении (в %q), нельзя: без защитной стенки ОС вокруг bash это может быть любой файл на машине. Напишите путь явно или используйте инструменты read, list и search.`, m.Command))
}

// ZoneRoot is a delete or move of a zone's root named in the config.
type ZoneRoot struct {
	Op   zones.Op
	Path string
}

func (m ZoneRoot) Text(l Lang) string {
	v := verb(m.Op, l)
	return l.pick(
		fmt.Sprintf(`%s %q: it is the root of a zone named in the config, so it can't be deleted or moved. Act on the files inside it instead.`, v, m.Path),
		fmt.Sprintf(`%s «%s» нельзя: это корень зоны из конфигурации, его нельзя удалить или переместить. Действуйте с файлами внутри.`, v, m.Path))
}

// ZoneRootInside is a delete or move of a folder that holds Inside, a
// zone's root named in the config.
type ZoneRootInside struct {
	Op     zones.Op
	Path   string
	Inside string
}

func (m ZoneRootInside) Text(l Lang) string {
	v := verb(m.Op, l)
	return l.pick(
		fmt.Sprintf(`%s %q with everything inside it: %q inside it is the root of a zone named in the config, and can't be deleted or moved.`, v, m.Path, m.Inside),
		fmt.Sprintf(`%s «%s» со всем содержимым нельзя: «%s» внутри — корень зоны из конфигурации, его нельзя удалить или переместить.`, v, m.Path, m.Inside))
}

// Launder is a move that would take content from zone From into To, where
// it could be deleted or changed more freely.
type Launder struct {
	Source, Path string
	From, To     zones.Mode
}

func (m Launder) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`move %q to %q: the content would go from zone %s to zone %s, where it could be deleted or changed more freely. Move it only into zones no more permissive than %s.`, m.Source, m.Path, m.From, m.To, m.From),
		fmt.Sprintf(`переместить «%s» в «%s» нельзя: содержимое перешло бы из зоны %s в зону %s, где его можно удалять или менять свободнее. Перемещайте только в зоны не свободнее %s.`, m.Source, m.Path, m.From, m.To, m.From))
}

// LinkSource is a hard link to a file outside write zones (Zone is the
// file's).
type LinkSource struct {
	Source, Path string
	Zone         zones.Mode
}

func (m LinkSource) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`hard-link %q as %q: a hard link is allowed only when the linked file is in a write zone too; %q is in zone %s.`, m.Source, m.Path, m.Source, m.Zone),
		fmt.Sprintf(`создать жёсткую ссылку «%s» на «%s» нельзя: это можно, только если сам файл тоже в зоне write; «%s» — в зоне %s.`, m.Path, m.Source, m.Source, m.Zone))
}

// HardLinks is a change to a file with several names, some of which may lie
// in other zones.
type HardLinks struct {
	Op    zones.Op
	Path  string
	Links int
}

func (m HardLinks) Text(l Lang) string {
	v := verb(m.Op, l)
	return l.pick(
		fmt.Sprintf(`%s %q: the file has %d hard links, and its other names may lie in other zones, so vaultgate never changes or deletes it. Write a new file instead.`, v, m.Path, m.Links),
		fmt.Sprintf(`%s «%s» нельзя: у файла %d жёстких ссылок, другие его имена могут лежать в других зонах, поэтому vaultgate его не меняет и не удаляет. Создайте новый файл.`, v, m.Path, m.Links))
}

// Symlink is a write through a symbolic link to Target.
type Symlink struct {
	Op           zones.Op
	Path, Target string
}

func (m Symlink) Text(l Lang) string {
	v := verb(m.Op, l)
	return l.pick(
		fmt.Sprintf(`%s %q: it is a symbolic link to %q. Write to %q itself.`, v, m.Path, m.Target, m.Target),
		fmt.Sprintf(`%s «%s» нельзя: это символическая ссылка на «%s». Пишите в сам «%s».`, v, m.Path, m.Target, m.Target))
}

// LinkOutside, LinkUnreadable, LinkControl and LinkUnplaced are a
// symbolic link the caller would leave in the vault (made, or moved so
// that it leads elsewhere) that leads where the caller may not read. Path
// is the link, Target its target as stored; where a link on the way led
// it is never named.
type LinkOutside struct{ Path, Target string }

func (m LinkOutside) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`symbolic link %q → %q: it leads out of the vault. A link you leave in the vault may lead only where you may read inside it: Obsidian, sync and backups follow links. Copy what you need into the vault instead.`, m.Path, m.Target),
		fmt.Sprintf(`оставить в хранилище символическую ссылку «%s» → «%s» нельзя: она ведёт за пределы хранилища. Ссылка, которую вы оставляете в хранилище, может вести только туда, где вы можете читать: Obsidian, синхронизация и резервные копии идут по ссылкам. Скопируйте нужное в хранилище.`, m.Path, m.Target))
}

type LinkUnreadable struct{ Path, Target string }

func (m LinkUnreadable) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`symbolic link %q → %q: it leads where you may not read (or to a folder that holds such a place). A link you leave in the vault may lead only where you may read: Obsidian, sync and backups follow links.`, m.Path, m.Target),
		fmt.Sprintf(`оставить в хранилище символическую ссылку «%s» → «%s» нельзя: она ведёт туда, где вам нельзя читать (или в папку, где есть такое место). Ссылка, которую вы оставляете в хранилище, может вести только туда, где вы можете читать: Obsidian, синхронизация и резервные копии идут по ссылкам.`, m.Path, m.Target))
}

type LinkControl struct{ Path, Target string }

func (m LinkControl) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`symbolic link %q → %q: it leads to a control path (settings or code that a program of the person's runs, such as .git or .obsidian/plugins) or a name vaultgate keeps for itself, or to a folder that holds one. Link to the notes themselves.`, m.Path, m.Target),
		fmt.Sprintf(`оставить в хранилище символическую ссылку «%s» → «%s» нельзя: она ведёт к управляющему пути (настройкам или коду, которые запускает программа человека, например .git или .obsidian/plugins), к имени, которое vaultgate держит за собой, или в папку, где такое есть. Ссылайтесь на сами заметки.`, m.Path, m.Target))
}

type LinkUnplaced struct{ Path, Target string }

func (m LinkUnplaced) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`symbolic link %q → %q: vaultgate can't tell where it leads (a ".." after a name, which a link made later would turn elsewhere; a loop of links; a folder too large to check). Give it a target that climbs with ".." only at its start, to a note or folder you may read.`, m.Path, m.Target),
		fmt.Sprintf(`оставить в хранилище символическую ссылку «%s» → «%s» нельзя: vaultgate не может определить, куда она ведёт («..» после имени, которое позже созданная ссылка повернёт в другое место; петля ссылок; слишком большая папка). Дайте ей цель, где «..» стоит только в начале, — заметку или папку, которую вы можете читать.`, m.Path, m.Target))
}

// ReadFirst is an overwrite of a file the session has not read as it is now.
type ReadFirst struct {
	Op   zones.Op
	Path string
}

func (m ReadFirst) Text(l Lang) string {
	v := verb(m.Op, l)
	return l.pick(
		fmt.Sprintf(`%s %q: the file exists and has not been read in this session, or has changed since it was read. Read it with the read tool first, then try again.`, v, m.Path),
		fmt.Sprintf(`%s «%s» нельзя: файл существует, но не был прочитан в этой сессии или изменился после чтения. Сначала прочитайте его инструментом read, затем повторите.`, v, m.Path))
}

// RuleFailed is a rule that panicked; Problem is what it panicked with.
type RuleFailed struct {
	Rule, Problem string
}

func (m RuleFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`refused: the check %q failed (%s), and a failed check refuses.`, m.Rule, m.Problem),
		fmt.Sprintf(`отказано: проверка %q сломалась (%s), а сломанная проверка запрещает.`, m.Rule, m.Problem))
}

// RuleWithoutCheck is a rule that has no check function: it refuses.
type RuleWithoutCheck struct {
	Rule string
}

func (m RuleWithoutCheck) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`refused: the check %q failed (no check function), and a failed check refuses.`, m.Rule),
		fmt.Sprintf(`отказано: проверка %q сломалась (нет функции проверки), а сломанная проверка запрещает.`, m.Rule))
}

// RuleEvalFailed is a config rule (CEL) whose expression failed on this
// call: a missing key, a bad conversion, too much work. It refuses.
type RuleEvalFailed struct {
	Rule, Problem string
}

func (m RuleEvalFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`refused: the config's rule %q could not be evaluated on this call (%s), and a rule that can't decide refuses.`, m.Rule, m.Problem),
		fmt.Sprintf(`отказано: правило конфигурации %q не удалось вычислить для этого вызова (%s), а правило, которое не может решить, запрещает.`, m.Rule, m.Problem))
}

// RuleNotCompiled is a config rule the gate was opened without compiling
// (a gate opened for one call of another agent, or a dry run's rule that
// does not compile): it refuses rather than let the agent go unjudged by
// it.
type RuleNotCompiled struct {
	Rule string
}

func (m RuleNotCompiled) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`refused: the config's rule %q was not compiled when this server started, and a rule that can't run refuses.`, m.Rule),
		fmt.Sprintf(`отказано: правило конфигурации %q не было скомпилировано при запуске сервера, а правило, которое не может выполниться, запрещает.`, m.Rule))
}
