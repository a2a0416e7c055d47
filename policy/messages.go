package policy

import (
	"fmt"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// The message catalogue: every reason the model reads, English and Russian
// side by side. Reasons say what was refused, why, and where it would be
// allowed, so the model can go there instead of trying again.
var catalogue = map[string][2]string{
	// %[1]s op phrase, %[2]s path, %[3]s zone, %[4]s what the zone allows, %[5]s where it is allowed
	"zone": {
		`%[1]s %[2]q: zone %[3]s (%[4]s). %[5]s`,
		`%[1]s «%[2]s» нельзя: зона %[3]s (%[4]s). %[5]s`,
	},
	"noZone": {
		`%[1]s %[2]q: the path is in no zone, so nothing is allowed there. %[5]s`,
		`%[1]s «%[2]s» нельзя: путь не входит ни в одну зону, там ничего нельзя. %[5]s`,
	},
	"outside": {
		`%[1]s %[2]q: the path is outside the vault. Work inside the vault (paths relative to its root). %[5]s`,
		`%[1]s «%[2]s» нельзя: путь вне хранилища. Работайте внутри хранилища (пути от его корня). %[5]s`,
	},
	// %[6]s the path inside the subtree that stops it
	"subtree": {
		`%[1]s %[2]q with everything inside it: %[6]q inside it is in zone %[3]s (%[4]s). %[5]s`,
		`%[1]s «%[2]s» со всем содержимым нельзя: «%[6]s» внутри — в зоне %[3]s (%[4]s). %[5]s`,
	},
	// a hidden or no-zone path is never named: the model must not learn
	// even where hidden folders are
	"subtreeHidden": {
		`%[1]s %[2]q with everything inside it: some paths inside it are hidden from you. Act on the files and folders you can list instead. %[5]s`,
		`%[1]s «%[2]s» со всем содержимым нельзя: часть путей внутри скрыта от вас. Действуйте с файлами и папками, которые видны в списке. %[5]s`,
	},
	"anchor": {
		`%[1]s %[2]q: it is the root of a zone named in the config, so it can't be deleted or moved. Act on the files inside it instead.`,
		`%[1]s «%[2]s» нельзя: это корень зоны из конфигурации, его нельзя удалить или переместить. Действуйте с файлами внутри.`,
	},
	"anchorInside": {
		`%[1]s %[2]q with everything inside it: %[6]q inside it is the root of a zone named in the config, and can't be deleted or moved.`,
		`%[1]s «%[2]s» со всем содержимым нельзя: «%[6]s» внутри — корень зоны из конфигурации, его нельзя удалить или переместить.`,
	},
	// %[3]s source zone, %[4]s destination zone, %[6]s source path
	"launder": {
		`move %[6]q to %[2]q: the content would go from zone %[3]s to zone %[4]s, where it could be deleted or changed more freely. Move it only into zones no more permissive than %[3]s.`,
		`переместить «%[6]s» в «%[2]s» нельзя: содержимое перешло бы из зоны %[3]s в зону %[4]s, где его можно удалять или менять свободнее. Перемещайте только в зоны не свободнее %[3]s.`,
	},
	"linkSource": {
		`hard-link %[6]q as %[2]q: a hard link is allowed only when the linked file is in a write zone too; %[6]q is in zone %[3]s.`,
		`создать жёсткую ссылку «%[2]s» на «%[6]s» нельзя: это можно, только если сам файл тоже в зоне write; «%[6]s» — в зоне %[3]s.`,
	},
	// %[3]s number of links
	"hardLinks": {
		`%[1]s %[2]q: the file has %[3]s hard links, and its other names may lie in other zones, so vaultgate never changes or deletes it. Write a new file instead.`,
		`%[1]s «%[2]s» нельзя: у файла %[3]s жёстких ссылок, другие его имена могут лежать в других зонах, поэтому vaultgate его не меняет и не удаляет. Создайте новый файл.`,
	},
	// %[3]s symlink target
	"symlink": {
		`%[1]s %[2]q: it is a symbolic link to %[3]q. Write to %[3]q itself.`,
		`%[1]s «%[2]s» нельзя: это символическая ссылка на «%[3]s». Пишите в сам «%[3]s».`,
	},
	"unknownPath": {
		`%[1]s a path that is only known when the command runs (in %[7]q): vaultgate can't check it, so it is refused. Write the path out literally.`,
		`%[1]s путь, известный только при выполнении (в %[7]q), нельзя: vaultgate не может его проверить. Напишите путь явно.`,
	},
	"unconfinedRun": {
		`run %[1]q: vaultgate can't know what it would touch, and nothing holds it to the zones, so it is refused.`,
		`запустить %[1]q нельзя: vaultgate не может знать, что она затронет, и ничто не удержит её в зонах.`,
	},
	"readFirst": {
		`%[1]s %[2]q: the file exists and has not been read in this session, or has changed since it was read. Read it with the read tool first, then try again.`,
		`%[1]s «%[2]s» нельзя: файл существует, но не был прочитан в этой сессии или изменился после чтения. Сначала прочитайте его инструментом read, затем повторите.`,
	},
	"ruleFailed": {
		`refused: the check %[1]q failed (%[2]s), and a failed check refuses.`,
		`отказано: проверка %[1]q сломалась (%[2]s), а сломанная проверка запрещает.`,
	},
	"allowedIn":      {"%s is allowed in: %s.", "%s можно в: %s."},
	"allowedNowhere": {"%s is allowed nowhere in this vault.", "%s нельзя нигде в этом хранилище."},
}

// opPhrase is the verb at the start of a reason: "delete", «удалить».
var opPhrase = map[zones.Op][2]string{
	zones.OpRead:    {"read", "прочитать"},
	zones.OpCreate:  {"create", "создать"},
	zones.OpModify:  {"change", "изменить"},
	zones.OpDelete:  {"delete", "удалить"},
	zones.OpMoveOut: {"move", "переместить"},
	zones.OpMoveIn:  {"move into", "переместить в"},
	zones.OpLink:    {"hard-link", "создать жёсткую ссылку"},
	zones.OpExec:    {"run", "запустить"},
}

// opGerund names the act in "… is allowed in": "Deleting", «Удалять».
var opGerund = map[zones.Op][2]string{
	zones.OpRead:    {"Reading", "Читать"},
	zones.OpCreate:  {"Creating", "Создавать"},
	zones.OpModify:  {"Changing existing files", "Менять существующие файлы"},
	zones.OpDelete:  {"Deleting", "Удалять"},
	zones.OpMoveOut: {"Moving files out", "Перемещать файлы оттуда"},
	zones.OpMoveIn:  {"Moving files in", "Перемещать файлы туда"},
	zones.OpLink:    {"Hard-linking", "Создавать жёсткие ссылки"},
	zones.OpExec:    {"Running programs", "Запускать программы"},
}

func langIndex(lang string) int {
	if lang == "ru" {
		return 1
	}
	return 0
}

func msg(lang, key string, args ...any) string {
	m, ok := catalogue[key]
	if !ok {
		return key
	}
	return fmt.Sprintf(m[langIndex(lang)], args...)
}

// Phrase returns the catalogue text under key in lang; other packages (tool
// errors, the tools' own rules) add their own keys with Register.
func Phrase(lang, key string, args ...any) string { return msg(lang, key, args...) }

// Register adds messages to the catalogue at init time.
func Register(key, en, ru string) { catalogue[key] = [2]string{en, ru} }

// OpPhrase returns the op's verb in lang.
func OpPhrase(lang string, op zones.Op) string { return opPhrase[op][langIndex(lang)] }

// ModeAllows returns what the mode allows, in lang: the kind's own words.
func ModeAllows(lang string, m zones.Mode) string { return m.Describe(lang) }

// where is the sentence that tells the model where op is allowed.
func where(lang string, t *zones.Table, op zones.Op) string {
	if t == nil {
		return ""
	}
	list := t.Where(op)
	g := opGerund[op][langIndex(lang)]
	if len(list) == 0 {
		return msg(lang, "allowedNowhere", g)
	}
	names := make([]string, len(list))
	for i, p := range list {
		if p == "." {
			if lang == "ru" {
				p = "всё хранилище (.)"
			} else {
				p = "the whole vault (.)"
			}
		}
		names[i] = p
	}
	return msg(lang, "allowedIn", g, strings.Join(names, ", "))
}
