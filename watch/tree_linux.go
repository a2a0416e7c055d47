package watch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The names a folder's watch reports: those that make, remove and move
// names, never a write to a file, so a busy note can't fill the queue.
const folderEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// maxEventsPerSync bounds one Sync's reading: a vault changing faster
// than it can be followed is walked for that call instead.
const maxEventsPerSync = 1 << 20

// Tree is a vault's folders, watched. Open starts it; Sync brings its
// listeners up to date; Close stops it.
type Tree struct {
	root      string
	skip      func(name string) bool
	listeners []Listener
	ready     chan struct{}
	begin     sync.Once
	closing   atomic.Bool // Close was called: a reading stops

	mu        sync.Mutex
	ino       int // the inotify descriptor; -1 when there is none
	rootFd    int // the vault's folder, which every folder is opened beneath
	mounts    *os.File
	under     []string // mount points inside the vault, when last read
	mountsRaw []byte   // the mount table as last read
	top       *folder
	byWd      map[int32]*folder
	unread    map[string]bool // folders that could not be opened: tried at each Sync
	local     map[uint64]bool // devices found local
	broken    string          // why the tree can't be exact, for good
	rebuilds  int
	buf       []byte
	dents     []byte // a folder's entries, as read
	pathBuf   []byte // a path told to the listeners (childView)
}

// New makes the tree of the vault at root, which reads nothing until
// Start (or the first Sync). skip names folders not to look inside (their
// name is still told): what a listener needs nothing of below, such as
// .git. A tree never fails to be made: one that can't watch says why from
// Sync and Status, and its callers walk.
func New(root string, skip func(name string) bool, listeners ...Listener) *Tree {
	return &Tree{root: root, skip: skip, listeners: listeners, ready: make(chan struct{}), ino: -1, rootFd: -1, buf: make([]byte, 64<<10), dents: make([]byte, 64<<10)}
}

// Open is New, started.
func Open(root string, skip func(name string) bool, listeners ...Listener) *Tree {
	t := New(root, skip, listeners...)
	t.Start()
	return t
}

// Start begins the first reading of the vault, in the background, once;
// a Sync before it has ended waits for it.
func (t *Tree) Start() {
	t.begin.Do(func() {
		go func() {
			defer close(t.ready)
			// Read at the lowest CPU priority, on a thread of its own
			// that ends with it, so that the calls it runs beside are
			// not slowed by a big vault being read.
			runtime.LockOSThread()
			unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
			t.mu.Lock()
			defer t.mu.Unlock()
			t.start()
		}()
	})
}

// start opens what the tree reads from and reads the whole vault.
func (t *Tree) start() {
	fd, err := unix.Open(t.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.broken = fmt.Sprintf("the vault's folder can't be opened: %v", err)
		return
	}
	t.rootFd = fd
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		t.mounts = f
	} else {
		t.broken = fmt.Sprintf("the mount table can't be read, so a file system mounted inside the vault could go unseen: %v", err)
		return
	}
	t.rebuild()
}

// rebuild forgets everything and reads the vault again, with a new
// inotify descriptor: events of the old one no longer name anything.
func (t *Tree) rebuild() {
	if t.ino >= 0 {
		unix.Close(t.ino)
	}
	for _, l := range t.listeners {
		l.Reset()
	}
	t.top, t.byWd, t.unread, t.local = nil, map[int32]*folder{}, map[string]bool{}, map[uint64]bool{}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.ino = -1
		t.broken = fmt.Sprintf("inotify can't be used here: %v", err)
		return
	}
	t.ino = fd
	t.under = t.mountsInside()
	t.scan(".", nil)
	if t.broken == "" && t.top == nil {
		t.broken = "the vault's folder can't be watched"
	}
}

// Sync reads every event queued before it was called, then calls read
// with the listeners up to date and the lock still held. Where the tree
// can't be exact it returns an *InexactError and read is not called.
func (t *Tree) Sync(read func()) error {
	t.Start()
	<-t.ready
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.broken != "" {
		return &InexactError{Reason: t.broken}
	}
	if t.mountsChanged() {
		t.rebuild()
	}
	if reason := t.drain(); reason != "" {
		return &InexactError{Reason: reason}
	}
	if t.broken != "" {
		return &InexactError{Reason: t.broken}
	}
	for _, rel := range slices.Sorted(maps.Keys(t.unread)) {
		if t.unread[rel] { // a folder read meanwhile takes its subfolders off
			delete(t.unread, rel)
			t.found(rel)
		}
	}
	if t.broken != "" { // reading a folder that opened at last can fail too
		return &InexactError{Reason: t.broken}
	}
	if read != nil {
		read()
	}
	return nil
}

