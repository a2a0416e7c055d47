// Package vaultid names a vault: a stable, random id kept in the state
// folder, which every audit line and every history entry carries, so that
// the history, diff, undo and the panel of one vault act on its records
// alone, even where several vaults share a state folder.
//
// The state folder holds a small registry, vaults.json: each vault's real
// path (symlinks resolved) and its id, 16 hex digits from crypto/rand. Open
// returns a vault's id, adding it on first use: under an flock of
// vaults.lock, the file written whole to a temporary name, flushed, and
// renamed over, so two processes opening at once agree on one id and a
// reader never sees half a file. A vault is known by its real path: moved
// within a shared state folder, it gets a new id, and what its old id
// recorded is no longer its own. `vaultgate init` gives each vault a state
// folder of its own, which avoids the sharing altogether.
//
// Records written before vaults were named carry no id. A Scope decides
// whose they are: this vault's only when the registry names this vault and
// no other (the state folder serves one vault, as it always did), no
// vault's otherwise.
//
// # What it must never do
//
// It never guesses: a registry it can't read or parse is an error, never
// an empty one, so a damaged registry can't make every record look like
// the caller's. It never writes anywhere but the state folder, never
// changes or removes an id it handed out, and never reads a vault.
package vaultid
