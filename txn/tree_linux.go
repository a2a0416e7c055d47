package txn

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// tree is a folder read without ever following a link: every path is resolved beneath
// its root with openat2, so a symlink anywhere on the way is an error, not a detour.
type tree struct {
	root int
	name string // for error messages
	buf  []byte // reused by sha256
}

func openTree(dir string) (*tree, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &tree{root: fd, name: dir}, nil
}

func (t *tree) close() { _ = unix.Close(t.root) }

// open opens rel (slash-separated, relative to the root; "" is the root itself).
func (t *tree) open(rel string, flags uint64) (int, error) {
	if rel == "" {
		rel = "."
	}
	fd, err := unix.Openat2(t.root, rel, &unix.OpenHow{
		Flags:   flags | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return -1, &fs.PathError{Op: "openat2", Path: path.Join(t.name, rel), Err: err}
	}
	return fd, nil
}

// lstat reports rel itself (a symlink is not followed); ok is false when nothing is there.
func (t *tree) lstat(rel string) (st unix.Stat_t, ok bool, err error) {
	fd, err := t.open(rel, unix.O_PATH)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return st, false, &fs.PathError{Op: "fstat", Path: path.Join(t.name, rel), Err: err}
	}
	return st, true, nil
}

// names lists the folder rel, sorted, so that every walk is deterministic. A folder
// with more than max names (max > 0) stops the listing early with errTooMany.
func (t *tree) names(rel string, max int64) ([]string, error) {
	fd, err := t.open(rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path.Join(t.name, rel))
	defer f.Close()
	var names []string
	for {
		batch, err := f.Readdirnames(1024)
		names = append(names, batch...)
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("txn: read folder %s: %w", f.Name(), err)
		}
		if max > 0 && int64(len(names)) > max {
			return names, errTooMany
		}
	}
	sort.Strings(names)
	return names, nil
}

var errTooMany = errors.New("txn: too many names in one folder")

// xattr reads the attribute of rel itself; ok is false when it has none by that name.
func (t *tree) xattr(rel, attr string) (value []byte, ok bool, err error) {
	dir, base := path.Split(rel)
	fd, err := t.open(strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(fd)
	// There is no getxattrat in x/sys: the /proc link of the pinned parent folder stands
	// in for it, and lgetxattr does not follow the last name.
	name := "/proc/self/fd/" + strconv.Itoa(fd) + "/" + base
	if base == "" {
		name = "/proc/self/fd/" + strconv.Itoa(fd) + "/."
	}
	for {
		n, err := unix.Lgetxattr(name, attr, nil)
		if errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, &fs.PathError{Op: "getxattr " + attr, Path: path.Join(t.name, rel), Err: err}
		}
		buf := make([]byte, n)
		m, err := unix.Lgetxattr(name, attr, buf)
		if errors.Is(err, unix.ERANGE) {
			continue // grew between the two calls
		}
		if err != nil {
			return nil, false, &fs.PathError{Op: "getxattr " + attr, Path: path.Join(t.name, rel), Err: err}
		}
		return buf[:m], true, nil
	}
}

// handle is the kernel's file handle of rel itself, as "type:hex", the form overlayfs
// records in an origin xattr.
func (t *tree) handle(rel string) (string, error) {
	fd, err := t.open(rel, unix.O_PATH)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	h, _, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return "", &fs.PathError{Op: "name_to_handle_at", Path: path.Join(t.name, rel), Err: err}
	}
	return handleKey(h.Type(), h.Bytes()), nil
}

func handleKey(typ int32, fid []byte) string {
	return strconv.Itoa(int(typ)) + ":" + hex.EncodeToString(fid)
}

// originHandle decodes overlayfs's struct ovl_fb (version 0, magic 0xfb, length, flags,
// handle type, 16-byte uuid, then the file id) into the form handle returns.
func originHandle(fb []byte) (string, bool) {
	const header = 5 + 16
	if len(fb) < header || fb[0] != 0 || fb[1] != 0xfb {
		return "", false
	}
	n := int(fb[2])
	if n < header || n > len(fb) {
		return "", false
	}
	return handleKey(int32(fb[4]), fb[header:n]), true
}

// state describes rel as st shows it, hashing a file's content and reading a link's target.
func (t *tree) state(rel string, st *unix.Stat_t) (*State, error) {
	s := &State{Mode: fileMode(st.Mode)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		s.Size = st.Size
		sum, err := t.sha256(rel, st)
		if err != nil {
			return nil, err
		}
		s.SHA256 = sum
	case unix.S_IFLNK:
		target, err := t.readlink(rel)
		if err != nil {
			return nil, err
		}
		s.Target, s.Size = target, int64(len(target))
	}
	return s, nil
}

func (t *tree) sha256(rel string, st *unix.Stat_t) (string, error) {
	// O_NONBLOCK: should a FIFO have taken the file's place, the open must not hang.
	fd, err := t.open(rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	name := path.Join(t.name, rel)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return "", &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	if now.Ino != st.Ino || now.Dev != st.Dev || now.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", fmt.Errorf("txn: %s changed while it was read", name)
	}
	if t.buf == nil {
		t.buf = make([]byte, 64<<10)
	}
	h := sha256.New()
	for {
		n, err := unix.Read(fd, t.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return "", &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return hex.EncodeToString(h.Sum(nil)), nil
		}
		h.Write(t.buf[:n])
	}
}

func (t *tree) readlink(rel string) (string, error) {
	fd, err := t.open(rel, unix.O_PATH)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: path.Join(t.name, rel), Err: err}
	}
	return string(buf[:n]), nil
}

// fileMode turns a stat mode into the fs.FileMode the rest of vaultgate speaks.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
