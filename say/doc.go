// Package say is vaultgate's message catalogue: every text the model or a
// person reads, in English and Russian side by side.
//
// A message is a struct whose named fields are the facts it tells, and whose
// Text method words them in a Lang. A message that does not exist, or a fact
// it lacks, is a compile error, not a printed key; say_test.go renders every
// message in every language and fails on an empty, half-formatted or
// untranslated text.
//
// The package holds words only: it decides nothing, does no I/O, and imports
// nothing of vaultgate but zones (for ops and zone kinds).
package say
