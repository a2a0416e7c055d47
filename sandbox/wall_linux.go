package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// minRequiredLandlock is the lowest Landlock ABI that wall = "required"
// accepts: ABI 3 is the first that controls truncation, without which a
// file can be emptied where it may not be changed.
const minRequiredLandlock = 3

// wallCloneflags are the namespaces of the wall, on top of the pid (and,
// when not root, user) namespace that containment asks for.
func wallCloneflags(w *Wall) uintptr {
	var f uintptr
	if w.Layers.Mount {
		f |= unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
	}
	if w.Layers.Net && !w.Network {
		f |= unix.CLONE_NEWNET
	}
	return f
}

// wallLaunch turns bash's launch into the helper's: the wall's Helper, or
// /proc/self/exe (this very binary, even if the file was replaced since),
// with HelperArg; the helper gets no environment of its own (bash's is in
// the plan). It returns the call's plan, which launch puts on fd 3 (or a
// spare reads on fd 5), and the first plan of a helper started ahead for a
// call like this one.
func wallLaunch(c *call, bash launchSpec) (spec launchSpec, plan, first []byte, err error) {
	w := c.wall
	mnt, err := mountNS()
	if err != nil {
		return launchSpec{}, nil, nil, fmt.Errorf("sandbox: wall: own mount namespace: %w", err)
	}
	w.HostMountNS = mnt
	p := helperPlan{Version: planVersion, Wall: w, Bash: bash.path, Args: bash.args, Env: bash.env, Dir: bash.dir, UserNS: os.Geteuid() != 0, HostMNT: mnt}
	if p.Env == nil {
		p.Env = []string{}
	}
	if w.TmpDir != "" {
		p.Env = mergeEnv(p.Env, []string{"TMPDIR=" + w.TmpDir})
	}
	if plan, err = json.Marshal(&p); err != nil {
		return launchSpec{}, nil, nil, fmt.Errorf("sandbox: wall: plan: %w", err)
	}
	// The first plan of a helper started ahead for a call like this one.
	ahead := aheadOf(&p)
	if first, err = json.Marshal(&helperPlan{Version: planVersion, Ahead: &ahead, UserNS: p.UserNS, HostMNT: mnt}); err != nil {
		return launchSpec{}, nil, nil, fmt.Errorf("sandbox: wall: plan: %w", err)
	}
	spec = bash
	spec.path = helperPath(w.Helper)
	spec.args = []string{HelperBinary, HelperArg}
	spec.env = []string{}
	spec.dir = "/"
	spec.files = nil
	spec.walled = true
	spec.attr.Cloneflags |= wallCloneflags(w)
	return spec, plan, first, nil
}

// statusSocket is the helper's status channel (server's end, helper's
// end): a socket, not a pipe, since the helper hands an in-memory layer's
// upper folder over it (SCM_RIGHTS), one message a packet. The server's
// end is non-blocking, so that its reads honour a deadline (see run).
func statusSocket() (*os.File, *os.File, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		return nil, nil, err
	}
	return os.NewFile(uintptr(pair[0]), "status"), os.NewFile(uintptr(pair[1]), "status"), nil
}

// planFile writes the plan to a sealed memfd: no size limit, no writer
// left behind, and nothing the helper could block on.
func planFile(p *helperPlan) (*os.File, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("sandbox: wall: plan: %w", err)
	}
	return planFileOf(b)
}

// planFileOf is planFile of a plan already encoded.
func planFileOf(b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate("vaultgate-wall-plan", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("sandbox: wall: memfd: %w", err)
	}
	f := os.NewFile(uintptr(fd), "plan")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("sandbox: wall: plan: %w", err)
	}
	unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readStatus reads what the helper said: "ready" just before it exec'd
