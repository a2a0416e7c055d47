package say

import (
	"fmt"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// verb is an op at the start of a refusal: "delete", «удалить».
func verb(op zones.Op, l Lang) string {
	switch op {
	case zones.OpRead:
		return l.pick("read", "прочитать")
	case zones.OpCreate:
		return l.pick("create", "создать")
	case zones.OpModify:
		return l.pick("change", "изменить")
	case zones.OpDelete:
		return l.pick("delete", "удалить")
	case zones.OpMoveOut:
		return l.pick("move", "переместить")
	case zones.OpMoveIn:
		return l.pick("move into", "переместить в")
	case zones.OpLink:
		return l.pick("hard-link", "создать жёсткую ссылку")
	case zones.OpExec:
		return l.pick("run", "запустить")
	}
	return op.String()
}

// gerund names an op as an activity, in "… is allowed in": "Deleting", «Удалять».
func gerund(op zones.Op, l Lang) string {
	switch op {
	case zones.OpRead:
		return l.pick("Reading", "Читать")
	case zones.OpCreate:
		return l.pick("Creating", "Создавать")
	case zones.OpModify:
		return l.pick("Changing existing files", "Менять существующие файлы")
	case zones.OpDelete:
		return l.pick("Deleting", "Удалять")
	case zones.OpMoveOut:
		return l.pick("Moving files out", "Перемещать файлы оттуда")
	case zones.OpMoveIn:
		return l.pick("Moving files in", "Перемещать файлы туда")
	case zones.OpLink:
		return l.pick("Hard-linking", "Создавать жёсткие ссылки")
	case zones.OpExec:
		return l.pick("Running programs", "Запускать программы")
	}
	return op.String()
}

// ZoneAllows says in a few words what a zone of kind Mode allows: "read
// only", «только чтение». The words are the kind's own, from its entry in
// the zones' kind table, so a new kind brings them with it.
type ZoneAllows struct {
	Mode zones.Mode
}

func (m ZoneAllows) Text(l Lang) string { return m.Mode.Describe(string(l)) }

// Where is the sentence that tells the model where Op is allowed: in the
// zone roots of Areas ("." is the whole vault), each but for the folders
// inside it where Op is not, or nowhere when there are none. It ends a
// refusal, so the model can go there instead of retrying; naming what is
// excepted keeps "the whole vault" from reading as taking in the folder
// that was just refused.
type Where struct {
	Op    zones.Op
	Areas []zones.Area
}

func (m Where) Text(l Lang) string {
	g := gerund(m.Op, l)
	if len(m.Areas) == 0 {
		return l.pick(
			fmt.Sprintf("%s is allowed nowhere in this vault.", g),
			fmt.Sprintf("%s нельзя нигде в этом хранилище.", g))
	}
	names := make([]string, len(m.Areas))
	sep := ", "
	for i, a := range m.Areas {
		p := a.Path
		switch {
		case p == "." && len(a.Except) == 0:
			p = l.pick("the whole vault (.)", "всё хранилище (.)")
		case p == ".":
			p = l.pick("the vault (.)", "хранилище (.)")
		}
		if len(a.Except) > 0 {
			p += l.pick(" outside ", " вне ") + strings.Join(a.Except, ", ")
			sep = "; "
		}
		names[i] = p
	}
	list := strings.Join(names, sep)
	return l.pick(
		fmt.Sprintf("%s is allowed in: %s.", g, list),
		fmt.Sprintf("%s можно в: %s.", g, list))
}
