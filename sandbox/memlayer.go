package sandbox

import "fmt"

// The in-memory layer's tmpfs is sized so that a call within its caps
// never fills it, and one past them does: every entry of the upper layer
// counts against MaxFiles and its bytes against MaxBytes (txn.Diff), and
// tmpfs rounds each file up to a page.
const (
	memPage       = 4096
	memByteSlack  = 1 << 20 // beyond the caps and the rounding: room a call within its caps never uses
	memInodeSlack = 64      // the tmpfs root, upper, work, overlayfs's own folders in work
)

// tmpfsSize is the tmpfs's size= in bytes.
func (m MemoryLayer) tmpfsSize() int64 {
	return m.MaxBytes + (m.MaxFiles+memInodeSlack)*memPage + memByteSlack
}

// tmpfsInodes is its nr_inodes=: twice the cap, since a file's xattrs
// (overlayfs's origin records) are counted in the same inode space on
// Linux 6.6 and later.
func (m MemoryLayer) tmpfsInodes() int64 { return 2*m.MaxFiles + memInodeSlack }

func (m MemoryLayer) tmpfsOptions() string {
	return fmt.Sprintf("mode=0700,size=%d,nr_inodes=%d", m.tmpfsSize(), m.tmpfsInodes())
}
