package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The vault as an overlay: the vault is the read-only lower layer, and
// every change a command makes lands in the call's upper folder, where the
// server reads it when the command has ended (package txn). Here: the
// checks of the folders on the server's side, and the mount in the helper.

// fsCaseFold is FS_CASEFOLD_FL (linux/fs.h): a folder whose names are
// looked up without regard to case (chattr +F).
const fsCaseFold = 0x40000000

// CheckOverlay tells whether o can be the upper and work folders of an
// overlay whose lower layer is the vault: overlayfs refuses an upper
// folder on overlayfs or FUSE, upper and work folders that overlap or lie
// on different file systems, and a case-folding layer; and an upper
// folder inside the vault would be seen through the overlay itself. The
// error names the folder and why; Run calls it for every call, and a
// server may call it at start-up on a layer of its state folder.
func CheckOverlay(o Overlay, vault string) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("sandbox: overlay: "+format, a...)
	}
	if !filepath.IsAbs(o.Upper) || !filepath.IsAbs(o.Work) {
		return fail("the upper folder %q and the work folder %q must be absolute", o.Upper, o.Work)
	}
	real := map[string]string{}
	for name, p := range map[string]string{"vault": vault, "upper folder": o.Upper, "work folder": o.Work} {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return fail("the %s: %w", name, err)
		}
		fi, err := os.Stat(r)
		if err != nil {
			return fail("the %s: %w", name, err)
		}
		if !fi.IsDir() {
			return fail("the %s %s is not a folder", name, p)
		}
		real[name] = r
	}
	v, up, wk := real["vault"], real["upper folder"], real["work folder"]
	for _, d := range []struct{ name, path string }{{"upper folder", up}, {"work folder", wk}} {
		if within(d.path, v) || within(v, d.path) {
			return fail("the %s %s lies inside the vault %s (or holds it): the command would see it through the overlay", d.name, d.path, v)
		}
	}
	if within(up, wk) || within(wk, up) {
		return fail("the upper folder %s and the work folder %s overlap", up, wk)
	}
	var su, sw unix.Stat_t
	if err := unix.Stat(up, &su); err != nil {
		return fail("the upper folder: %w", err)
	}
	if err := unix.Stat(wk, &sw); err != nil {
		return fail("the work folder: %w", err)
	}
	if su.Dev != sw.Dev {
		return fail("the upper folder %s and the work folder %s are on different file systems", up, wk)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(up, &fs); err != nil {
		return fail("the upper folder: %w", err)
	}
	if why := upperFSProblem(int64(fs.Type)); why != "" {
		return fail("the upper folder %s is on %s, which overlayfs refuses as an upper layer: put the state folder on a local file system (ext4, xfs, btrfs, tmpfs)", up, why)
	}
	for _, d := range []struct{ name, path string }{{"vault", v}, {"upper folder", up}} {
		if caseFolding(d.path) {
			return fail("the %s %s is case-folding (chattr +F), which overlayfs refuses", d.name, d.path)
		}
	}
	return nil
}

// upperFSProblem names a file system type overlayfs can't write its upper
// layer on, or is "".
func upperFSProblem(fsType int64) string {
	switch fsType {
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs"
	case unix.FUSE_SUPER_MAGIC:
		return "a FUSE file system"
	}
	return ""
}

// caseFolding reports whether folder dir looks names up without regard to
// case. A file system without the flags ioctl has no case folding.
func caseFolding(dir string) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	return err == nil && flags&fsCaseFold != 0
}

