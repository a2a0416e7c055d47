//go:build linux

package vaultfs

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"
)

// NoFollowFs is the production file system: an afero.Fs over the vault
// root's descriptor that never follows a symlink, anywhere in a name.
//
// The planners resolve links in user space and the zone is judged on the
// real path; between that judgement and the operation another process
// may swap a folder for a link. So every operation walks from the root's
// descriptor to the parent folder's with openat2
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), or, on kernels without openat2,
// one openat(O_NOFOLLOW|O_DIRECTORY) per component, and then acts on that
// descriptor by the last name with a call that does not follow it either.
// A link met on the way makes the call fail (ELOOP, ENOTDIR); it never
// leads anywhere. Names are clean and vault-relative: an absolute name, a
// ".." or an unclean spelling is refused before any system call.
//
// Open and Stat of a link fail with ELOOP: the read tool opens the real
// path its planner resolved, never the link.
type NoFollowFs struct {
	fd   int // the root folder, O_RDONLY|O_DIRECTORY
	name string
	// perComponent is set once openat2 answers ENOSYS (or by a test); it
	// is shared with pinned folders, since the kernel is the same.
	perComponent *atomic.Bool
}

// Open opens dir as the root of a NoFollowFs. dir itself comes from the
// config and is opened as given, links and all.
func Open(dir string) (*NoFollowFs, error) {
	fd, err := openat(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &NoFollowFs{fd: fd, name: dir, perComponent: new(atomic.Bool)}, nil
}

var (
	_ afero.Fs         = (*NoFollowFs)(nil)
	_ afero.Lstater    = (*NoFollowFs)(nil)
	_ afero.LinkReader = (*NoFollowFs)(nil)
	_ afero.Linker     = (*NoFollowFs)(nil)
	_ NoReplaceRenamer = (*NoFollowFs)(nil)
	_ Pinner           = (*NoFollowFs)(nil)
	_ LinkFreeChecker  = (*NoFollowFs)(nil)
	_ PinnedFs         = (*NoFollowFs)(nil)
)

// errBadName is the refusal of a name that is not clean and vault-relative.
var errBadName = errors.New("not a clean vault-relative name")

// Close releases the root's descriptor.
func (f *NoFollowFs) Close() error { return unix.Close(f.fd) }

// WalkPerComponent makes f, and every folder pinned from it, walk names
// one O_NOFOLLOW openat per component, as it does by itself on a kernel
// without openat2; the tests run each case both ways.
func (f *NoFollowFs) WalkPerComponent() { f.perComponent.Store(true) }

func (f *NoFollowFs) Name() string { return "NoFollowFs(" + f.name + ")" }

// checkName accepts "." and clean relative names without "..": the only
// names the tools give.
func checkName(op, name string) error {
	if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." ||
		strings.HasPrefix(name, "../") || strings.IndexByte(name, 0) >= 0 {
		return &fs.PathError{Op: op, Path: name, Err: errBadName}
	}
	return nil
}

// split gives a checked name's parent folder and last component ("." for
// the root itself).
func split(name string) (dir, base string) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ".", name
	}
	return name[:i], name[i+1:]
}