// Status says what the tree knows of itself, without waiting.
func (t *Tree) Status() Status {
	select {
	case <-t.ready:
	default:
		return Status{Reason: "still reading the vault"}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return Status{Ready: true, Exact: t.broken == "", Reason: t.broken, Folders: len(t.byWd), Rebuilds: t.rebuilds}
}

// Close stops watching, and the first reading if it has not ended. A Sync
// after it says the tree is closed.
func (t *Tree) Close() error {
	t.closing.Store(true)
	t.Start() // a reading that sees closing stops at once
	<-t.ready
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ino >= 0 {
		unix.Close(t.ino)
		t.ino = -1
	}
	if t.rootFd >= 0 {
		unix.Close(t.rootFd)
		t.rootFd = -1
	}
	if t.mounts != nil {
		t.mounts.Close()
		t.mounts = nil
	}
	t.broken = "the index was closed"
	return nil
}

// drain reads the queue until it is empty, and returns why this call
// can't be exact ("" when it is).
func (t *Tree) drain() string {
	events := 0
	for {
		n, err := unix.Read(t.ino, t.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return ""
		case err != nil:
			t.broken = fmt.Sprintf("reading inotify's queue: %v", err)
			return t.broken
		case n < unix.SizeofInotifyEvent:
			t.broken = "inotify's queue gave a short event"
			return t.broken
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&t.buf[off]))
			name := t.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				// What was lost can't be known: read the vault again, and
				// what is queued after the overflow belongs to the old
				// descriptor.
				t.rebuilds++
				t.rebuild()
				break
			}
			t.event(ev.Wd, ev.Mask, string(bytes.TrimRight(name, "\x00")))
			if t.broken != "" {
				return t.broken
			}
		}
		if events += n / unix.SizeofInotifyEvent; events > maxEventsPerSync {
			return "the vault changes faster than its index can follow"
		}
	}
}

// event applies one event.
func (t *Tree) event(wd int32, mask uint32, name string) {
	f := t.byWd[wd]
	if f == nil {
		return // a folder already forgotten
	}
	switch {
	case mask&unix.IN_IGNORED != 0:
		t.forget(f, false)
		return
	case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_UNMOUNT) != 0:
		if f == t.top {
			t.broken = "the vault's folder was removed, moved or unmounted"
		}
		return // the parent's event says what became of it
	case name == "":
		return
	}
	rel := join(f.rel, name)
	switch {
	case mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0:
		t.found(rel)
	case mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0:
		t.lost(rel)
	}
}

// found tells of rel as it is on disk now, and reads it if it is a
// folder not known yet.
func (t *Tree) found(rel string) {
	fd, err := t.openBeneath(rel, unix.O_PATH|unix.O_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return // gone again, or beneath a link: its own event follows
	}
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		t.unread[rel] = true // as a folder that can't be read: tried at each Sync
		return
	}
	var st unix.Stat_t
	if err == nil {
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
	}
	if err != nil {
		t.broken = fmt.Sprintf("%s: %v", t.shown(rel), err) // its names would go unknown
		return
	}
	dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if known := t.folderAt(rel); known != nil {
		if dir && known.dev == st.Dev && known.ino == st.Ino {
			return // the folder already read, told again by a queued event
		}
		t.lost(rel) // something else now has its name
	}
	if !dir || t.skip != nil && t.skip(path.Base(rel)) {
		t.tell(rel, dir)
		return
	}
	parent := t.folderAt(path.Dir(rel))
	if parent == nil {
		return // its parent is not watched (skipped, or not readable)
	}
	t.scan(rel, parent)
}

// lost tells that rel and all it held are gone, and stops watching the
// folders that were there.
func (t *Tree) lost(rel string) {
	for _, l := range t.listeners {
		l.Gone(rel)
	}
	for u := range t.unread {
		if under(u, rel) {
			delete(t.unread, u)
		}
	}
	if f := t.folderAt(rel); f != nil {
		t.forget(f, true)
	}
}

