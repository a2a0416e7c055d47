package say

import "fmt"

// The file tools' words: failures of calls that were allowed, and results.

// NotFound is a path that does not exist.
type NotFound struct{ Path string }

func (m NotFound) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`%q does not exist.`, m.Path), fmt.Sprintf(`«%s» не существует.`, m.Path))
}

// IsFolder is a folder where a file was expected.
type IsFolder struct{ Path string }

func (m IsFolder) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`%q is a folder; use the list tool to see what is in it.`, m.Path),
		fmt.Sprintf(`«%s» — папка; посмотрите её содержимое инструментом list.`, m.Path))
}

// NotFolder is a file where a folder was expected.
type NotFolder struct{ Path string }

func (m NotFolder) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`%q is not a folder.`, m.Path), fmt.Sprintf(`«%s» — не папка.`, m.Path))
}

// NotRegular is a device, socket or other non-file.
type NotRegular struct{ Path string }

func (m NotRegular) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`%q is not a regular file.`, m.Path), fmt.Sprintf(`«%s» — не обычный файл.`, m.Path))
}

// NotText is a binary file; Size is in bytes.
type NotText struct {
	Path string
	Size int64
}

func (m NotText) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`%q is not a text file (%d bytes); vaultgate reads text only.`, m.Path, m.Size),
		fmt.Sprintf(`«%s» — не текстовый файл (%d байт); vaultgate читает только текст.`, m.Path, m.Size))
}

// TooBig is a file over Max bytes read whole.
type TooBig struct {
	Path      string
	Size, Max int64
}

func (m TooBig) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`%q is %d bytes, more than %d: read it in parts with offset and limit.`, m.Path, m.Size, m.Max),
		fmt.Sprintf(`«%s» занимает %d байт, больше %d: читайте частями через offset и limit.`, m.Path, m.Size, m.Max))
}

// EditNoMatch is an edit whose old_string is not in the file.
type EditNoMatch struct{ Path string }

func (m EditNoMatch) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`edit %q: old_string does not occur in the file. Read the file and copy the text exactly, whitespace included.`, m.Path),
		fmt.Sprintf(`изменить «%s» нельзя: old_string в файле не найден. Прочитайте файл и скопируйте текст точно, с пробелами.`, m.Path))
}

// EditManyMatches is an edit whose old_string occurs Count times.
type EditManyMatches struct {
	Path  string
	Count int
}

func (m EditManyMatches) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`edit %q: old_string occurs %d times. Give more surrounding text so that it occurs once, or set replace_all.`, m.Path, m.Count),
		fmt.Sprintf(`изменить «%s» нельзя: old_string встречается %d раз. Дайте больше окружающего текста, чтобы он встречался один раз, или задайте replace_all.`, m.Path, m.Count))
}

// DestExists is a move onto an existing file without overwrite.
type DestExists struct{ Path string }

func (m DestExists) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`move to %q: it exists. Give a new name, or set overwrite to replace a file.`, m.Path),
		fmt.Sprintf(`переместить в «%s» нельзя: он уже существует. Дайте новое имя или задайте overwrite, чтобы заменить файл.`, m.Path))
}

// DestFolder is a move onto an existing folder.
type DestFolder struct{ Path string }

func (m DestFolder) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`move to %q: it is an existing folder, and move never merges or replaces folders. Give the full destination path, including the new name.`, m.Path),
		fmt.Sprintf(`переместить в «%s» нельзя: это существующая папка, а move не сливает и не заменяет папки. Укажите полный путь назначения с новым именем.`, m.Path))
}

// OverwriteFolder is a move with overwrite whose source is a folder.
type OverwriteFolder struct{ Path string }

func (m OverwriteFolder) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`move %q: overwrite replaces only a file with a file, and this is a folder.`, m.Path),
		fmt.Sprintf(`переместить «%s» нельзя: overwrite заменяет только файл файлом, а это папка.`, m.Path))
}

// FolderNotEmpty is a delete of a folder with something in it.
type FolderNotEmpty struct{ Path string }

func (m FolderNotEmpty) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`delete %q: the folder is not empty. Set recursive to delete it with everything inside.`, m.Path),
		fmt.Sprintf(`удалить «%s» нельзя: папка не пуста. Задайте recursive, чтобы удалить её со всем содержимым.`, m.Path))
}

// MoveIntoSelf is a move of a folder into itself.
type MoveIntoSelf struct{ Path string }

func (m MoveIntoSelf) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`move %q into itself is impossible.`, m.Path),
		fmt.Sprintf(`переместить «%s» внутрь самого себя нельзя.`, m.Path))
}

// SamePath is a move whose source and destination are one path.
type SamePath struct{ Path string }