// prepareOverlay checks the call's overlay folders, puts their real paths
// in the plan (the helper opens them without following any link), and
// gives the upper folder the vault root's owner and mode: the overlay's
// root takes them from there, and a run_as user could not write in a
// root the server's 0700 made.
func prepareOverlay(w *Wall) error {
	o := w.Overlay
	if err := CheckOverlay(*o, w.Vault); err != nil {
		return err
	}
	up, err := filepath.EvalSymlinks(o.Upper)
	if err != nil {
		return fmt.Errorf("sandbox: overlay: %w", err)
	}
	wk, err := filepath.EvalSymlinks(o.Work)
	if err != nil {
		return fmt.Errorf("sandbox: overlay: %w", err)
	}
	w.Overlay = &Overlay{Upper: up, Work: wk}
	var sv unix.Stat_t
	if err := unix.Stat(w.Vault, &sv); err != nil {
		return fmt.Errorf("sandbox: overlay: the vault: %w", err)
	}
	fd, err := unix.Open(up, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: overlay: the upper folder %s: %w", up, err)
	}
	defer unix.Close(fd)
	var su unix.Stat_t
	if err := unix.Fstat(fd, &su); err != nil {
		return fmt.Errorf("sandbox: overlay: the upper folder %s: %w", up, err)
	}
	if su.Uid != sv.Uid || su.Gid != sv.Gid {
		err := unix.Fchown(fd, int(sv.Uid), int(sv.Gid))
		// A server that is not root can't give away a folder; inside its
		// user namespace the root is then its own, which the diff judges
		// like any other. Root can, and must.
		if err != nil && (os.Geteuid() == 0 || !errors.Is(err, unix.EPERM)) {
			return fmt.Errorf("sandbox: overlay: giving the upper folder %s the vault root's owner %d:%d: %w", up, sv.Uid, sv.Gid, err)
		}
	}
	if err := unix.Fchmod(fd, sv.Mode&0o7777); err != nil {
		return fmt.Errorf("sandbox: overlay: giving the upper folder %s the vault root's mode: %w", up, err)
	}
	return nil
}

// overlayStage is where the helper mounts the overlay: in its scratch
// root, outside the new root, which shows only binds of it and goes when
// the old root is detached.
const overlayStage = "/overlay"

// mountOverlay mounts the vault as an overlay at overlayStage: the host's
// vault (through the old root) as the read-only lower layer, the plan's
// upper and work folders above it (or those of the call's own tmpfs).
// Each is opened without following any link and handed to overlayfs as
// /proc/self/fd/N, so the layers are exactly the folders the server
// checked, and no comma or colon in a path can be read as an option.
// It returns the lower folder's stat.
func mountOverlay(w *Wall, userNS bool) (*unix.Stat_t, error) {
	lower, err := openNoFollow(oldRoot + w.Vault)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", oldRoot+w.Vault, err)
	}
	defer unix.Close(lower)
	var st unix.Stat_t
	if err := unix.Fstat(lower, &st); err != nil {
		return nil, fmt.Errorf("the vault: %w", err)
	}
	var upper, work int
	if w.Overlay.Memory != nil {
		if upper, work, err = memoryLayer(w, lower, userNS); err != nil {
			return nil, fmt.Errorf("the in-memory layer: %w", err)
		}
	} else {
		if upper, err = openNoFollow(oldRoot + w.Overlay.Upper); err != nil {
			return nil, fmt.Errorf("open %s: %w", oldRoot+w.Overlay.Upper, err)
		}
		if work, err = openNoFollow(oldRoot + w.Overlay.Work); err != nil {
			unix.Close(upper)
			return nil, fmt.Errorf("open %s: %w", oldRoot+w.Overlay.Work, err)
		}
	}
	defer unix.Close(upper)
	defer unix.Close(work)
	mnt, err := overlayMount(lower, upper, work, newRoot+"/proc", userNS)
	if err != nil {
		return nil, err
	}
	defer unix.Close(mnt)
	if err := unix.Mkdir(overlayStage, 0o700); err != nil {
		return nil, err
	}
	if err := unix.MoveMount(mnt, "", unix.AT_FDCWD, overlayStage, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return nil, fmt.Errorf("move_mount %s: %w", overlayStage, err)
	}
	return &st, nil
}

// sameFolder checks that the folder at p (no link followed) is the one
// whose stat was taken: the overlay mounted ahead is over it.
func sameFolder(p string, was *unix.Stat_t) error {
	fd, err := openNoFollow(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("the vault: %w", err)
	}
	if st.Dev != was.Dev || st.Ino != was.Ino {
		return errStaleAhead
	}
	return nil
}

