// Package watch keeps a vault's names known as they change, so that a
// call can ask what is in the vault now without walking it.
//
// A Tree watches every folder of the vault with inotify and tells its
// listeners of each name it finds or that appears, and of each that goes.
// It is never trusted blindly: Sync reads every event the kernel has
// queued before it returns, and the kernel queues an event before the
// system call that made it returns, so whatever changed the vault before
// Sync began — the agent's bash, a person's editor, a git clone, a rename
// into the vault — is known when Sync's reader runs. A folder that
// appears is watched first and read after, so nothing made in it between
// the two is missed.
//
// Where that can't hold the tree says so (Sync's error, and Status): an
// event queue that overflowed (the tree reads the whole vault again, that
// once), a watch limit too low for the vault's folders, or a file system
// that reports no changes made elsewhere (NFS, FUSE, SMB, 9p, virtiofs and
// any other not known to be local). Its callers then walk the vault
// themselves for that call.
package watch
