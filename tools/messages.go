package tools

import "github.com/vaultgate/vaultgate/say"

// failure is a call that was allowed and then failed; its text is for the
// model, in the agent's language.
type failure struct{ text string }

func (f *failure) Error() string { return f.text }

func (s *Set) fail(m say.Message) error { return &failure{text: m.Text(s.Lang)} }

func (s *Set) say(m say.Message) string { return m.Text(s.Lang) }
