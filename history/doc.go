// Package history keeps what the vault held before and after each change
// vaultgate makes, durably, so that the person can see it (diff) and take it
// back (undo).
//
// The store lives in the state folder (<state>/history), never in the vault
// and never in the user's .git: the state folder is a hidden control path
// for every tool and for bash. A call's changes are one Entry per changed
// path, keyed by the call's audit id; content is kept by its sha256, each
// body once. Both go first into a log written in place (log.go), which is
// sealed into packs (pack.go); a body too big for a log record is a blob
// file of its own.
//
// A pre-image is on disk before the change is applied: Begin returns only
// once its record is flushed, and an error means the caller must not
// change anything (fail closed). A change may be write-ahead (writeahead.go):
// its new content goes into the same record, and RollForward puts it in
// place if a crash lost the vault's unflushed copy. The package never decides
// what may change; it records and restores what it is told to.
package history
