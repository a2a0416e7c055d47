package say

import "fmt"

// The tools' documentation as the model reads it in tools/list: titles,
// descriptions, and what each parameter means.

// Doc is a fixed text of a tool's documentation.
type Doc struct {
	en, ru string
}

func (m Doc) Text(l Lang) string { return l.pick(m.en, m.ru) }

// The file tools.
var (
	PathParamDoc = Doc{"Path of the file, relative to the vault root (or absolute inside the vault).",
		"Путь к файлу от корня хранилища (или абсолютный путь внутри хранилища)."}

	ReadTitle = Doc{"Read a note", "Прочитать заметку"}
	ReadDoc   = Doc{"Read a text file in the vault. Without limit it returns at most 2,000 lines or 40 KB, whichever comes first (a short file whole, exactly), and ends a longer one with a note saying how to read on with offset and limit. Reading a file is also what allows a later write or edit of it.",
		"Прочитать текстовый файл хранилища. Без limit возвращает не больше 2000 строк или 40 КБ, что наступит раньше (короткий файл целиком, в точности), а длинный завершает заметкой, как читать дальше через offset и limit. Чтение файла также разрешает потом перезаписать или изменить его."}
	ReadOffsetDoc = Doc{"First line to return, 1-based.", "Первая возвращаемая строка, считая с 1."}
	ReadLimitDoc  = Doc{"How many lines to return (up to 10 MiB of text); without it at most 2,000 lines or 40 KB.", "Сколько строк вернуть (до 10 МиБ текста); без него не больше 2000 строк или 40 КБ."}

	WriteTitle = Doc{"Write a note", "Записать заметку"}
	WriteDoc   = Doc{"Create a file, or replace an existing file's whole content (read it first). Missing parent folders are created. The write is atomic: the file is either the old one or the new one, never half of one.",
		"Создать файл или заменить всё содержимое существующего (сначала прочитайте его). Недостающие родительские папки создаются. Запись атомарна: файл либо старый, либо новый, но никогда не наполовину."}
	WriteContentDoc = Doc{"The file's full new content.", "Всё новое содержимое файла."}

	EditTitle = Doc{"Edit a note", "Изменить заметку"}
	EditDoc   = Doc{"Replace old_string with new_string in an existing file (read it first). old_string must occur exactly once, unless replace_all is set.",
		"Заменить old_string на new_string в существующем файле (сначала прочитайте его). old_string должен встречаться ровно один раз, если не задан replace_all."}
	EditOldDoc        = Doc{"The exact text to replace, whitespace included.", "Точный заменяемый текст, с пробелами."}
	EditNewDoc        = Doc{"The text to put in its place.", "Текст, который встанет на его место."}
	EditReplaceAllDoc = Doc{"Replace every occurrence instead of exactly one.", "Заменить все вхождения, а не ровно одно."}

	MoveTitle = Doc{"Move or rename", "Переместить или переименовать"}
	MoveDoc   = Doc{"Move or rename a file or folder. Give the full destination path, including the name. It never merges or replaces folders; with overwrite it may replace an existing file.",
		"Переместить или переименовать файл или папку. Укажите полный путь назначения вместе с именем. Папки никогда не сливаются и не заменяются; с overwrite можно заменить существующий файл."}
	MoveSourceDoc    = Doc{"What to move.", "Что переместить."}
	MoveDestDoc      = Doc{"The full new path.", "Полный новый путь."}
	MoveOverwriteDoc = Doc{"Replace an existing file at the destination.", "Заменить существующий файл в месте назначения."}

	DeleteTitle = Doc{"Delete", "Удалить"}
	DeleteDoc   = Doc{"Delete a file, an empty folder, or (with recursive) a folder with everything inside. Allowed only in write zones.",
		"Удалить файл, пустую папку или (с recursive) папку со всем содержимым. Можно только в зонах write."}
	DeleteRecursiveDoc = Doc{"Delete a folder with everything inside it.", "Удалить папку со всем её содержимым."}

	ListTitle = Doc{"List a folder", "Показать папку"}
	ListDoc   = Doc{"List a folder of the vault with each entry's zone (what may be done there). Hidden paths are not shown.",
		"Показать содержимое папки хранилища с зоной каждой записи (что там можно делать). Скрытые пути не показываются."}
	ListPathDoc = Doc{"Folder to list; the vault root by default.", "Какую папку показать; по умолчанию корень хранилища."}

	SearchTitle = Doc{"Search notes", "Искать в заметках"}
	SearchDoc   = Doc{"Search text files for a string (or a regular expression), returning path:line: text for each match. Binary files and hidden paths are skipped.",
		"Искать строку (или регулярное выражение) в текстовых файлах; для каждого совпадения возвращается путь:строка: текст. Двоичные файлы и скрытые пути пропускаются."}
	SearchQueryDoc = Doc{"The text to find (case-sensitive), or a Go regular expression when regex is set.",
		"Искомый текст (с учётом регистра) или регулярное выражение Go, если задан regex."}
	SearchPathDoc  = Doc{"Folder (or file) to search; the vault root by default.", "Где искать: папка (или файл); по умолчанию корень хранилища."}
	SearchRegexDoc = Doc{"Treat query as a regular expression (RE2 syntax; (?i) for case-insensitive).",
		"Считать query регулярным выражением (синтаксис RE2; (?i) — без учёта регистра)."}
	SearchGlobDoc = Doc{"Only files whose name (or, if it has a /, whose path) matches this pattern, e.g. *.md.",
		"Только файлы, чьё имя (или путь, если в маске есть /) подходит под эту маску, например *.md."}

	BashTitle = Doc{"Run a shell command", "Выполнить команду оболочки"}
	BashDoc   = Doc{"Run a bash command in the vault root. Before it runs, every path the command would touch is found and checked against the zones; " +
		"commands vaultgate can't analyse are refused unless the OS wall is up. Removing or renaming with bash is allowed only in write zones " +
		"(use the move, edit and delete tools elsewhere). Returns the exit code, stdout and stderr.",
		"Выполнить команду bash в корне хранилища. До запуска находится каждый путь, который затронет команда, и проверяется по зонам; " +
			"команды, которые vaultgate не может разобрать, запрещены, если не поднята защитная стенка ОС. Удалять и переименовывать через bash можно только в зонах write " +
			"(в других зонах используйте инструменты move, edit и delete). Возвращает код выхода, stdout и stderr."}
	// BashTxnDoc is BashDoc where the command runs on the overlay.
	BashTxnDoc = Doc{"Run a bash command in the vault root. Before it runs, every path the command would touch is found and checked against the zones; " +
		"programs vaultgate can't analyse run inside the OS wall. The command works on a copy of the vault: when it has ended, what it really changed " +
		"is checked against the zones, and only if every change is allowed are they all applied; otherwise none is, and the result names each refused change. " +
		"Returns the exit code, stdout and stderr.",
		"Выполнить команду bash в корне хранилища. До запуска находится каждый путь, который затронет команда, и проверяется по зонам; " +
			"программы, которые vaultgate не может разобрать, выполняются внутри защитной стенки ОС. Команда работает с копией хранилища: после её завершения " +
			"то, что она действительно изменила, проверяется по зонам, и только если разрешено каждое изменение, применяются все; иначе не применяется ни одно, " +
			"а результат называет каждое запрещённое изменение. Возвращает код выхода, stdout и stderr."}
	BashCommandDoc = Doc{"The bash command.", "Команда bash."}
)

// ListDepthDoc documents list's depth, at most Max.
type ListDepthDoc struct{ Max int }

func (m ListDepthDoc) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("How many levels deep to go (1 = the folder's own entries; at most %d).", m.Max),
		fmt.Sprintf("На сколько уровней вглубь идти (1 — только записи самой папки; не больше %d).", m.Max))
}

// SearchMaxDoc documents search's max_results.
type SearchMaxDoc struct{ Default, Max int }

func (m SearchMaxDoc) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("Stop after this many matches (default %d, at most %d).", m.Default, m.Max),
		fmt.Sprintf("Остановиться после стольких совпадений (по умолчанию %d, не больше %d).", m.Default, m.Max))
}

// BashTimeoutDoc documents bash's timeout, in seconds.
type BashTimeoutDoc struct{ Default, Max int }

func (m BashTimeoutDoc) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("Seconds before every process of the call is ended (default %d, at most %d).", m.Default, m.Max),
		fmt.Sprintf("Через сколько секунд завершаются все процессы вызова (по умолчанию %d, не больше %d).", m.Default, m.Max))
}