// layerStage is where the helper mounts the call's in-memory layer: in its
// scratch root, which goes when the old root is detached, so nothing in
// the wall can reach the layer but through the overlay.
const layerStage = "/layer"

// memoryLayer mounts the call's tmpfs (sized from its caps), makes upper
// and work folders in it, gives the upper one the vault root's owner and
// mode (see prepareOverlay), and hands the server a descriptor of it on
// the status socket: the server reads the changes through it when the
// command has ended, and the tmpfs lives as long as that descriptor, after
// the namespace has gone. It returns the two folders, O_PATH.
func memoryLayer(w *Wall, vault int, userNS bool) (upper, work int, err error) {
	m := w.Overlay.Memory
	if err := unix.Mkdir(layerStage, 0o700); err != nil {
		return -1, -1, err
	}
	if err := unix.Mount("tmpfs", layerStage, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, m.tmpfsOptions()); err != nil {
		return -1, -1, fmt.Errorf("tmpfs: %w", err)
	}
	for _, d := range []string{"upper", "work"} {
		if err := unix.Mkdir(layerStage+"/"+d, 0o700); err != nil {
			return -1, -1, err
		}
	}
	var sv unix.Stat_t
	if err := unix.Fstat(vault, &sv); err != nil {
		return -1, -1, fmt.Errorf("the vault: %w", err)
	}
	fd, err := unix.Open(layerStage+"/upper", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, err
	}
	defer unix.Close(fd)
	// In a user namespace a vault owned by a uid the namespace does not
	// map can't be given: the root is then the namespace's, as on disk.
	if err := unix.Fchown(fd, int(sv.Uid), int(sv.Gid)); err != nil && !userNS {
		return -1, -1, fmt.Errorf("giving the upper folder the vault root's owner %d:%d: %w", sv.Uid, sv.Gid, err)
	}
	if err := unix.Fchmod(fd, sv.Mode&0o7777); err != nil {
		return -1, -1, fmt.Errorf("giving the upper folder the vault root's mode: %w", err)
	}
	if err := unix.Sendmsg(statusFD, []byte(upperMsg), unix.UnixRights(fd), nil, 0); err != nil {
		return -1, -1, fmt.Errorf("handing the upper folder to the server: %w", err)
	}
	if upper, err = openNoFollow(layerStage + "/upper"); err != nil {
		return -1, -1, err
	}
	if work, err = openNoFollow(layerStage + "/work"); err != nil {
		unix.Close(upper)
		return -1, -1, err
	}
	return upper, work, nil
}

// upperMsg is the status message that carries the in-memory upper folder.
const upperMsg = "upper\n"

// checkUpper accepts a descriptor the helper handed over only if it is a
// folder on a tmpfs.
func checkUpper(f *os.File) error {
	var st unix.Stat_t
	var fs unix.Statfs_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	if err := unix.Fstatfs(int(f.Fd()), &fs); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || fs.Type != unix.TMPFS_MAGIC {
		return errors.New("the helper handed over something that is not a folder on a tmpfs")
	}
	return nil
}

// MemoryFull tells whether the in-memory layer upper (Result.Upper) ran
// out of room while the command ran: "bytes" or "files" if it did, else
// "". A call within caps m never leaves it with less than the slack free,
// so a full one was stopped by ENOSPC on its way past them: the call is
// over its limits, whatever the diff of what was left counts.
func MemoryFull(upper *os.File, m MemoryLayer) (string, error) {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(int(upper.Fd()), &fs); err != nil {
		return "", fmt.Errorf("sandbox: the in-memory layer: %w", err)
	}
	switch {
	case int64(fs.Ffree) < memInodeSlack/2:
		return "files", nil
	case int64(fs.Bavail)*fs.Bsize < memByteSlack:
		return "bytes", nil
	}
	return "", nil
}

