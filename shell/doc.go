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
// never read more of the file system than Options.Stat, Options.Readlink and
// Options.ReadDir give it. It walks every path itself, link by link, as the
// kernel will when the command runs (paths.go).
//
// The files, by job:
//
//   - walk.go walks the tree: statements, control flow, pipelines,
//     redirects, and the state the walk carries (variables, functions,
//     descriptors); word.go expands words into fields.
//   - paths.go is the path and link model: a field to the path it names,
//     the links and unknown subtrees the command itself makes, and the only
//     helpers that emit a path effect.
//   - call.go dispatches a command: functions, privilege, the table.
//   - table.go is the table: one spec per command, saying which options it
//     knows, what each does, and what it does to each operand. spec.go is
//     the interpreter of a spec; transfer.go holds what commands with
//     sources and a destination (mv, cp, install, ln, rsync) do to each
//     pair; hooks.go the parts that are not options and operands (sed
//     scripts, find expressions, tar modes, dd operands, env, xargs);
//     builtins.go the builtins that change what the analysis knows (cd,
//     set, read, eval, bash -c…).
//
// A new command is one spec in table.go (and a hook in hooks.go only if it
// has syntax that options and operands can't describe), plus its cases in
// the corpus, testdata/bash-corpus.txt at the repository root.
package shell
