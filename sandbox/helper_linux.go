package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// HelperArg is argv[1] of the wall's helper (vaultgate-wall, or the
// vaultgate binary re-executed). It starts with a dash so that a binary
// without the hook (a test binary of another package) refuses it as an
// unknown flag instead of doing anything.
const HelperArg = "-vaultgate-wall-helper"

// The helper's descriptors: the plan (a sealed memfd) and the status pipe
// on which it says "ready" just before it execs bash, or why it could not.
const (
	planFD     = 3
	statusFD   = 4
	callPlanFD = 5 // a helper started ahead: the call's plan, when it comes
)

// planVersion names what a plan means. The helper may be a binary of
// another build (vaultgate-wall beside an upgraded vaultgate), and one that
// read a plan it does not understand could raise a wall with a layer
// missing: it refuses any other version, and any field it does not know.
// Bump it whenever a plan's fields or their meaning change
// (TestPlanShapeIsVersioned notices a change of fields).
const planVersion = 5

// helperPlan is what the helper reads on planFD.
type helperPlan struct {
	Version int      `json:"version"`
	Wall    *Wall    `json:"wall,omitempty"`
	Probe   bool     `json:"probe,omitempty"`
	Bash    string   `json:"bash"`
	Args    []string `json:"args"`
	Env     []string `json:"env"`
	Dir     string   `json:"dir"`
	UserNS  bool     `json:"user_ns"`
	HostMNT uint64   `json:"host_mnt"`
	// Ahead is the first plan of a helper started ahead of its call
	// (ahead_linux.go): what it may build of the root before the call's
	// own plan comes on callPlanFD, which must agree with it.
	Ahead *aheadPlan `json:"ahead,omitempty"`
}

// aheadPlan is what of a call's wall a helper started ahead may build
// before it knows the call: the new root's system folders, /proc and
// /dev, which depend on nothing but these, and the vault as an overlay
// on a fresh in-memory layer, which depends on the vault's path and the
// layer's size alone.
type aheadPlan struct {
	Mount  bool  `json:"mount"` // the wall has the new root at all
	RunAs  *User `json:"run_as,omitempty"`
	PidMax int   `json:"pid_max"` // pid_max of the call's /proc; 0 for none
	// Overlay is the call's overlay on an in-memory layer; nil for none,
	// or one on disk (its folders are the call's).
	Overlay *aheadOverlay `json:"overlay,omitempty"`
	// Homes are the call's home and the hidden homes of the host, each a
	// fresh tmpfs (homesOf): the same for every call of a server.
	Homes []string `json:"homes,omitempty"`
	// Caps: the call drops every capability, so the bounding set may be
	// emptied ahead (it bounds only what an exec gains, nothing the
	// helper does before its own).
	Caps bool `json:"caps,omitempty"`
}

// aheadOverlay is the overlay a helper started ahead mounts: the vault
// at Vault over a tmpfs sized by Memory.
type aheadOverlay struct {
	Vault  string      `json:"vault"`
	Memory MemoryLayer `json:"memory"`
}

// aheadOf is what a helper started ahead of the call p may build.
func aheadOf(p *helperPlan) aheadPlan {
	w := p.Wall
	a := aheadPlan{Mount: w.Layers.Mount, RunAs: w.RunAs}
	if w.Layers.PidMax && w.Layers.Mount {
		a.PidMax = int(w.Limits.Procs)
	}
	if w.Layers.Mount && w.Overlay != nil && w.Overlay.Memory != nil {
		a.Overlay = &aheadOverlay{Vault: w.Vault, Memory: *w.Overlay.Memory}
	}
	if w.Layers.Mount {
		a.Homes = homesOf(w)
	}
	a.Caps = w.Layers.Caps
	return a
}

// IsHelper reports whether this process was started as the wall's helper.
func IsHelper(args []string) bool { return len(args) > 1 && args[1] == HelperArg }

