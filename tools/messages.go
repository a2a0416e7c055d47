package tools

import (
	"github.com/vaultgate/vaultgate/policy"
)

// Failures of allowed calls, for the model, in the catalogue's two languages.
func init() {
	for key, m := range map[string][2]string{
		"notFound":        {`%q does not exist.`, `«%s» не существует.`},
		"isFolder":        {`%q is a folder; use the list tool to see what is in it.`, `«%s» — папка; посмотрите её содержимое инструментом list.`},
		"notFolder":       {`%q is not a folder.`, `«%s» — не папка.`},
		"notText":         {`%q is not a text file (%d bytes); vaultgate reads text only.`, `«%s» — не текстовый файл (%d байт); vaultgate читает только текст.`},
		"tooBig":          {`%q is %d bytes, more than %d: read it in parts with offset and limit.`, `«%s» занимает %d байт, больше %d: читайте частями через offset и limit.`},
		"notRegular":      {`%q is not a regular file.`, `«%s» — не обычный файл.`},
		"editNone":        {`edit %q: old_string does not occur in the file. Read the file and copy the text exactly, whitespace included.`, `изменить «%s» нельзя: old_string в файле не найден. Прочитайте файл и скопируйте текст точно, с пробелами.`},
		"editMany":        {`edit %q: old_string occurs %d times. Give more surrounding text so that it occurs once, or set replace_all.`, `изменить «%s» нельзя: old_string встречается %d раз. Дайте больше окружающего текста, чтобы он встречался один раз, или задайте replace_all.`},
		"destExists":      {`move to %q: it exists. Give a new name, or set overwrite to replace a file.`, `переместить в «%s» нельзя: он уже существует. Дайте новое имя или задайте overwrite, чтобы заменить файл.`},
		"destFolder":      {`move to %q: it is an existing folder, and move never merges or replaces folders. Give the full destination path, including the new name.`, `переместить в «%s» нельзя: это существующая папка, а move не сливает и не заменяет папки. Укажите полный путь назначения с новым именем.`},
		"overwriteDir":    {`move %q: overwrite replaces only a file with a file, and this is a folder.`, `переместить «%s» нельзя: overwrite заменяет только файл файлом, а это папка.`},
		"notEmpty":        {`delete %q: the folder is not empty. Set recursive to delete it with everything inside.`, `удалить «%s» нельзя: папка не пуста. Задайте recursive, чтобы удалить её со всем содержимым.`},
		"moveIntoSelf":    {`move %q into itself is impossible.`, `переместить «%s» внутрь самого себя нельзя.`},
		"samePath":        {`move: source and destination are the same path %q.`, `переместить нельзя: источник и назначение совпадают — «%s».`},
		"badRegex":        {`search: the regular expression is invalid: %s`, `search: неверное регулярное выражение: %s`},
		"badGlob":         {`search: the glob %q is invalid.`, `search: неверная маска %q.`},
		"emptyString":     {`edit: old_string must not be empty; use write to create a file.`, `edit: old_string не может быть пустым; чтобы создать файл, используйте write.`},
		"sameString":      {`edit: old_string and new_string are the same, so nothing would change.`, `edit: old_string и new_string совпадают, ничего бы не изменилось.`},
		"changedMeantime": {`%q changed while the call ran; nothing was done. Try again.`, `«%s» изменился во время вызова; ничего не сделано. Повторите.`},
		"tooManyEntries":  {`%q holds more than %d entries, too many to check one by one; act on a smaller folder.`, `в «%s» больше %d записей — слишком много для проверки; работайте с папкой поменьше.`},
		"outsideVault":    {`%q is outside the vault.`, `«%s» вне хранилища.`},
		"noMatches":       {`No matches.`, `Совпадений нет.`},
		"emptyFolder":     {`%q is empty.`, `«%s» пуста.`},
		"moreResults":     {`(stopped at %d results; narrow the search, or raise max_results)`, `(остановлено на %d результатах; сузьте поиск или увеличьте max_results)`},
		"wrote":           {`Wrote %d bytes to %q.`, `Записано %d байт в «%s».`},
		"edited":          {`Replaced %d occurrence(s) in %q.`, `Заменено вхождений: %d в «%s».`},
		"moved":           {`Moved %q to %q.`, `«%s» перемещён в «%s».`},
		"deleted":         {`Deleted %q.`, `«%s» удалён.`},
	} {
		policy.Register("tools."+key, m[0], m[1])
	}
}

// failure is a call that was allowed and then failed; its text is for the model.
type failure struct{ text string }

func (f *failure) Error() string { return f.text }

func (s *Set) fail(key string, args ...any) error {
	return &failure{text: policy.Phrase(s.Lang, "tools."+key, args...)}
}

func (s *Set) say(key string, args ...any) string {
	return policy.Phrase(s.Lang, "tools."+key, args...)
}