func (m SamePath) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`move: source and destination are the same path %q.`, m.Path),
		fmt.Sprintf(`переместить нельзя: источник и назначение совпадают — «%s».`, m.Path))
}

// ChangedMeantime is a path that changed between the plan and the run.
type ChangedMeantime struct{ Path string }

func (m ChangedMeantime) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`%q changed while the call ran; nothing was done. Try again.`, m.Path),
		fmt.Sprintf(`«%s» изменился во время вызова; ничего не сделано. Повторите.`, m.Path))
}

// TooManyEntries is a folder too big to judge path by path: a move,
// delete or mode change of a folder is judged on every path it holds, and
// the folders of one call may cover at most Max paths together ([bash]
// max_changed_files).
type TooManyEntries struct {
	Path string
	Max  int
}

func (m TooManyEntries) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`%q holds more paths than one call may cover (%d, [bash] max_changed_files): a folder is judged on every path inside it, so nothing was done. Act on a part of it at a time.`, m.Path, m.Max),
		fmt.Sprintf(`в «%s» больше путей, чем может затронуть один вызов (%d, [bash] max_changed_files): папка проверяется по каждому пути внутри, поэтому ничего не сделано. Работайте с частью папки за раз.`, m.Path, m.Max))
}

// OutsideVault is a path a file tool can't reach: it is not in the vault.
type OutsideVault struct{ Path string }

func (m OutsideVault) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`%q is outside the vault.`, m.Path), fmt.Sprintf(`«%s» вне хранилища.`, m.Path))
}

// ReadCut ends a read without limit that stopped before the end of the
// file: lines From..To were shown (To cut short when LineCut), and Next is
// the offset to read on from.
type ReadCut struct {
	Path           string
	From, To, Next int
	Shown, Size    int64
	LineCut        bool
}

func (m ReadCut) Text(l Lang) string {
	cutEn, cutRu := "", ""
	if m.LineCut {
		cutEn = fmt.Sprintf(`; line %d is longer than that and was cut`, m.To)
		cutRu = fmt.Sprintf(`; строка %d длиннее и обрезана`, m.To)
	}
	return l.pick(
		fmt.Sprintf(`[vaultgate: shown lines %d–%d of %q, %d of its %d bytes%s. Read on with {"path": %q, "offset": %d, "limit": 2000}; a limit of your own reads more at once.]`,
			m.From, m.To, m.Path, m.Shown, m.Size, cutEn, m.Path, m.Next),
		fmt.Sprintf(`[vaultgate: показаны строки %d–%d файла «%s», %d из %d байт%s. Дальше: {"path": %q, "offset": %d, "limit": 2000}; свой limit читает больше за раз.]`,
			m.From, m.To, m.Path, m.Shown, m.Size, cutRu, m.Path, m.Next))
}

// MoreEntries ends a list that stopped at Max entries.
type MoreEntries struct{ Max int }

func (m MoreEntries) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`… more than %d entries; list a subfolder`, m.Max),
		fmt.Sprintf(`… больше %d записей; покажите вложенную папку`, m.Max))
}

// NoMatches is a search that found nothing.
type NoMatches struct{}

func (NoMatches) Text(l Lang) string { return l.pick(`No matches.`, `Совпадений нет.`) }

// EmptyFolder is a list of a folder with nothing in it.
type EmptyFolder struct{ Path string }

func (m EmptyFolder) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`%q is empty.`, m.Path), fmt.Sprintf(`«%s» пуста.`, m.Path))
}

// MoreResults ends a search that stopped at Max results.
type MoreResults struct{ Max int }

func (m MoreResults) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf(`(stopped at %d results; narrow the search, or raise max_results)`, m.Max),
		fmt.Sprintf(`(остановлено на %d результатах; сузьте поиск или увеличьте max_results)`, m.Max))
}

// Wrote is a write's result.
type Wrote struct {
	Bytes int
	Path  string
}

func (m Wrote) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`Wrote %d bytes to %q.`, m.Bytes, m.Path), fmt.Sprintf(`Записано %d байт в «%s».`, m.Bytes, m.Path))
}

// Edited is an edit's result.
type Edited struct {
	Count int
	Path  string
}

func (m Edited) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`Replaced %d occurrence(s) in %q.`, m.Count, m.Path), fmt.Sprintf(`Заменено вхождений: %d в «%s».`, m.Count, m.Path))
}

// Moved is a move's result.
type Moved struct{ From, To string }

func (m Moved) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`Moved %q to %q.`, m.From, m.To), fmt.Sprintf(`«%s» перемещён в «%s».`, m.From, m.To))
}

// Deleted is a delete's result.
type Deleted struct{ Path string }

func (m Deleted) Text(l Lang) string {
	return l.pick(fmt.Sprintf(`Deleted %q.`, m.Path), fmt.Sprintf(`«%s» удалён.`, m.Path))
}