// bash, or "error …", and "upper" with the in-memory layer's upper folder
// when the plan has one. A helper that died before it said anything is a
// failure too. The upper folder is returned even then, for the caller
// to close.
func readStatus(r *os.File, wantUpper bool) (*os.File, error) {
	defer r.Close()
	var upper *os.File
	fail := func(err error) (*os.File, error) { return upper, err }
	raw, err := r.SyscallConn()
	if err != nil {
		return fail(err)
	}
	buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(4*4))
	ready := false
	for {
		var n, oobn int
		var rerr error
		recv := func(fd uintptr) bool {
			n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
			return rerr != unix.EAGAIN
		}
		if err := raw.Read(recv); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				return fail(err)
			}
			// Past the deadline (run's): what is in the socket still
			// counts, but nothing more is waited for.
			if err := raw.Control(func(fd uintptr) { recv(fd) }); err != nil {
				return fail(err)
			}
			if rerr == unix.EAGAIN {
				return fail(errStatusHeld)
			}
		}
		if rerr == unix.EINTR {
			continue
		}
		if rerr != nil {
			return fail(fmt.Errorf("vaultgate wall: the status socket: %w", rerr))
		}
		fds, err := unixRights(oob[:oobn])
		if err != nil {
			return fail(err)
		}
		if n == 0 && oobn == 0 {
			break
		}
		line := strings.TrimSuffix(string(buf[:n]), "\n")
		switch {
		case line+"\n" == upperMsg && len(fds) == 1 && upper == nil && wantUpper:
			upper = os.NewFile(uintptr(fds[0]), "upper")
			if err := checkUpper(upper); err != nil {
				return fail(fmt.Errorf("vaultgate wall: %w", err))
			}
			continue
		case len(fds) > 0:
			for _, fd := range fds {
				unix.Close(fd)
			}
			return fail(errors.New("vaultgate wall: the helper handed over a descriptor it should not have"))
		case line == "ready":
			ready = true
		case strings.HasPrefix(line, "error "):
			return fail(errors.New(strings.TrimPrefix(line, "error ")))
		}
	}
	if !ready {
		return fail(errHelperEnded)
	}
	if wantUpper && upper == nil {
		return fail(errors.New("vaultgate wall: the helper did not hand over the in-memory layer"))
	}
	return upper, nil
}

// errHelperEnded is a helper that ended (or was killed) without saying
// anything: bash did not start, since "ready" comes before its exec.
var errHelperEnded = errors.New("vaultgate wall: the helper ended before bash started")

// errStatusHeld is a status socket still open when every process of the
// call had ended: something outside the call holds the helper's end, and
// what the helper said can't be known to be all it said.
var errStatusHeld = errors.New("vaultgate wall: the helper's status socket stayed open after every process of the call had ended (a process outside the call holds it)")

// unixRights are the descriptors in a message's control data.
func unixRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("vaultgate wall: the status socket: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds, nil
}

// wallLayers names the wall's layers that were up, for Result.Isolation.
func wallLayers(w *Wall) []string {
	L := w.Layers
	var out []string
	if L.Mount {
		out = append(out, "mountns", "ipcns", "utsns")
	}
	if L.Net && !w.Network {
		out = append(out, "netns")
	}
	if L.Landlock > 0 {
		out = append(out, "landlock-abi"+strconv.Itoa(L.Landlock))
	}
	if L.NoNew {
		out = append(out, "nonewprivs")
	}
	if L.Caps {
		out = append(out, "caps-dropped")
	}
	if L.Rlimits {
		out = append(out, "rlimits")
	}
	if L.PidMax && L.Mount {
		out = append(out, "pidmax-"+strconv.FormatUint(w.Limits.Procs, 10))
	}
	if w.Overlay != nil {
		out = append(out, "overlay")
		if w.Overlay.Memory != nil {
			out = append(out, "layer:memory")
		} else {
			out = append(out, "layer:disk")
		}
	}
	if w.RunAs != nil {
		out = append(out, "uid:"+w.RunAs.Name)
	}
	return append(out, "helper:"+HelperName(w.Helper))
}

