//go:build !linux

package vaultfs

// NoFollowFs is RootFs off Linux: os.Root keeps every name inside the
// vault, but it follows symlinks inside it, so a folder swapped for a link
// between the judgement and the operation can redirect the operation
// within the vault. Only the Linux build walks without following.
type NoFollowFs = RootFs

// Open opens dir as the root of a NoFollowFs.
func Open(dir string) (*NoFollowFs, error) { return OpenRootFs(dir) }
