package say

import (
	"fmt"
	"strings"
)

// The words of a bash call that ran on the overlay: what became of the
// changes it made, once they were judged. Each says that the command ran
// and that nothing in the vault was changed, then why.

// BashNotApplied is a call some of whose real changes the rules refused:
// none of them was applied. Refusals are the rules' reasons, one for each
// refused change (each names the path, its zone and where it would be
// allowed).
type BashNotApplied struct {
	Refusals []string
}

func (m BashNotApplied) Text(l Lang) string {
	var b strings.Builder
	b.WriteString(l.pick(
		"The command ran, but nothing in the vault was changed: what it changed was judged when it had ended, and these changes are refused, so none of its changes were applied:\n",
		"Команда выполнена, но в хранилище ничего не изменено: её изменения проверены после завершения, и эти изменения запрещены, поэтому не применено ни одно:\n"))
	for _, r := range m.Refusals {
		b.WriteString("- " + r + "\n")
	}
	return b.String()
}

// BashConflict is a call whose changes touch a file that changed in the
// vault while the command ran (a sync client, the person's editor): it is
// never overwritten, so nothing was applied.
type BashConflict struct {
	Path string
}

func (m BashConflict) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("The command ran, but nothing in the vault was changed: %q changed in the vault while the command ran, and vaultgate never overwrites a change made meanwhile. Read it again, then repeat the command.\n", m.Path),
		fmt.Sprintf("Команда выполнена, но в хранилище ничего не изменено: «%s» изменился в хранилище, пока команда выполнялась, а такие изменения vaultgate никогда не затирает. Прочитайте его заново и повторите команду.\n", m.Path))
}

// BashOverLimit is a call that changed more than [bash] Key allows
// (max_changed_files, max_changed_bytes): nothing was applied.
type BashOverLimit struct {
	Key   string
	Limit int64
}

func (m BashOverLimit) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("The command ran, but nothing in the vault was changed: it changed more than one call may ([bash] %s = %d). Split the work into smaller commands.\n", m.Key, m.Limit),
		fmt.Sprintf("Команда выполнена, но в хранилище ничего не изменено: она изменила больше, чем можно за один вызов ([bash] %s = %d). Разбейте работу на команды поменьше.\n", m.Key, m.Limit))
}

// BashUnfinished is a call that did not end by itself (it timed out or was
// killed): nothing it changed was applied.
type BashUnfinished struct{}

func (m BashUnfinished) Text(l Lang) string {
	return l.pick(
		"The command did not finish by itself (it timed out or was killed), so nothing in the vault was changed: none of its changes were applied.\n",
		"Команда не завершилась сама (время вышло или её остановили), поэтому в хранилище ничего не изменено: ни одно её изменение не применено.\n")
}

// BashChangesUnread is a call whose changes could not be read back from
// its overlay: they are not applied, since they could not be judged.
type BashChangesUnread struct {
	Problem string
}

func (m BashChangesUnread) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("The command ran, but nothing in the vault was changed: its changes could not be read to be judged (%s).\n", m.Problem),
		fmt.Sprintf("Команда выполнена, но в хранилище ничего не изменено: её изменения не удалось прочитать для проверки (%s).\n", m.Problem))
}

// BashCommitFailed is a commit that failed part-way on the vault's side
// (a full disk): the journal finishes it at the server's next start.
type BashCommitFailed struct {
	Problem string
}

func (m BashCommitFailed) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("The command ran and its changes were allowed, but applying them failed (%s); the server finishes or undoes them at its next start.\n", m.Problem),
		fmt.Sprintf("Команда выполнена и её изменения разрешены, но применить их не удалось (%s); сервер завершит или отменит их при следующем запуске.\n", m.Problem))
}

// BashNotCommitted is a commit that failed before any change reached the
// vault (a change the commit itself refuses, a vault it can't write).
type BashNotCommitted struct {
	Problem string
}

func (m BashNotCommitted) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("The command ran and its changes were allowed, but nothing in the vault was changed: applying them failed before any reached it (%s).\n", m.Problem),
		fmt.Sprintf("Команда выполнена и её изменения разрешены, но в хранилище ничего не изменено: применить их не удалось до того, как хоть одно туда попало (%s).\n", m.Problem))
}

// BashNotKept is a commit refused because the history could not keep
// what undo needs of its changes (a full disk, a failed write): unkept,
// they could not be undone, so none was applied.
type BashNotKept struct {
	Problem string
}

func (m BashNotKept) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("The command ran and its changes were allowed, but nothing in the vault was changed: what undo needs of them (the state before, and after) could not be kept (%s).\n", m.Problem),
		fmt.Sprintf("Команда выполнена и её изменения разрешены, но в хранилище ничего не изменено: то, что нужно для их отмены (состояние до и после), не удалось сохранить (%s).\n", m.Problem))
}

// SpecialFile is a FIFO, socket or device a command made in the vault:
// the vault holds files, folders and symlinks only.
type SpecialFile struct {
	Path string
}

func (m SpecialFile) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("create %q: it is a FIFO, socket or device, and the vault holds only files, folders and symlinks.", m.Path),
		fmt.Sprintf("создать «%s» нельзя: это FIFO, сокет или устройство, а в хранилище бывают только файлы, папки и символьные ссылки.", m.Path))
}

// UnsafeMode is a change a bash command made that brings a setuid,
// setgid, sticky or world-writable bit into the vault, which takes none
// of them from bash. Mode is the mode the entry would have, in octal as
// chmod writes it ("3777"); the flags name the bits the change adds.
type UnsafeMode struct {
	Path                                  string
	Mode                                  string
	Setuid, Setgid, Sticky, WorldWritable bool
}

func (m UnsafeMode) Text(l Lang) string {
	var en, ru []string
	add := func(on bool, e, r string) {
		if on {
			en, ru = append(en, e), append(ru, r)
		}
	}
	add(m.Setuid, "setuid", "setuid")
	add(m.Setgid, "setgid", "setgid")
	add(m.Sticky, "sticky", "sticky")
	add(m.WorldWritable, "world-writable", "запись для всех")
	list := func(words []string, and string) string {
		if len(words) < 2 {
			return strings.Join(words, "")
		}
		return strings.Join(words[:len(words)-1], ", ") + " " + and + " " + words[len(words)-1]
	}
	return l.pick(
		fmt.Sprintf("give %q mode %s: it adds %s, and no setuid, setgid, sticky or world-writable bit reaches the vault from bash. Leave them out (chmod u-s,g-s,o-t,o-w, or a mode such as 755 or 644).", m.Path, m.Mode, list(en, "and")),
		fmt.Sprintf("дать «%s» права %s нельзя: они добавляют %s, а из bash в хранилище не попадает ни setuid, ни setgid, ни sticky, ни запись для всех. Уберите их (chmod u-s,g-s,o-t,o-w или права вроде 755 или 644).", m.Path, m.Mode, list(ru, "и")))
}