// openDir opens dir, a checked name, without following any link.
func (f *NoFollowFs) openDir(dir string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY
	if !f.perComponent.Load() {
		fd, err := openat2(f.fd, dir, flags, 0)
		if err != unix.ENOSYS {
			return fd, err
		}
		f.perComponent.Store(true)
	}
	fd, err := openat(f.fd, ".", flags, 0)
	if err != nil || dir == "." {
		return fd, err
	}
	for _, c := range strings.Split(dir, "/") {
		next, err := openat(fd, c, flags|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// parent opens the folder that holds name and returns it with name's last
// component. The caller closes the descriptor.
func (f *NoFollowFs) parent(op, name string) (int, string, error) {
	if err := checkName(op, name); err != nil {
		return -1, "", err
	}
	dir, base := split(name)
	fd, err := f.openDir(dir)
	if err != nil {
		return -1, "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	return fd, base, nil
}

// entry is parent for operations on a name itself, which "." can't be.
func (f *NoFollowFs) entry(op, name string) (int, string, error) {
	if name == "." {
		return -1, "", &fs.PathError{Op: op, Path: name, Err: unix.EBUSY}
	}
	return f.parent(op, name)
}

func (f *NoFollowFs) Create(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile never follows a link, the last component included: with
// openat2, RESOLVE_NO_SYMLINKS covers the whole name, so one call does
// the parent walk and the O_NOFOLLOW open.
func (f *NoFollowFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	fd, err := f.openFd(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openFd is OpenFile's descriptor, for a caller that reads it itself.
func (f *NoFollowFs) openFd(name string, flag int, perm os.FileMode) (int, error) {
	if err := checkName("open", name); err != nil {
		return -1, err
	}
	flag |= unix.O_NOFOLLOW
	var mode uint32
	if flag&os.O_CREATE != 0 {
		mode = unixMode(perm)
	}
	fd, err := -1, error(unix.ENOSYS)
	if !f.perComponent.Load() {
		if fd, err = openat2(f.fd, name, flag, mode); err == unix.ENOSYS {
			f.perComponent.Store(true)
		}
	}
	if err == unix.ENOSYS {
		dir, base := split(name)
		var pfd int
		if pfd, err = f.openDir(dir); err == nil {
			fd, err = openat(pfd, base, flag, mode)
			unix.Close(pfd)
		}
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return fd, nil
}

// Open opens for reading, without blocking on a FIFO or a device put where
// a note was expected (O_NONBLOCK changes nothing for regular files).
func (f *NoFollowFs) Open(name string) (afero.File, error) {
	return f.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK, 0)
}

func (f *NoFollowFs) Mkdir(name string, perm os.FileMode) error {
	pfd, base, err := f.entry("mkdir", name)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Mkdirat(pfd, base, unixMode(perm)); err != nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	return nil
}

// MkdirAll makes each missing folder by its parent's descriptor and opens
// each one with O_NOFOLLOW, so a link on the way stops it (ELOOP).
func (f *NoFollowFs) MkdirAll(name string, perm os.FileMode) error {
	if err := checkName("mkdir", name); err != nil {
		return err
	}
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW
	fd, err := openat(f.fd, ".", flags, 0)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: ".", Err: err}
	}
	if name == "." {
		return unix.Close(fd)
	}
	parts := strings.Split(name, "/")
	for i, c := range parts {
		next, err := openat(fd, c, flags, 0)
		if err == unix.ENOENT {
			if err = unix.Mkdirat(fd, c, unixMode(perm)); err == nil || err == unix.EEXIST {
				next, err = openat(fd, c, flags, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: path.Join(parts[:i+1]...), Err: err}
		}
		fd = next
	}
	return unix.Close(fd)
}

// Remove unlinks name from its parent's descriptor: a link is removed
// itself, and a folder must be empty.
func (f *NoFollowFs) Remove(name string) error {
	pfd, base, err := f.entry("remove", name)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unlinkAny(pfd, base); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func unlinkAny(pfd int, base string) error {
	err := unix.Unlinkat(pfd, base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		if e := unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR); e != unix.ENOTDIR {
			return e
		}
	}
	return err
}

// RemoveAll removes name and, for a folder, everything inside, by
// descriptors: children are unlinked from their folder's descriptor, and a
// folder is entered only with openat(O_DIRECTORY|O_NOFOLLOW). A name that
// does not exist is not an error, as with os.RemoveAll.
func (f *NoFollowFs) RemoveAll(name string) error {
	pfd, base, err := f.entry("removeall", name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer unix.Close(pfd)
	if err := removeAllAt(pfd, base); err != nil {
		return &fs.PathError{Op: "removeall", Path: name, Err: err}
	}
	return nil
}

func removeAllAt(pfd int, base string) error {
	err := unix.Unlinkat(pfd, base, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	// Entries may appear while we empty the folder: try a few times.
	for range 3 {
		if e := emptyDirAt(pfd, base); e == unix.ENOTDIR {
			return err // not a folder after all: why the unlink failed
		} else if e != nil {
			return e
		}
		err = unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
		if err == nil || err == unix.ENOENT {
			return nil
		}
		if err != unix.ENOTEMPTY && err != unix.EEXIST {
			return err
		}
	}
	return err
}

func emptyDirAt(pfd int, base string) error {
	fd, err := openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return err
	}
	d := os.NewFile(uintptr(fd), base)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := removeAllAt(int(d.Fd()), n); err != nil {
			return err
		}
	}
	return nil
}

// Rename replaces what is at newname only if it is a regular file (as
// os.Rename would, but never a folder, a link or a device): fstatat on
// the new parent's descriptor decides, and a name that does not exist
// is taken with RENAME_NOREPLACE, so nothing that appears meanwhile is
// replaced either.
func (f *NoFollowFs) Rename(oldname, newname string) error {
	return f.rename(oldname, newname, false)
}

// RenameNoReplace renames with RENAME_NOREPLACE: if newname exists, in
// whatever form, it fails with fs.ErrExist. A file system that can't do
// that makes it fail, never fall back to a check and a rename.
func (f *NoFollowFs) RenameNoReplace(oldname, newname string) error {
	return f.rename(oldname, newname, true)
}

func (f *NoFollowFs) rename(oldname, newname string, noReplace bool) error {
	fail := func(err error) error { return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err} }
	opfd, obase, err := f.entry("rename", oldname)
	if err != nil {
		return err
	}
	defer unix.Close(opfd)
	npfd, nbase, err := f.entry("rename", newname)
	if err != nil {
		return err
	}
	defer unix.Close(npfd)
	flags := uint(unix.RENAME_NOREPLACE)
	if !noReplace {
		var st unix.Stat_t
		err := unix.Fstatat(npfd, nbase, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == unix.ENOENT:
		case err != nil:
			return fail(err)
		case st.Mode&unix.S_IFMT == unix.S_IFREG:
			flags = 0
		default:
			return fail(unix.EEXIST)
		}
	}
	if err := unix.Renameat2(opfd, obase, npfd, nbase, flags); err != nil {
		return fail(err)
	}
	return nil
}

// Stat does not follow a link either: a link is ELOOP, as Open makes it.
func (f *NoFollowFs) Stat(name string) (os.FileInfo, error) {
	fi, err := f.lstat("stat", name)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: unix.ELOOP}
	}
	return fi, err
}

func (f *NoFollowFs) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	fi, err := f.lstat("lstat", name)
	return fi, true, err
}

func (f *NoFollowFs) lstat(op, name string) (os.FileInfo, error) {
	pfd, base, err := f.parent(op, name)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return newFileInfo(path.Base(name), &st), nil
}

// LinkFree reports whether no component of name is a symlink, as far as
// name exists (with last false, the last component is not looked at). It
// is the planners' fast path: one openat2 that refuses any link (ELOOP)
// and stops at the first missing component (ENOENT, ENOTDIR), as the walk
// in user space would, and an fstat of what it opened, since O_PATH with
// O_NOFOLLOW opens a trailing link itself. Any other answer, or a kernel
// without openat2, is false: the caller walks.
func (f *NoFollowFs) LinkFree(name string, last bool) bool {
	if f.perComponent.Load() || checkName("resolve", name) != nil {
		return false
	}
	if !last {
		if name, _ = split(name); name == "." {
			return true
		}
	}
	fd, err := openat2(f.fd, name, unix.O_PATH|unix.O_NOFOLLOW, 0)
	switch err {
	case nil:
	case unix.ENOENT, unix.ENOTDIR:
		return true
	default:
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK
}

func (f *NoFollowFs) ReadlinkIfPossible(name string) (string, error) {
	pfd, base, err := f.entry("readlink", name)
	if err != nil {
		return "", err
	}
	defer unix.Close(pfd)
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(pfd, base, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// SymlinkIfPossible exists for tests that build vaults; the tools never
// make links. oldname is the link's text, not a name in the vault.
func (f *NoFollowFs) SymlinkIfPossible(oldname, newname string) error {
	pfd, base, err := f.entry("symlink", newname)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Symlinkat(oldname, pfd, base); err != nil {
		return &os.LinkError{Op: "symlink", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// Chmod uses fchmodat2 with AT_SYMLINK_NOFOLLOW; a kernel without it (or
// a link) makes it fail rather than follow.
func (f *NoFollowFs) Chmod(name string, mode os.FileMode) error {
	pfd, base, err := f.parent("chmod", name)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Fchmodat(pfd, base, unixMode(mode), unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chmod", Path: name, Err: err}
	}
	return nil
}

func (f *NoFollowFs) Chown(name string, uid, gid int) error {
	pfd, base, err := f.parent("chown", name)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if err := unix.Fchownat(pfd, base, uid, gid, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chown", Path: name, Err: err}
	}
	return nil
}

// Chtimes leaves a zero time as it is, as os.Chtimes does.
func (f *NoFollowFs) Chtimes(name string, atime, mtime time.Time) error {
	pfd, base, err := f.parent("chtimes", name)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	ts := func(t time.Time) unix.Timespec {
		if t.IsZero() {
			return unix.Timespec{Nsec: unix.UTIME_OMIT}
		}
		return unix.NsecToTimespec(t.UnixNano())
	}
	if err := unix.UtimesNanoAt(pfd, base, []unix.Timespec{ts(atime), ts(mtime)}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chtimes", Path: name, Err: err}
	}
	return nil
}

// Pin holds dir open (reached without following links): what the returned
// Fs does stays in that folder, whatever is swapped above it.
func (f *NoFollowFs) Pin(dir string) (PinnedFs, error) {
	if err := checkName("pin", dir); err != nil {
		return nil, err
	}
	fd, err := f.openDir(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "pin", Path: dir, Err: err}
	}
	return &NoFollowFs{fd: fd, name: path.Join(f.name, dir), perComponent: f.perComponent}, nil
}

// openat2 opens name beneath dirfd with no link followed anywhere in it.
// EAGAIN (a rename elsewhere raced the lookup) and EINTR are retried.
func openat2(dirfd int, name string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_LARGEFILE),
		Mode:    uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS,
	}
	var err error
	for range 16 {
		var fd int
		if fd, err = unix.Openat2(dirfd, name, &how); err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, err
}

func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC|unix.O_LARGEFILE, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func unixMode(m os.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		u |= unix.S_ISUID
	}
	if m&os.ModeSetgid != 0 {
		u |= unix.S_ISGID
	}
	if m&os.ModeSticky != 0 {
		u |= unix.S_ISVTX
	}
	return u
}

// fileInfo is what fstatat learnt, shaped as os.Lstat shapes it: Sys is a
// *syscall.Stat_t, where the tools read the link count.
type fileInfo struct {
	name string
	mode fs.FileMode
	sys  syscall.Stat_t
}

func newFileInfo(name string, st *unix.Stat_t) *fileInfo {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	ts := func(t unix.Timespec) syscall.Timespec { return syscall.Timespec{Sec: t.Sec, Nsec: t.Nsec} }
	return &fileInfo{name: name, mode: m, sys: syscall.Stat_t{
		Dev: st.Dev, Ino: st.Ino, Nlink: st.Nlink, Mode: st.Mode, Uid: st.Uid, Gid: st.Gid,
		Rdev: st.Rdev, Size: st.Size, Blksize: st.Blksize, Blocks: st.Blocks,
		Atim: ts(st.Atim), Mtim: ts(st.Mtim), Ctim: ts(st.Ctim),
	}}
}

func (fi *fileInfo) Name() string      { return fi.name }
func (fi *fileInfo) Size() int64       { return fi.sys.Size }
func (fi *fileInfo) Mode() fs.FileMode { return fi.mode }
func (fi *fileInfo) ModTime() time.Time {
	return time.Unix(int64(fi.sys.Mtim.Sec), int64(fi.sys.Mtim.Nsec))
}
func (fi *fileInfo) IsDir() bool { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any    { return &fi.sys }