// overlayOptions are the overlay's options beyond its layers. As root:
// folder renames are recorded (redirect_dir=on), so the diff sees a moved
// folder as a move; metacopy off, so a chmod copies the whole file up and
// the diff sees whole files; no index, so a copied-up file has no second
// name in the work folder; volatile, so that the end of the call does not
// sync the state folder's whole file system (the upper folder is read
// from the page cache by the diff, and whatever the commit keeps it must
// fsync itself). In a user namespace overlayfs keeps its records in
// user.overlay.* (userxattr), where redirect_dir can't be on: renaming a
// folder of the vault then fails with EXDEV.
func overlayOptions(userNS bool) [][2]string {
	opts := [][2]string{{"metacopy", "off"}, {"index", "off"}, {"volatile", ""}}
	if userNS {
		return append(opts, [2]string{"userxattr", ""})
	}
	return append(opts, [2]string{"redirect_dir", "on"})
}

// overlayMount makes a detached overlay mount of the given layer folders
// (descriptors, named through proc) and returns it; the kernel's own words
// go into the error when it refuses.
func overlayMount(lower, upper, work int, proc string, userNS bool) (int, error) {
	fsfd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen overlay: %w", err)
	}
	defer unix.Close(fsfd)
	fdPath := func(fd int) string { return proc + "/self/fd/" + strconv.Itoa(fd) }
	set := [][2]string{{"lowerdir", fdPath(lower)}, {"upperdir", fdPath(upper)}, {"workdir", fdPath(work)}}
	for _, kv := range append(set, overlayOptions(userNS)...) {
		if kv[1] == "" {
			err = unix.FsconfigSetFlag(fsfd, kv[0])
		} else {
			err = unix.FsconfigSetString(fsfd, kv[0], kv[1])
		}
		if err != nil {
			return -1, fmt.Errorf("overlay option %s: %w%s", kv[0], err, fsLog(fsfd))
		}
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return -1, fmt.Errorf("mounting the overlay: %w%s", err, fsLog(fsfd))
	}
	mnt, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return -1, fmt.Errorf("fsmount overlay: %w%s", err, fsLog(fsfd))
	}
	return mnt, nil
}

// fsLog is what the kernel said about a file system context, if anything.
func fsLog(fsfd int) string {
	var msgs []string
	buf := make([]byte, 1024)
	for range 8 {
		n, err := unix.Read(fsfd, buf)
		if err != nil || n <= 0 {
			break
		}
		msgs = append(msgs, strings.TrimSpace(string(buf[:n])))
	}
	if len(msgs) == 0 {
		return ""
	}
	return " (" + strings.Join(msgs, "; ") + ")"
}

// probeOverlay mounts an overlay of empty folders in dir (a tmpfs of the
// probe's own) with the options calls use, and writes through it.
func probeOverlay(dir string, userNS bool) error {
	var fds [3]int
	for i, name := range []string{"lower", "upper", "work"} {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			return err
		}
		fd, err := openNoFollow(p)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		fds[i] = fd
	}
	mnt, err := overlayMount(fds[0], fds[1], fds[2], "/proc", userNS)
	if err != nil {
		return err
	}
	defer unix.Close(mnt)
	fd, err := unix.Openat(mnt, "probe", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("writing through the overlay: %w", err)
	}
	unix.Close(fd)
	if _, err := os.Lstat(filepath.Join(dir, "upper", "probe")); err != nil {
		return fmt.Errorf("a write through the overlay did not reach its upper folder: %w", err)
	}
	return nil
}

// probeMemoryLayer tells whether a tmpfs (dir is one) takes the records
// overlayfs keeps on its upper layer: trusted.overlay.* as root,
// user.overlay.* in a user namespace (tmpfs has user xattrs from Linux
// 6.6). Without them a folder can't be made opaque, so the in-memory
// layer is not used and the call's layer goes on disk.
func probeMemoryLayer(dir string, userNS bool) error {
	name := "trusted.overlay.vaultgate-probe"
	if userNS {
		name = "user.overlay.vaultgate-probe"
	}
	p := filepath.Join(dir, "xattr-probe")
	if err := os.Mkdir(p, 0o700); err != nil {
		return err
	}
	if err := unix.Lsetxattr(p, name, []byte("y"), 0); err != nil {
		return fmt.Errorf("tmpfs does not keep %s: %w", name, err)
	}
	return nil
}