// Helper is the wall's helper: it builds the call's wall inside the new
// namespaces and execs bash. It returns only on failure, with the exit
// status to use; the reason has gone to the status pipe and stderr.
func Helper() (code int) {
	// Credentials, no_new_privs and capabilities are per thread: do them
	// all on this one and exec from it.
	runtime.LockOSThread()
	status := os.NewFile(statusFD, "status")
	fail := func(err error) int {
		msg := "vaultgate wall: " + err.Error()
		if status != nil {
			status.WriteString("error " + msg + "\n")
		}
		fmt.Fprintln(os.Stderr, msg)
		return 125
	}
	defer func() {
		if r := recover(); r != nil {
			code = fail(fmt.Errorf("panic: %v", r)) // fail closed
		}
	}()
	// Nothing inherited beyond 0–2, the plan and the status pipe reaches
	// bash: a descriptor open on the vault from outside would be a way
	// around every mount.
	if err := unix.CloseRange(statusFD+1, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return fail(fmt.Errorf("close_range: %w", err))
	}
	unix.CloseOnExec(planFD)
	unix.CloseOnExec(statusFD)
	p, err := readPlan(planFD, "the plan")
	if err != nil {
		return fail(err)
	}
	if p.Probe {
		rep := probeHere(p)
		json.NewEncoder(status).Encode(rep)
		return 0
	}
	var pre *root
	if p.Ahead != nil {
		// Started ahead: build what the call can't change, then wait for it.
		if pre, err = prepareAhead(p); err != nil {
			return fail(err)
		}
		warmDecoder()
		call, err := readPlan(callPlanFD, "the call's plan") // close-on-exec since close_range
		if err != nil {
			return fail(err)
		}
		if err := agrees(p, call); err != nil {
			return fail(err)
		}
		p = call
	}
	if p.Wall == nil {
		return fail(errors.New("no wall in the plan"))
	}
	if err := raise(p, pre); errors.Is(err, errStaleAhead) {
		return 125 // no word: the server makes the call again
	} else if err != nil {
		return fail(err)
	}
	status.WriteString("ready\n")
	err = unix.Exec(p.Bash, p.Args, p.Env)
	return fail(fmt.Errorf("exec %s: %w", p.Bash, err))
}

