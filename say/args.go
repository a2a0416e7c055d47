package say

import "fmt"

// BadArg is a malformed call: argument Arg of Tool has Problem. Arg is ""
// when the arguments as a whole are wrong.
type BadArg struct {
	Tool, Arg string
	Problem   ArgProblem
}

func (m BadArg) Text(l Lang) string {
	p := m.Problem.Text(l)
	if m.Arg == "" {
		return fmt.Sprintf("%s: %s", m.Tool, p)
	}
	return l.pick(fmt.Sprintf("%s: argument %q %s", m.Tool, m.Arg, p), fmt.Sprintf("%s: аргумент %q %s", m.Tool, m.Arg, p))
}

// ArgProblem is what is wrong with an argument, worded to follow
// `argument "x"`.
type ArgProblem interface {
	Message
	argProblem()
}

// ArgsNotObject is arguments that are not a JSON object.
type ArgsNotObject struct{}

// ArgUnknown is an argument the tool does not take.
type ArgUnknown struct{}

// ArgRequired is a required argument that is missing.
type ArgRequired struct{}

// ArgNotString is an argument that must be a string.
type ArgNotString struct{}

// ArgNotBool is an argument that must be true or false.
type ArgNotBool struct{}

// ArgNotWhole is an argument that must be a whole number.
type ArgNotWhole struct{}

// ArgEmpty is an argument that must not be empty.
type ArgEmpty struct{}

// ArgEmptyPath is a path argument that is empty.
type ArgEmptyPath struct{}

// ArgNUL is a path argument with a NUL byte in it.
type ArgNUL struct{}

// ArgBadPath is a path argument that can't be made a vault path, for a
// reason Problem tells.
type ArgBadPath struct{ Problem string }

// ArgHomeUnknown is a path of Claude Code's starting with ~ when the hook
// does not know Claude Code's home, where ~ leads.
type ArgHomeUnknown struct{}

// ArgNegative is a number that must not be negative.
type ArgNegative struct{}

// ArgRange is a number outside Min..Max.
type ArgRange struct{ Min, Max int }

// ArgSecondsRange is a duration outside Min..Max seconds.
type ArgSecondsRange struct{ Min, Max int }

// ArgSameAs is an argument equal to Other, so the call would change nothing.
type ArgSameAs struct{ Other string }

// ArgBadRegex is a regular expression that does not compile.
type ArgBadRegex struct{ Problem string }

// ArgBadPattern is a glob that is not a valid pattern.
type ArgBadPattern struct{}

func (ArgsNotObject) Text(l Lang) string {
	return l.pick("arguments must be a JSON object", "аргументы должны быть объектом JSON")
}
func (ArgUnknown) Text(l Lang) string {
	return l.pick("is not an argument of this tool", "— не аргумент этого инструмента")
}
func (ArgRequired) Text(l Lang) string { return l.pick("is required", "обязателен") }
func (ArgNotString) Text(l Lang) string {
	return l.pick("must be a string", "должен быть строкой")
}
func (ArgNotBool) Text(l Lang) string {
	return l.pick("must be true or false", "должен быть true или false")
}
func (ArgNotWhole) Text(l Lang) string {
	return l.pick("must be a whole number", "должен быть целым числом")
}
func (ArgEmpty) Text(l Lang) string {
	return l.pick("must not be empty", "не может быть пустым")
}
func (ArgEmptyPath) Text(l Lang) string {
	return l.pick("is an empty path; give a path relative to the vault root", "— пустой путь; укажите путь от корня хранилища")
}
func (ArgNUL) Text(l Lang) string {
	return l.pick("contains a NUL byte", "содержит байт NUL")
}
func (m ArgBadPath) Text(l Lang) string {
	return l.pick("is not a usable path ("+m.Problem+")", "— негодный путь ("+m.Problem+")")
}
func (ArgHomeUnknown) Text(l Lang) string {
	return l.pick("starts with ~, and Claude Code's home folder, where ~ leads, is not known here (its hook was started without an absolute HOME); give the path without ~",
		"начинается с ~, а домашняя папка Claude Code, куда ведёт ~, здесь неизвестна (его хук запущен без абсолютного HOME); укажите путь без ~")
}
func (ArgNegative) Text(l Lang) string {
	return l.pick("must not be negative", "не может быть отрицательным")
}
func (m ArgRange) Text(l Lang) string {
	return l.pick(fmt.Sprintf("must be between %d and %d", m.Min, m.Max), fmt.Sprintf("должен быть от %d до %d", m.Min, m.Max))
}
func (m ArgSecondsRange) Text(l Lang) string {
	return l.pick(fmt.Sprintf("must be between %d and %d seconds", m.Min, m.Max), fmt.Sprintf("должен быть от %d до %d секунд", m.Min, m.Max))
}
func (m ArgSameAs) Text(l Lang) string {
	return l.pick(
		fmt.Sprintf("is the same as %s: nothing would change", m.Other),
		fmt.Sprintf("совпадает с %s: ничего бы не изменилось", m.Other))
}
func (m ArgBadRegex) Text(l Lang) string {
	return l.pick(
		"is not a valid regular expression: "+m.Problem,
		"— неверное регулярное выражение: "+m.Problem)
}
func (ArgBadPattern) Text(l Lang) string {
	return l.pick("is not a valid pattern", "— неверная маска")
}

func (ArgsNotObject) argProblem()   {}
func (ArgUnknown) argProblem()      {}
func (ArgRequired) argProblem()     {}
func (ArgNotString) argProblem()    {}
func (ArgNotBool) argProblem()      {}
func (ArgNotWhole) argProblem()     {}
func (ArgEmpty) argProblem()        {}
func (ArgEmptyPath) argProblem()    {}
func (ArgNUL) argProblem()          {}
func (ArgBadPath) argProblem()      {}
func (ArgHomeUnknown) argProblem()  {}
func (ArgNegative) argProblem()     {}
func (ArgRange) argProblem()        {}
func (ArgSecondsRange) argProblem() {}
func (ArgSameAs) argProblem()       {}
func (ArgBadRegex) argProblem()     {}
func (ArgBadPattern) argProblem()   {}
