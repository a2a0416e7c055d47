// Package history keeps what the vault held before and after each change
// vaultgate makes, durably, so that the person can see it (diff) and take it
// back (undo).
//
// The store lives in the state folder (<state>/history), never in the vault
// and never in the user's .git: the state folder is a hidden control path
// for every tool and for bash. Content is kept by its sha256 (blobs/), each
// body once; a call's changes are one entry file named by the call's audit
// id (entries/<id>.json), one Entry per changed path.
//
// A pre-image is on disk (file, then folder, fsync'd) before the change is
// applied: Begin returns only once it is, and an error from Begin means the
// caller must not change anything (fail closed). The package never decides
// what may change; it records and restores what it is told to.
package history