// makePlaceholders creates the plan's placeholders that are still absent,
// and returns a function that removes those it made, if still empty.
func makePlaceholders(ps []Placeholder) (func(), error) {
	type made struct {
		path string
		ino  uint64
		dir  bool
	}
	var done []made
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			m := done[i]
			var st unix.Stat_t
			if unix.Lstat(m.path, &st) != nil || st.Ino != m.ino {
				continue // replaced meanwhile: not ours any more
			}
			if m.dir {
				unix.Rmdir(m.path) // fails, and keeps it, if anything is in it
			} else if st.Size == 0 {
				unix.Unlink(m.path)
			}
		}
	}
	for _, p := range ps {
		var err error
		if p.Dir {
			err = unix.Mkdir(p.Path, 0o755)
		} else {
			var fd int
			fd, err = unix.Open(p.Path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o444)
			if err == nil {
				unix.Close(fd)
			}
		}
		if errors.Is(err, unix.EEXIST) {
			continue // there now: the helper covers whatever it is
		}
		if err != nil {
			undo()
			return nil, fmt.Errorf("sandbox: wall: placeholder %s: %w", p.Path, err)
		}
		var st unix.Stat_t
		if unix.Lstat(p.Path, &st) == nil {
			done = append(done, made{p.Path, st.Ino, p.Dir})
		}
	}
	return undo, nil
}

var (
	probeMu sync.Mutex
	probed  = map[string]Probe{}
)

// ProbeWall reports which layers the wall can raise here, by starting
// helper (as WallConfig.Helper names it) in probe mode: a helper that
// can't start or answer raises none. The result is cached per helper: the
// kernel does not change under a running server.
func ProbeWall(helper string) Probe {
	probeMu.Lock()
	defer probeMu.Unlock()
	p, ok := probed[helper]
	if !ok {
		p = probeWall(helperPath(helper))
		probed[helper] = p
	}
	return p
}

// RememberProbe seeds ProbeWall's cache for helper with what an earlier
// probe of the same helper found, as a process that starts for one call
// (the hook) keeps it across its runs. A stale probe only misleads the
// prediction: the wall itself is raised, or refused, when a call runs.
func RememberProbe(helper string, p Probe) {
	probeMu.Lock()
	defer probeMu.Unlock()
	probed[helper] = p
}

// probeReport is what the helper says in probe mode.
type probeReport struct {
	Mount    string `json:"mount"` // "" ok, else the error
	PidMax   string `json:"pidmax"`
	Landlock int    `json:"landlock"`
	NoNew    string `json:"nonewprivs"`
	Caps     string `json:"caps"`
	Rlimits  string `json:"rlimits"`
	Overlay  string `json:"overlay"`
	// MemoryLayer is empty when a tmpfs can hold the overlay's upper layer.
	MemoryLayer string `json:"memory_layer"`
}

func probeWall(helper string) Probe {
	p := Probe{Missing: map[string]string{}, Root: os.Geteuid() == 0}
	flags := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWNET)
	rep, err := runProbe(helper, flags)
	if err != nil {
		// Find which namespace is refused, one at a time.
		for _, ns := range []struct {
			name string
			flag uintptr
		}{{"pid namespace", unix.CLONE_NEWPID}, {"mount namespace", unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS}, {"network namespace", unix.CLONE_NEWNET}} {
			if _, err := runProbe(helper, unix.CLONE_NEWPID|ns.flag); err != nil {
				p.Missing[ns.name] = err.Error()
				flags &^= ns.flag
			}
		}
		if flags&unix.CLONE_NEWPID == 0 {
			p.Missing["mount namespace"] = "needs the pid namespace"
			return p
		}
		if rep, err = runProbe(helper, flags); err != nil {
			p.Missing["mount namespace"] = err.Error()
			return p
		}
	}
	p.Layers.Net = flags&unix.CLONE_NEWNET != 0
	p.Layers.Mount = flags&unix.CLONE_NEWNS != 0 && rep.Mount == ""
	if rep.Mount != "" {
		p.Missing["mount namespace"] = rep.Mount
	}
	p.Layers.Landlock = rep.Landlock
	if rep.Landlock < minRequiredLandlock {
		p.Missing["Landlock"] = fmt.Sprintf("ABI %d, need at least %d", rep.Landlock, minRequiredLandlock)
	}
	set := func(ok *bool, name, why string) {
		*ok = why == ""
		if why != "" {
			p.Missing[name] = why
		}
	}
	set(&p.Layers.NoNew, "no_new_privs", rep.NoNew)
	set(&p.Layers.Caps, "dropping capabilities", rep.Caps)
	set(&p.Layers.Rlimits, "rlimits", rep.Rlimits)
	set(&p.Layers.PidMax, "pid_max per pid namespace", rep.PidMax)
	set(&p.Layers.Overlay, "overlay", rep.Overlay)
	set(&p.Layers.MemoryLayer, "in-memory layer", rep.MemoryLayer)
	if !p.Layers.Mount {
		p.Layers.Overlay = false
	}
	if !p.Layers.Overlay {
		p.Layers.MemoryLayer = false
	}
	p.Layers.RunAs = p.Root
	if !p.Root {
		p.Missing["run_as"] = "the server does not run as root"
	}
	return p
}

