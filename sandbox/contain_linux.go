package sandbox

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// containment ends every process of a call: on a timeout, and when bash
// ends by itself but left processes behind.
type containment interface {
	layers() []string
	prepare(*launchSpec)    // before start: clone flags and the like
	started(p *os.Process)  // bash is running
	kill()                  // end every process of the call now; bash is not yet reaped
	finish(time.Time) error // bash has been reaped: make sure nothing of the call remains
}

// pidNamespace puts bash at pid 1 of a new pid namespace. When pid 1 ends,
// the kernel kills every other process of the namespace and waits for them
// before bash's parent sees it exit, so nothing the command started, in
// whatever process group or session, outlives the call. As root the clone
// needs no more; otherwise a user namespace that maps only the server's own
// uid and gid comes with it, so bash has no privilege it did not have.
type pidNamespace struct {
	bash *os.Process
	user bool
}

func (n *pidNamespace) layers() []string {
	if n.user {
		return []string{"pidns", "userns"}
	}
	return []string{"pidns"}
}

func (n *pidNamespace) prepare(s *launchSpec) {
	s.attr.Cloneflags |= syscall.CLONE_NEWPID
	if uid, gid := os.Geteuid(), os.Getegid(); uid != 0 {
		n.user = true
		s.attr.Cloneflags |= syscall.CLONE_NEWUSER
		s.attr.UidMappings, s.attr.GidMappings = userNSMaps(uid, gid, s.walled)
		s.attr.GidMappingsEnableSetgroups = false
	}
}

func (n *pidNamespace) started(p *os.Process) { n.bash = p }

// kill sends SIGKILL: bash at pid 1 of a namespace ignores every signal it
// has no handler for, SIGTERM included; SIGKILL from outside always lands.
func (n *pidNamespace) kill() { n.bash.Kill() }

func (n *pidNamespace) finish(time.Time) error { return nil }