// forget drops f and the folders inside it; unwatch also removes their
// watches (a folder moved away is still watched by the kernel).
func (t *Tree) forget(f *folder, unwatch bool) {
	if t.byWd[f.wd] == f {
		delete(t.byWd, f.wd)
		if unwatch {
			unix.InotifyRmWatch(t.ino, uint32(f.wd))
		}
	}
	for _, k := range f.kids {
		t.forget(k, unwatch)
	}
	f.kids = nil
	if f.parent != nil && f.parent.kids[path.Base(f.rel)] == f {
		delete(f.parent.kids, path.Base(f.rel))
	}
	if f == t.top {
		t.top = nil
	}
}

// folderAt is the watched folder at rel, or nil.
func (t *Tree) folderAt(rel string) *folder {
	f := t.top
	if rel == "." || f == nil {
		return f
	}
	for part := range strings.SplitSeq(rel, "/") {
		if f = f.kids[part]; f == nil {
			return nil
		}
	}
	return f
}

func (t *Tree) tell(rel string, dir bool) {
	for _, l := range t.listeners {
		l.Seen(rel, dir)
	}
}

// scan watches the folder at rel, then reads it and the folders inside
// it: watched first, so a name made while it is read is in the queue if
// it is not in what was read.
func (t *Tree) scan(rel string, parent *folder) {
	fd, err := t.openBeneath(rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW)
	if err != nil {
		switch {
		case rel == ".":
			t.broken = fmt.Sprintf("the vault's folder can't be read: %v", err)
		case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
			t.tell(rel, true)
			t.unread[rel] = true // tried again at each Sync
		case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
			// Gone, or no longer a folder (a link now): the event that
			// says so is queued.
		default:
			// Anything else (out of descriptors, an I/O error) would
			// leave its names unknown: not exact.
			t.broken = fmt.Sprintf("%s can't be read: %v", t.shown(rel), err)
		}
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.broken = fmt.Sprintf("%s: %v", t.shown(rel), err)
		return
	}
	if !t.local[st.Dev] {
		var sf unix.Statfs_t
		if err := unix.Fstatfs(fd, &sf); err != nil {
			t.broken = fmt.Sprintf("%s: can't tell its file system: %v", t.shown(rel), err)
			return
		}
		if magic := uint32(sf.Type); !localMagics[magic] {
			t.broken = fmt.Sprintf("%s is on %s, which reports no changes made elsewhere", t.shown(rel), fsKind(magic))
			return
		}
		t.local[st.Dev] = true
	}
	wd, err := unix.InotifyAddWatch(t.ino, "/proc/self/fd/"+strconv.Itoa(fd), folderEvents)
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			t.broken = fmt.Sprintf("the vault has more folders than this system lets one process watch (fs.inotify.max_user_watches = %s)", readSysctl("/proc/sys/fs/inotify/max_user_watches"))
		} else {
			t.broken = fmt.Sprintf("%s can't be watched: %v", t.shown(rel), err)
		}
		return
	}
	f := &folder{rel: rel, wd: int32(wd), dev: st.Dev, ino: st.Ino, parent: parent, kids: map[string]*folder{}}
	if old := t.byWd[f.wd]; old != nil {
		if t.sameAt(old.rel, st) {
			// One folder at two places (a bind mount): what happens in
			// it would be told of one place only.
			t.broken = fmt.Sprintf("%s and %s are one folder, mounted twice inside the vault", t.shown(old.rel), t.shown(rel))
			return
		}
		// It moved here; the event saying so is still queued.
		t.forget(old, false)
	}
	t.byWd[f.wd] = f
	if parent == nil {
		t.top = f
	} else {
		parent.kids[path.Base(rel)] = f
		t.tell(rel, true)
	}
	// The folder's names are read into one buffer the tree keeps, and a
	// file's name costs one string, its path: a reading of a vault of
	// 200,000 notes makes little for the collector, which would otherwise
	// stop a server's start to clean up after it.
	var folders []string
	for {
		n, err := unix.Getdents(fd, t.dents)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.broken = fmt.Sprintf("%s can't be listed: %v", t.shown(rel), err)
			return
		}
		if n <= 0 {
			break
		}
		for off := 0; off+direntName < n; {
			reclen := int(*(*uint16)(unsafe.Pointer(&t.dents[off+direntReclen])))
			if reclen <= direntName || off+reclen > n {
				t.broken = fmt.Sprintf("%s: a malformed folder entry", t.shown(rel))
				return
			}
			typ := t.dents[off+direntType]
			raw := t.dents[off+direntName : off+reclen]
			if i := bytes.IndexByte(raw, 0); i >= 0 {
				raw = raw[:i]
			}
			off += reclen
			name := unsafe.String(unsafe.SliceData(raw), len(raw)) // the buffer's: copied before it is kept
			if name == "." || name == ".." || name == "" {
				continue
			}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
					typ = unix.DT_DIR
				}
			}
			switch {
			case typ != unix.DT_DIR:
				t.tell(t.childView(rel, name), false)
			case t.skip != nil && t.skip(name):
				t.tell(t.childView(rel, name), true)
			default:
				folders = append(folders, strings.Clone(name))
			}
		}
	}
	for _, name := range folders {
		if t.closing.Load() {
			t.broken = "the index was closed"
			return
		}
		t.scan(join(rel, name), f)
		if t.broken != "" {
			return
		}
	}
}