// runProbe starts the helper in probe mode with the given namespaces.
func runProbe(helper string, flags uintptr) (probeReport, error) {
	var rep probeReport
	mnt, err := mountNS()
	if err != nil {
		return rep, err
	}
	plan := helperPlan{Version: planVersion, Probe: true, HostMNT: mnt, UserNS: os.Geteuid() != 0}
	pf, err := planFile(&plan)
	if err != nil {
		return rep, err
	}
	defer pf.Close()
	sr, sw, err := os.Pipe()
	if err != nil {
		return rep, err
	}
	defer sr.Close()
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL, Setsid: true}
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings, attr.GidMappings = userNSMaps(uid, gid, true)
		attr.GidMappingsEnableSetgroups = false
	}
	cmd := &exec.Cmd{Path: helper, Args: []string{HelperBinary, HelperArg}, Env: []string{},
		Dir: "/", ExtraFiles: []*os.File{pf, sw}, SysProcAttr: attr}
	if err := cmd.Start(); err != nil {
		sw.Close()
		return rep, err
	}
	sw.Close()
	done := make(chan error, 1)
	go func() { done <- json.NewDecoder(sr).Decode(&rep) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		err = errors.New("the probe did not answer")
	}
	cmd.Wait()
	if err != nil {
		return rep, fmt.Errorf("the helper %s did not answer the probe (is its main hooked to sandbox.Helper?): %w", helper, err)
	}
	return rep, nil
}

// probeHere is the helper's side of the probe: it tries each layer in the
// namespaces it was started in, and says which held.
func probeHere(p *helperPlan) probeReport {
	rep := probeReport{Landlock: landlockABI()}
	errs := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	ns, err := mountNS()
	inOwn := err == nil && os.Getpid() == 1 && p.HostMNT != 0 && ns != p.HostMNT
	if inOwn {
		err = unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		if err == nil {
			err = unix.Mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k")
		}
		if err == nil {
			d := "/tmp/proc"
			if err = os.Mkdir(d, 0o555); err == nil {
				if err = unix.Mount("proc", d, "proc", 0, ""); err == nil {
					rep.PidMax = errs(os.WriteFile(filepath.Join(d, "sys/kernel/pid_max"), []byte("4096"), 0))
				} else {
					rep.PidMax = err.Error()
					err = nil
				}
			}
		}
		rep.Mount = errs(err)
		rep.Overlay = rep.Mount
		if err == nil {
			d := "/tmp/overlay"
			if err = os.Mkdir(d, 0o700); err == nil {
				err = probeOverlay(d, p.UserNS)
			}
			rep.Overlay = errs(err)
		}
		rep.MemoryLayer = rep.Overlay
		if rep.Overlay == "" {
			rep.MemoryLayer = errs(probeMemoryLayer("/tmp", p.UserNS))
		}
	} else {
		rep.Mount = fmt.Sprintf("not in namespaces of its own (ns %d, pid %d, %v)", ns, os.Getpid(), err)
		rep.PidMax = rep.Mount
		rep.Overlay = rep.Mount
		rep.MemoryLayer = rep.Mount
	}
	rep.Rlimits = errs(unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{}))
	rep.NoNew = errs(unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	rep.Caps = errs(dropBounding())
	if rep.Caps == "" {
		rep.Caps = errs(dropCaps())
	}
	return rep
}

// lookupUser resolves run_as.
func lookupUser(name string) (*User, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("sandbox: run_as %q: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("sandbox: run_as %q: bad uid/gid", name)
	}
	if uid == 0 {
		return nil, fmt.Errorf("sandbox: run_as %q is root", name)
	}
	return &User{Name: name, UID: uid, GID: gid}, nil
}