// cloneRefused reports whether Start failed because the kernel or its
// policy refused the namespaces (no CAP_SYS_ADMIN, user namespaces off, a
// seccomp filter, the namespace limit): then no bash ran, and the sweep can
// start it instead.
func cloneRefused(err error) bool {
	for _, e := range []error{unix.EPERM, unix.EINVAL, unix.ENOSPC, unix.EUSERS, unix.ENOSYS, unix.EACCES} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// sweep is the fallback where no pid namespace can be had. bash starts a
// session of its own, and the call's processes are found in /proc, as any
// live process that is
//   - bash itself, or seen before as the call's (pid and start time);
//   - in the session or process group of one of those (`set -m` and
//     timeout(1) make new groups, not new sessions);
//   - a child of one of those;
//   - holding the call's stdout or stderr pipe (an orphan that left the
//     session but still writes to the call).
//
// While the call runs, a tracker polls /proc to learn the call's processes
// before their parents die. To end them, it stops every one it finds with
// SIGSTOP, again until a scan finds none that is not stopped (a stopped
// process can not fork), and then kills them all with SIGKILL, again until
// none is left. Every signal goes through a pidfd checked against the start
// time, so a reused pid is never hit.
//
// Its limit: a process that leaves the session, closes or redirects the
// call's pipes and loses its parent, all between two polls of the tracker (a
// deliberate daemon), is not found. The pid namespace has no such gap;
// Isolation says which one held a call.
type sweep struct {
	self   int
	pipes  map[uint64]bool // the call's stdout and stderr, by inode
	reads  []*os.File      // their read ends
	leader proc

	mu      sync.Mutex
	known   map[int]uint64 // pid → start time of each process seen as the call's
	leaders map[int]uint64 // those that lead a session or a group: its members are the call's

	stop chan struct{}
	done chan struct{}
}

func newSweep(reads []*os.File) *sweep {
	return &sweep{
		self:    os.Getpid(),
		pipes:   pipeInodes(reads...),
		reads:   reads,
		known:   map[int]uint64{},
		leaders: map[int]uint64{},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

func (s *sweep) layers() []string { return []string{"sweep"} }

func (s *sweep) prepare(*launchSpec) {}

func (s *sweep) started(p *os.Process) {
	// bash is not reaped before finish, so its /proc entry is there.
	if l, err := readProc(p.Pid); err == nil {
		s.leader = l
		s.learn(l)
	}
	go s.track()
}

// track polls /proc until stopped, often at first, when a short command
// forks and exits, and less often as the call goes on.
func (s *sweep) track() {
	defer close(s.done)
	wait := time.Millisecond
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(wait):
		}
		if all, err := allProcs(); err == nil {
			s.members(all, false)
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

func (s *sweep) learn(p proc) {
	s.known[p.pid] = p.start
	if p.pid == p.sid || p.pid == p.pgid {
		s.leaders[p.pid] = p.start
	}
}

// members returns the call's live processes among all, and remembers them.
// withPipes also looks for holders of the call's pipes, which costs a read
// of every process's descriptor table.
func (s *sweep) members(all map[int]proc, withPipes bool) map[int]proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	ours := func(p proc) bool {
		if p.pid == s.self || p.dead() || p.start < s.leader.start {
			return false
		}
		if st, ok := s.known[p.pid]; ok {
			return st == p.start
		}
		// A session or group id stays taken while any member lives, so a
		// member of one (other than its leader, checked above) is ours.
		_, sess := s.leaders[p.sid]
		_, grp := s.leaders[p.pgid]
		return (sess && p.sid != p.pid) || (grp && p.pgid != p.pid)
	}
	m := map[int]proc{}
	for _, p := range all {
		if ours(p) {
			m[p.pid] = p
		}
	}
	if withPipes && s.pipesHeld() {
		for _, p := range all {
			// The server's other children may hold the pipe for a moment
			// between fork and exec; they are not the call's.
			if _, in := m[p.pid]; in || p.pid == s.self || p.ppid == s.self || p.dead() {
				continue
			}
			if holdsPipe(p.pid, s.pipes) {
				m[p.pid] = p
			}
		}
	}
	children := map[int][]proc{}
	for _, p := range all {
		if !p.dead() && p.pid != s.self {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	queue := make([]proc, 0, len(m))
	for _, p := range m {
		queue = append(queue, p)
	}
	for len(queue) > 0 {
		p := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range children[p.pid] {
			if _, in := m[c.pid]; !in {
				m[c.pid] = c
				queue = append(queue, c)
			}
		}
	}
	for _, p := range m {
		s.learn(p)
	}
	return m
}

func (s *sweep) kill() { s.end(time.Now().Add(5 * time.Second)) }

func (s *sweep) finish(deadline time.Time) error {
	close(s.stop)
	<-s.done
	return s.end(deadline)
}

// end stops every process of the call, then kills them, until none is left.
func (s *sweep) end(deadline time.Time) error {
	stopped := map[int]proc{}
	for time.Now().Before(deadline) {
		all, err := allProcs()
		if err != nil {
			return fmt.Errorf("sandbox: sweep: %w", err)
		}
		fresh, settled := false, true
		for _, p := range s.members(all, true) {
			if q, ok := stopped[p.pid]; ok && q.start == p.start {
				// A signal is delivered when the process next runs; only
				// state T shows it can not fork any more.
				if p.state != 'T' && p.state != 't' {
					settled = false
				}
				continue
			}
			signal(p, unix.SIGSTOP)
			stopped[p.pid] = p
			fresh = true
		}
		if !fresh && settled {
			break
		}
		if !fresh {
			time.Sleep(200 * time.Microsecond)
		}
	}
	for _, p := range stopped {
		signal(p, unix.SIGKILL)
	}
	for {
		all, err := allProcs()
		if err != nil {
			return fmt.Errorf("sandbox: sweep: %w", err)
		}
		left := s.members(all, true)
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox: sweep: %d processes of the call still run", len(left))
		}
		for _, p := range left {
			signal(p, unix.SIGKILL)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

// pipesHeld reports whether any process still holds a write end of the
// call's pipes: a pipe's read end shows POLLHUP once none does. Looking for
// the holders costs a read of every descriptor table, so it is done only
// then.
func (s *sweep) pipesHeld() bool {
	for _, f := range s.reads {
		rc, err := f.SyscallConn()
		if err != nil {
			return true
		}
		held := true
		rc.Control(func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if n, err := unix.Poll(pfd, 0); err == nil && n == 1 && pfd[0].Revents&unix.POLLHUP != 0 {
				held = false
			}
		})
		if held {
			return true
		}
	}
	return false
}

// pipeInodes names pipes by inode, which both ends share.
func pipeInodes(files ...*os.File) map[uint64]bool {
	m := map[uint64]bool{}
	for _, f := range files {
		if fi, err := f.Stat(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				m[st.Ino] = true
			}
		}
	}
	return m
}

// userNSMaps maps the server's own uid and gid, and nothing else, into a
// call's user namespace. Bash alone keeps its uid there. The wall's helper
// is mapped as root of the namespace instead: it is started by execve, and
// execve drops every capability of a process whose uid is not 0 in its
// namespace, so it could build no mounts. It drops all of them itself
// before bash starts, and its root is the server's uid outside.
func userNSMaps(uid, gid int, walled bool) (uids, gids []syscall.SysProcIDMap) {
	inside := uid
	insideG := gid
	if walled {
		inside, insideG = 0, 0
	}
	return []syscall.SysProcIDMap{{ContainerID: inside, HostID: uid, Size: 1}},
		[]syscall.SysProcIDMap{{ContainerID: insideG, HostID: gid, Size: 1}}
}
