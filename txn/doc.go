// Package txn makes a walled bash call a transaction on the vault.
//
// The command runs on an overlay whose lower layer is the vault, read-only, and whose
// upper layer is a fresh [Layer] in the state folder. When the command has ended, [Diff]
// reads the upper layer without following links and says what really changed, as
// [Change] values that the caller judges with the same rules as every other call; only
// if every change is allowed does [Commit] apply them to the vault, journalled so that a
// crash leaves a commit finished or undone at the next start ([Sweep]).
//
// [Begin] takes a call's start from the file system's own clock before its command runs;
// [Commit] refuses the whole list (a [ConflictError]) if anything it would change in the
// vault changed at or after that start, and never for a change made before it.
//
// The package never decides whether a change is allowed, and it must not import the
// tools, server or policy packages: it reports, the caller judges. Reading the upper
// layer fails closed: what it cannot classify exactly is an error or a change the caller
// must judge, never silently nothing.
package txn