// readPlan reads and decodes the plan on descriptor fd, to its end.
func readPlan(fd uintptr, what string) (*helperPlan, error) {
	f := os.NewFile(fd, what)
	if f == nil {
		return nil, fmt.Errorf("no descriptor for %s", what)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return decodePlan(b)
}

// decodePlan reads a plan strictly: a plan of another version, or with a
// field this helper does not know, is refused rather than half obeyed.
func decodePlan(b []byte) (*helperPlan, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p helperPlan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	if p.Version != planVersion {
		return nil, fmt.Errorf("the plan is version %d, this helper reads version %d: the helper and the server are of different builds", p.Version, planVersion)
	}
	return &p, nil
}

// prepareAhead builds, for a helper started ahead, the part of the new
// root that its first plan allows; nil when the wall has no new root.
func prepareAhead(p *helperPlan) (*root, error) {
	a := p.Ahead
	if os.Getpid() != 1 {
		return nil, errors.New("not at pid 1 of a pid namespace of its own")
	}
	if !a.Mount {
		return nil, nil
	}
	ns, err := mountNS()
	if err != nil || ns == p.HostMNT || p.HostMNT == 0 {
		// Never touch the host's mounts.
		return nil, fmt.Errorf("not in a mount namespace of its own (%v)", err)
	}
	wallPidMax = a.PidMax
	r, err := prepareRoot(a.RunAs)
	if err != nil {
		return nil, err
	}
	inUserNSOnce()
	if a.Caps {
		if err := dropBounding(); err != nil {
			return nil, err
		}
		boundingDropped = true
	}
	if err := r.makeHomes(a.Homes); err != nil {
		return nil, err
	}
	if a.Overlay == nil {
		return r, nil
	}
	// The overlay too: the upper layer is empty and the lower is read
	// only through it, so a vault changed meanwhile is seen as it is when
	// the command looks (the call's start is taken after this, and
	// finishRoot checks that the folder below is still the vault's).
	w := &Wall{Vault: a.Overlay.Vault, Overlay: &Overlay{Memory: &a.Overlay.Memory}}
	if r.lower, err = mountOverlay(w, p.UserNS); err != nil {
		return nil, fmt.Errorf("the vault %s as an overlay: %w", w.Vault, err)
	}
	r.vault = w.Vault
	return r, nil
}

// errStaleAhead is a helper started ahead whose overlay is over a folder
// that is no longer the vault's (moved away, and another made in its
// place): it ends without a word, having run nothing, and the call is
// made again with a helper of its own.
var errStaleAhead = errors.New("the overlay mounted ahead is not over the vault's folder")

// warmDecoder decodes warmPlan and drops it: encoding/json learns each
// type's fields on first sight, and the code that reads each kind of
// value is paged in on its first use, which cost a call's plan 0.1-0.3
// ms after it had come.
func warmDecoder() { decodePlan(warmPlan()) }

// warmPlan is a plan with every part a wall can have, each field set
// (non-ASCII, escaped and long strings among them).
func warmPlan() []byte {
	path := "/srv/хранилище/💬 чаты/a\"b<c>&d\u2028" + strings.Repeat("x", 300)
	w := &Wall{
		Vault: path, Home: path, Hide: []string{path},
		Mounts:       []Mount{{Path: path, Kind: MountRW, Zone: "edit", Dir: true, MakePoint: true}, {Path: path, Kind: MountEmpty}},
		Grants:       []Grant{{Path: path, Access: AccessWrite, Zone: "write"}},
		Scratch:      []Grant{{Path: path, Access: AccessWrite}},
		TmpDir:       path,
		Placeholders: []Placeholder{{Path: path, Dir: true}},
		Network:      true, RunAs: &User{Name: "u", UID: 1, GID: 1},
		Limits:   DefaultLimits,
		Layers:   Layers{Mount: true, Net: true, Landlock: 7, NoNew: true, Caps: true, Rlimits: true, PidMax: true, RunAs: true, Overlay: true, MemoryLayer: true},
		Required: true, Overlay: &Overlay{Upper: path, Work: path, Memory: &MemoryLayer{MaxBytes: 1 << 30, MaxFiles: 1000}},
		HostMountNS: 1 << 40,
	}
	p := helperPlan{Version: planVersion, Wall: w, Bash: path, Args: []string{path, path}, Env: []string{"PATH=" + path, "LANG=ru_RU.UTF-8"},
		Dir: path, UserNS: true, HostMNT: 1 << 40}
	b, _ := json.Marshal(&p)
	return b
}

// agrees checks that the call's plan is one its helper, started ahead
// with plan ahead, was ready for: the same host, user namespace, and
// root.
func agrees(ahead, call *helperPlan) error {
	if call.Wall == nil || call.Ahead != nil || call.Probe {
		return errors.New("the call's plan is not a wall's")
	}
	want := aheadOf(call)
	got := *ahead.Ahead
	sameUser := (want.RunAs == nil) == (got.RunAs == nil) && (want.RunAs == nil || *want.RunAs == *got.RunAs)
	sameOverlay := (want.Overlay == nil) == (got.Overlay == nil) && (want.Overlay == nil || *want.Overlay == *got.Overlay)
	if call.HostMNT != ahead.HostMNT || call.Wall.HostMountNS != ahead.HostMNT || call.UserNS != ahead.UserNS ||
		want.Mount != got.Mount || want.PidMax != got.PidMax || !sameUser || !sameOverlay || !slices.Equal(want.Homes, got.Homes) ||
		want.Caps != got.Caps {
		return errors.New("the call's plan is not the one this helper was started ahead for")
	}
	return nil
}

// raise builds the wall from the outside in: the mounts while it may still
// mount, then limits, the bounding set, the user switch, no_new_privs,
// Landlock, and the last capabilities, since each step takes away what the
// ones before it needed. pre is the root a helper started ahead began
// (prepareAhead), or nil.
func raise(p *helperPlan, pre *root) error {
	w := p.Wall
	L := w.Layers
	if os.Getpid() != 1 {
		return errors.New("not at pid 1 of a pid namespace of its own")
	}
	if L.PidMax && L.Mount {
		wallPidMax = int(w.Limits.Procs)
	}
	if L.Mount {
		if pre == nil {
			// (A helper started ahead checked this in prepareAhead, for
			// the same host namespace: agrees.)
			ns, err := mountNS()
			if err != nil || ns == w.HostMountNS || w.HostMountNS == 0 {
				// Never touch the host's mounts.
				return fmt.Errorf("not in a mount namespace of its own (%v)", err)
			}
			if pre, err = prepareRoot(w.RunAs); err != nil {
				return err
			}
		}
		if err := finishRoot(pre, w, p.UserNS); err != nil {
			return err
		}
	} else if pre != nil {
		return errors.New("a root was begun for a wall that has none")
	}
	dir := p.Dir
	if err := unix.Chdir(dir); err != nil {
		return fmt.Errorf("chdir %s: %w", dir, err)
	}
	if L.Rlimits {
		if err := setLimits(w); err != nil {
			return err
		}
	}
	if L.Caps && !boundingDropped {
		if err := dropBounding(); err != nil {
			return err
		}
	}
	if w.RunAs != nil {
		if !L.RunAs {
			return errors.New("run_as is set but the server can't switch users")
		}
		if err := switchUser(w.RunAs); err != nil {
			return err
		}
	} else if !p.UserNS && os.Geteuid() == 0 {
		if err := unix.Setgroups(nil); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
	}
	if L.NoNew {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
	}
	if L.Landlock > 0 {
		if err := restrictLandlock(w, L.Landlock); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if L.Caps {
		if err := dropCaps(); err != nil {
			return err
		}
	}
	// A change of credentials clears the parent-death signal: set it again,
	// so the call dies with the server.
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	return nil
}

func mountNS() (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// root is the new root under construction: the host is at /oldroot, the
// new root at /newroot. tmpfs records the devices of the tmpfs mounts the
// wall made, the only places where it may create a mount point.
type root struct {
	tmpfs map[uint64]bool
	empty []string // covers to make read-only once their children are in
	uid   int      // owner of home (the run_as user, or the server)
	gid   int
	// vault is the vault's path when it is an overlay (mounted at
	// overlayStage): its writable zones are bound from there.
	vault string
	// lower is the folder below an overlay mounted ahead (prepareAhead).
	lower *unix.Stat_t
	// homes are the homes made (makeHomes); nil for none yet.
	homes []string
}

const (
	oldRoot = "/oldroot"
	newRoot = "/newroot"
)

// The new root is built in two parts: prepareRoot, which depends on no
// zone (and which a helper started ahead does before its call comes), and
// finishRoot, the call's own.

// prepareRoot is the part of the new root that depends on no zone:
// the mounts made private, the host moved aside, and the new root's
// system folders, /proc, /dev and scratch folders.
func prepareRoot(runAs *User) (*root, error) {
	r := &root{tmpfs: map[uint64]bool{}, uid: os.Getuid(), gid: os.Getgid()}
	if runAs != nil {
		r.uid, r.gid = runAs.UID, runAs.GID
	}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *root) prepare() error {
	// Nothing done here may reach the host's mount table.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	// A scratch tmpfs to pivot into, so the host stays reachable at
	// /oldroot while the new root is built beside it.
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=64k"); err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	for _, d := range []string{"/tmp" + oldRoot, "/tmp" + newRoot} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if err := unix.PivotRoot("/tmp", "/tmp"+oldRoot); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := r.tmpfsAt(newRoot, "mode=0755"); err != nil {
		return err
	}
	if err := r.system(); err != nil {
		return err
	}
	if err := r.proc(); err != nil {
		return err
	}
	if err := r.dev(); err != nil {
		return err
	}
	scratch := []string{"/tmp", "/var/tmp", "/run"}
	for _, d := range scratch {
		opt := "mode=1777"
		if d == "/run" {
			opt = "mode=0755"
		}
		if err := r.mkdirOwn(newRoot + d); err != nil {
			return err
		}
		if err := r.tmpfsAt(newRoot+d, opt); err != nil {
			return err
		}
	}
	return nil
}

// finishRoot is the rest of the new root: the call's home and hidden
// folders, the vault and its zones, everything made read-only, and the
// pivot into the new root.
func finishRoot(r *root, w *Wall, userNS bool) error {
	if homes := homesOf(w); r.homes == nil {
		if err := r.makeHomes(homes); err != nil {
			return err
		}
	} else if !slices.Equal(r.homes, homes) {
		return errors.New("homes were made ahead for another wall")
	}
	switch {
	case r.lower != nil:
		// Mounted ahead, for this vault and layer (agrees): still over
		// the folder at the vault's path?
		if w.Overlay == nil || w.Overlay.Memory == nil || w.Vault != r.vault {
			return errors.New("an overlay was mounted ahead for another wall")
		}
		if err := sameFolder(oldRoot+w.Vault, r.lower); err != nil {
			return err
		}
	case w.Overlay != nil:
		if _, err := mountOverlay(w, userNS); err != nil {
			return fmt.Errorf("the vault %s as an overlay: %w", w.Vault, err)
		}
		r.vault = w.Vault
	}
	for _, m := range w.Mounts {
		if err := r.zone(m); err != nil {
			return fmt.Errorf("%s (%s): %w", m.Path, m.Zone, err)
		}
	}
	for i := len(r.empty) - 1; i >= 0; i-- {
		if err := remountRO(r.empty[i]); err != nil {
			return err
		}
	}
	if err := remountRO(newRoot + "/dev"); err != nil {
		return err
	}
	if err := remountRO(newRoot); err != nil {
		return err
	}
	// Into the new root; the old one (and the host with it) is detached.
	if err := unix.Chdir(newRoot); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into the new root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the old root: %w", err)
	}
	return unix.Chdir("/")
}

// homesOf are the folders of w that get a fresh, empty tmpfs of the
// user's: the call's home, and the host's homes it hides.
func homesOf(w *Wall) []string {
	var homes []string
	for _, h := range append(slices.Clip(w.Hide), w.Home) {
		if h != "" {
			homes = append(homes, h)
		}
	}
	return homes
}

// makeHomes covers each of homes with a fresh tmpfs of the user's.
func (r *root) makeHomes(homes []string) error {
	for _, h := range homes {
		if err := r.mkdirOwn(newRoot + h); err != nil {
			return fmt.Errorf("home %s: %w", h, err)
		}
		if err := r.tmpfsAt(newRoot+h, fmt.Sprintf("mode=0700,uid=%d,gid=%d", r.uid, r.gid)); err != nil {
			return err
		}
	}
	r.homes = append([]string{}, homes...)
	return nil
}

// tmpfsAt mounts a fresh tmpfs at dst (a path in the new root, made by the
// wall) and remembers it as the wall's own.
func (r *root) tmpfsAt(dst, opts string) error {
	if err := unix.Mount("tmpfs", dst, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts+",size=16g"); err != nil {
		return fmt.Errorf("tmpfs at %s: %w", dst, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dst, &st); err != nil {
		return err
	}
	r.tmpfs[st.Dev] = true
	return nil
}

// mkdirOwn creates dst and its missing parents, each only inside a tmpfs of
// the wall's own: a mount point is never made on the host.
func (r *root) mkdirOwn(dst string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dst, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%s is not a folder", dst)
		}
		return nil
	}
	parent := filepath.Dir(dst)
	if err := r.mkdirOwn(parent); err != nil {
		return err
	}
	if err := unix.Lstat(parent, &st); err != nil {
		return err
	}
	if !r.tmpfs[st.Dev] {
		return fmt.Errorf("mount point %s is missing, and its folder is the host's", dst)
	}
	if err := unix.Mkdir(dst, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return err
	}
	return nil
}

