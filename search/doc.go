// Package search finds the lines of a note that the search tool's query
// matches: the same lines, in the same order, as matching every line one
// by one would find, only sooner.
//
// A query's literal part (found in the regexp's syntax tree) is looked for
// in whole blocks of the note first, and only a line that holds one is
// matched on its own. A case-insensitive literal is looked for as an
// ASCII-lowered copy of the block would hold it (its rarest byte in both
// cases, a candidate compared lowered, the block itself never copied),
// together with the non-ASCII runes that Go's case folding matches to its
// letters (the Kelvin sign K for k, ſ for s), so that nothing the regexp
// would match is skipped.
//
// The package reads only the reader it is given, and knows nothing of
// zones: which notes are searched is the caller's decision.
package search
