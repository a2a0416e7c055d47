// Package vaultfs is the file system through which vaultgate's own code
// reaches a vault's files, and the only one: an afero.Fs confined to the
// vault's root folder that never follows a link out of it.
//
// On Linux that is NoFollowFs (Open): every name is walked from the
// root's descriptor with openat2 (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS),
// or one O_NOFOLLOW openat per component where openat2 is missing, so a
// link met anywhere in a name is an error, never a detour, even when a
// folder is swapped for one between a planner's judgement and the
// operation. Elsewhere NoFollowFs is RootFs, over an os.Root, which keeps
// every name inside the vault but follows links within it.
//
// Beyond afero.Fs a file system may have capabilities, which the tools
// discover by type assertion and do without where one is missing (as on
// afero.MemMapFs in unit tests): NoReplaceRenamer, Pinner (and PinnedFs),
// UnnamedCreator (and UnnamedFile), LinkFreeChecker. OpenReader opens a
// file for reading by its bare descriptor where the file system gives one.
//
// It never follows a symlink out of the root, never takes an absolute or
// ".." name (a name is clean and vault-relative, or refused before any
// system call), and never decides a zone: it does what it is told, within
// the vault, after the caller's chain has judged it.
package vaultfs
