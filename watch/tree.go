package watch

import (
	"fmt"
	"strings"
)

// A Listener is told what a Tree finds in the vault and what goes from
// it. Its methods are called with the tree's lock held, one at a time,
// and read back under it (Tree.Sync's read), so a listener needs no lock
// of its own. rel is vault-relative, slash-separated and spelled as the
// disk spells it, and valid only during the call: a listener that keeps
// it keeps a copy (strings.Clone), so that reading a big vault makes no
// string for each of its files.
type Listener interface {
	// Seen is told of a name found or made, once or more: a folder before
	// what is in it.
	Seen(rel string, dir bool)
	// Gone is told of a name removed or moved away, with all it held.
	Gone(rel string)
	// Reset forgets everything: the whole vault is read again after it.
	Reset()
}

// Status is what a tree can say of itself.
type Status struct {
	Ready    bool   // the first reading of the vault has ended
	Exact    bool   // the listeners know the vault as it is
	Reason   string // why not, when not
	Folders  int    // folders watched
	Rebuilds int    // times the vault was read again after an overflow
}

// InexactError is Sync's answer where the tree can't know the vault
// exactly: the caller walks the vault itself.
type InexactError struct{ Reason string }

func (e *InexactError) Error() string { return "watch: the vault's index is not exact: " + e.Reason }

// folder is a watched folder of the vault.
type folder struct {
	rel      string
	wd       int32
	dev, ino uint64
	parent   *folder
	kids     map[string]*folder
}

// under reports whether rel is dir or lies inside it.
func under(rel, dir string) bool {
	return dir == "." || rel == dir || strings.HasPrefix(rel, dir+"/")
}

// join names name in dir: a name from a folder has no '/' and is never
// "." or "..", so there is nothing to clean, and one string is made.
func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// fsKind names a file system magic for a reason given to a person.
func fsKind(magic uint32) string {
	if n, ok := remoteNames[magic]; ok {
		return n
	}
	return fmt.Sprintf("file system type %#x", magic)
}

// remoteNames are file systems on which the kernel reports only the
// changes made through this machine's own view of them.
var remoteNames = map[uint32]string{
	0x6969:     "NFS",
	0x65735546: "FUSE",
	0xff534d42: "CIFS",
	0xfe534d42: "SMB2",
	0x517b:     "SMB",
	0x01021997: "9p",
	0x6a656a63: "virtiofs",
	0x73757245: "Coda",
	0x47504653: "GPFS",
	0x0bd00bd0: "Lustre",
	0x00c36400: "CephFS",
}

// localMagics are file systems where every change to a folder passes
// through this kernel, so inotify sees it.
var localMagics = map[uint32]bool{
	0xef53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683e: true, // btrfs
	0x01021994: true, // tmpfs
	0xf2f52010: true, // f2fs
	0x2fc12fc1: true, // zfs
	0xca451a4e: true, // bcachefs
	0x794c7630: true, // overlayfs: its layers change only through it
	0x3153464a: true, // jfs
	0x52654973: true, // reiserfs
	0x4d44:     true, // vfat
	0x2011bab0: true, // exfat
	0x5346544e: true, // ntfs (ntfs3)
	0x482b:     true, // hfsplus
	0x858458f6: true, // ramfs
}
