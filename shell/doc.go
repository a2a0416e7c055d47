// Package shell turns a bash command into the effects it would have on the
// file system, before anything runs.
//
// [Analyze] parses the command with mvdan.cc/sh/v3/syntax (bash dialect) and
// walks the whole tree: every statement, substitution, redirect and nested
// script (bash -c, eval, heredocs fed to a shell). Each command is looked up in
// a table that says which arguments are paths and what is done to them. The
// result is a list of [Effect] values, in source order, for the zone rules to
// judge, or a [*Refusal] for a command that is denied outright.
//
// The analysis is deny by default. A command or option the table does not
// know becomes an OpExec effect (runs only under the wall); a word whose value
// cannot be known statically in a path position becomes an Unknown path. The
// package must never run anything, never guess a value it cannot see, and
// never read more of the file system than Options.Stat and Options.Resolve
// give it.
package shell
