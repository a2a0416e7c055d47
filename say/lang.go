package say

import "fmt"

// Lang is the language a text is worded in: an agent's `lang` in the config.
// The zero Lang is English.
type Lang string

// The languages of the catalogue.
const (
	English Lang = "en"
	Russian Lang = "ru"
)

// Langs lists every language each message is written in.
var Langs = []Lang{English, Russian}

// ParseLang reads a config's lang.
func ParseLang(s string) (Lang, error) {
	switch l := Lang(s); l {
	case English, Russian:
		return l, nil
	}
	return "", fmt.Errorf("%q: must be \"en\" or \"ru\"", s)
}

// Message is a text for the model or a person, in either language.
type Message interface {
	Text(Lang) string
}

// pick is the one place a language chooses between the two wordings.
func (l Lang) pick(en, ru string) string {
	if l == Russian {
		return ru
	}
	return en
}