// touchOwn creates an empty file dst as a mount point, inside the wall's own tmpfs.
func (r *root) touchOwn(dst string) error {
	if err := r.mkdirOwn(filepath.Dir(dst)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dst, &st); err == nil {
		return nil
	}
	if err := unix.Lstat(filepath.Dir(dst), &st); err != nil {
		return err
	}
	if !r.tmpfs[st.Dev] {
		return fmt.Errorf("mount point %s is missing, and its folder is the host's", dst)
	}
	fd, err := unix.Open(dst, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// openNoFollow opens an absolute path as O_PATH with no symlink anywhere
// on it: a mount is made on exactly the folder the plan names, never
// where a link swapped in would lead.
func openNoFollow(p string) (int, error) {
	return unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// bind binds the host's src (a path under /oldroot) at dst (a path under
// /newroot that exists), read-only when ro.
func bind(src, dst string, ro bool) error {
	attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	if ro {
		attr |= unix.MOUNT_ATTR_RDONLY
	}
	return bindWith(src, dst, attr)
}

// bindWith binds src at dst with the mount attributes attr. Both are
// opened without following any link, and the mount is made through the
// descriptors.
func bindWith(src, dst string, attr uint64) error {
	sfd, err := openNoFollow(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer unix.Close(sfd)
	tree, err := unix.OpenTree(sfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("open_tree %s: %w", src, err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("mount_setattr %s: %w", src, err)
	}
	dfd, err := openNoFollow(dst)
	if err != nil {
		return fmt.Errorf("open %s: %w", dst, err)
	}
	defer unix.Close(dfd)
	if err := unix.MoveMount(tree, "", dfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount %s: %w", dst, err)
	}
	return nil
}

// remountRO makes the mount at dst read-only, keeping its other flags
// (a user namespace may not clear nosuid and the like).
func remountRO(dst string) error {
	fd, err := openNoFollow(dst)
	if err != nil {
		return fmt.Errorf("open %s: %w", dst, err)
	}
	defer unix.Close(fd)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("read-only %s: %w", dst, err)
	}
	return nil
}

// system binds the system folders and the parts of /etc programs need.
func (r *root) system() error {
	for _, d := range systemDirs {
		if err := r.mirror("/"+d, true); err != nil {
			return err
		}
	}
	if err := unix.Mkdir(newRoot+"/etc", 0o755); err != nil {
		return err
	}
	for _, f := range etcFiles {
		if err := r.mirror("/etc/"+f, false); err != nil {
			return err
		}
	}
	return nil
}

// mirror makes host path p appear read-only at the same path: a symlink as
// the same symlink, a folder or file by a read-only bind. A missing path
// is skipped. With top, p is directly under /.
func (r *root) mirror(p string, top bool) error {
	var st unix.Stat_t
	if err := unix.Lstat(oldRoot+p, &st); err != nil {
		return nil
	}
	dst := newRoot + p
	if !top {
		if err := r.mkdirOwn(filepath.Dir(dst)); err != nil {
			return err
		}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		target, err := os.Readlink(oldRoot + p)
		if err != nil {
			return err
		}
		return unix.Symlink(target, dst)
	case unix.S_IFDIR:
		if err := unix.Mkdir(dst, 0o755); err != nil {
			return err
		}
	case unix.S_IFREG:
		if err := r.touchOwn(dst); err != nil {
			return err
		}
	default:
		return nil // no sockets, no devices
	}
	return bind(oldRoot+p, dst, true)
}

// proc mounts a fresh /proc for the call's pid namespace, sets the
// namespace's pid_max (the process limit that holds for root too), and
// makes the kernel's knobs read-only: uid 0 may write many sysctls with
// no capability at all.
func (r *root) proc() error {
	dst := newRoot + "/proc"
	if err := unix.Mkdir(dst, 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", dst, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	if wallPidMax > 0 {
		if err := os.WriteFile(dst+"/sys/kernel/pid_max", []byte(strconv.Itoa(wallPidMax)), 0); err != nil {
			return fmt.Errorf("pid_max: %w", err)
		}
	}
	for _, p := range []string{"sys", "sysrq-trigger", "irq", "bus", "fs"} {
		q := dst + "/" + p
		if _, err := os.Lstat(q); err != nil {
			continue
		}
		if err := bind(q, q, true); err != nil {
			return err
		}
	}
	return nil
}

// wallPidMax is set from the plan before the mounts (see setLimits).
var wallPidMax int

// dev builds a minimal /dev: the harmless character devices bound from
// the host, the usual links into /proc, a private devpts and shm.
func (r *root) dev() error {
	dst := newRoot + "/dev"
	if err := unix.Mkdir(dst, 0o755); err != nil {
		return err
	}
	if err := r.tmpfsAt(dst, "mode=0755"); err != nil {
		return err
	}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if err := r.touchOwn(dst + "/" + d); err != nil {
			return err
		}
		if err := bindDev(oldRoot+"/dev/"+d, dst+"/"+d); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx",
	} {
		if err := unix.Symlink(target, dst+"/"+name); err != nil {
			return err
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := unix.Mkdir(dst+"/"+d, 0o755); err != nil {
			return err
		}
	}
	// A terminal for programs that want one; not needed, so not fatal.
	unix.Mount("devpts", dst+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
	return r.tmpfsAt(dst+"/shm", "mode=1777")
}

// bindDev binds a device node: it must keep dev (no MOUNT_ATTR_NODEV).
func bindDev(src, dst string) error {
	return bindWith(src, dst, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC)
}

// zone puts one of the plan's mounts in place.
func (r *root) zone(m Mount) error {
	dst := newRoot + m.Path
	var st unix.Stat_t
	if err := unix.Lstat(dst, &st); err != nil {
		if !m.MakePoint {
			// The plan saw it, or made a placeholder: something changed
			// it since, so nothing is certain. Fail closed.
			return fmt.Errorf("mount point gone: %w", err)
		}
		if m.Kind == MountEmpty || m.Dir {
			err = r.mkdirOwn(dst)
		} else {
			err = r.touchOwn(dst)
		}
		if err != nil {
			return err
		}
	} else if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return errors.New("became a symlink")
	}
	switch m.Kind {
	case MountRW:
		if r.vault != "" && within(m.Path, r.vault) {
			// Through the overlay: never the vault itself.
			return bind(overlayStage+strings.TrimPrefix(m.Path, r.vault), dst, false)
		}
		return bind(oldRoot+m.Path, dst, false)
	case MountRO:
		return bind(oldRoot+m.Path, dst, true)
	case MountEmpty:
		if err := unix.Lstat(dst, &st); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			if err := r.tmpfsAt(dst, "mode=0755"); err != nil {
				return err
			}
			r.empty = append(r.empty, dst)
			return nil
		}
		// A file: an empty read-only file in its place.
		if err := r.touchOwn(newRoot + "/.empty"); err != nil {
			return err
		}
		return bind(newRoot+"/.empty", dst, true)
	}
	return fmt.Errorf("unknown mount kind %q", m.Kind)
}

func setLimits(w *Wall) error {
	l := w.Limits
	set := []struct {
		res int
		v   uint64
	}{
		{unix.RLIMIT_AS, l.AS}, {unix.RLIMIT_FSIZE, l.FileSize}, {unix.RLIMIT_NOFILE, l.Files}, {unix.RLIMIT_CORE, 0},
	}
	// RLIMIT_NPROC counts per real uid (per user namespace): it bounds the
	// call only with a uid of its own (run_as) or in a user namespace.
	// Root in the host's namespace is never held by it: pid_max is.
	if w.RunAs != nil || os.Getuid() != 0 || inUserNSOnce() {
		set = append(set, struct {
			res int
			v   uint64
		}{unix.RLIMIT_NPROC, l.Procs})
	}
	for _, s := range set {
		if s.v == 0 && s.res != unix.RLIMIT_CORE {
			continue
		}
		if err := unix.Setrlimit(s.res, &unix.Rlimit{Cur: s.v, Max: s.v}); err != nil {
			return fmt.Errorf("setrlimit %d: %w", s.res, err)
		}
	}
	return nil
}

// boundingDropped: a helper started ahead emptied the bounding set before
// its call came (aheadPlan.Caps).
var boundingDropped bool

// inUserNSOnce and lastCapOnce read /proc once a helper: a helper started
// ahead reads them before its call comes (prepareAhead).
var (
	inUserNSOnce = sync.OnceValue(inUserNS)
	lastCapOnce  = sync.OnceValue(lastCap)
)

func inUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return !(len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295")
}

func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63 // drop every bit there could be; EINVAL past the last is ignored
}

// dropBounding empties the bounding set and locks root out of gaining
// capabilities on exec, while CAP_SETPCAP is still held.
func dropBounding() error {
	// Read the last capability once: it was read per bit, 41 opens of
	// /proc on every walled call.
	last := lastCapOnce()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	// linux/securebits.h: NOROOT, NOROOT_LOCKED, KEEP_CAPS_LOCKED (with
	// KEEP_CAPS off), NO_CAP_AMBIENT_RAISE and its lock.
	const bits = 1<<0 | 1<<1 | 1<<5 | 1<<6 | 1<<7
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	return nil
}

// dropCaps clears the ambient, inheritable, permitted and effective sets.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

func switchUser(u *User) error {
	// keep_caps is off (and locked so by dropBounding when the caps layer
	// is up): the switch clears every capability. The groups are this
	// thread's, as the rest (see Helper).
	if err := unix.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(u.GID, u.GID, u.GID); err != nil {
		return fmt.Errorf("setgid %d: %w", u.GID, err)
	}
	if err := syscall.Setresuid(u.UID, u.UID, u.UID); err != nil {
		return fmt.Errorf("setuid %d: %w", u.UID, err)
	}
	if os.Getuid() != u.UID || os.Geteuid() != u.UID || os.Getgid() != u.GID {
		return errors.New("the user switch did not hold")
	}
	return nil
}