// childView is join(rel, name) spelled in the tree's own buffer: valid
// until the next, which is all a listener is promised (Listener), so that
// a reading makes no string for a file no listener keeps.
func (t *Tree) childView(rel, name string) string {
	t.pathBuf = t.pathBuf[:0]
	if rel != "." {
		t.pathBuf = append(append(t.pathBuf, rel...), '/')
	}
	t.pathBuf = append(t.pathBuf, name...)
	return unsafe.String(unsafe.SliceData(t.pathBuf), len(t.pathBuf))
}

// Offsets in a linux_dirent64: d_ino, d_off (8 bytes each), d_reclen (2),
// d_type (1), then d_name.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// openBeneath opens rel beneath the vault's folder without following a
// link anywhere on the way, so a folder swapped for a link is never read
// through it.
func (t *Tree) openBeneath(rel string, flags int) (int, error) {
	for {
		fd, err := unix.Openat2(t.rootFd, rel, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_CLOEXEC),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		return fd, err
	}
}

// sameAt reports whether rel is the file st describes.
func (t *Tree) sameAt(rel string, st unix.Stat_t) bool {
	fd, err := t.openBeneath(rel, unix.O_PATH|unix.O_NOFOLLOW)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	return unix.Fstat(fd, &now) == nil && now.Dev == st.Dev && now.Ino == st.Ino
}

func (t *Tree) shown(rel string) string {
	if rel == "." {
		return t.root
	}
	return path.Join(t.root, rel)
}

// mountsChanged reports whether the mount points inside the vault differ
// from when the vault was last read: a file system mounted there brings
// names with no event. The table is read again at every Sync (tens of
// microseconds): poll's notice of a change to it is not delivered for
// every change on every kernel.
func (t *Tree) mountsChanged() bool {
	raw, err := t.readMounts()
	if err != nil {
		t.broken = fmt.Sprintf("the mount table can't be read: %v", err)
		return false
	}
	if bytes.Equal(raw, t.mountsRaw) {
		return false
	}
	t.mountsRaw = raw
	return !slices.Equal(t.pointsInside(raw), t.under)
}

// readMounts reads the whole mount table.
func (t *Tree) readMounts() ([]byte, error) {
	if _, err := t.mounts.Seek(0, 0); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	_, err := b.ReadFrom(t.mounts)
	return b.Bytes(), err
}

// mountsInside reads the mount table and lists the mount points strictly
// inside the vault.
func (t *Tree) mountsInside() []string {
	raw, err := t.readMounts()
	if err != nil {
		t.broken = fmt.Sprintf("the mount table can't be read: %v", err)
		return nil
	}
	t.mountsRaw = raw
	return t.pointsInside(raw)
}

// pointsInside lists the mount points of the table raw strictly inside
// the vault.
func (t *Tree) pointsInside(raw []byte) []string {
	var out []string
	prefix := strings.TrimSuffix(t.root, "/") + "/"
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		if point := unescapeMount(fields[4]); strings.HasPrefix(point, prefix) {
			out = append(out, point)
		}
	}
	slices.Sort(out)
	return out
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline
// and backslash.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func readSysctl(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
