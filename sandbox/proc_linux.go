package sandbox

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// proc is one process as /proc/PID/stat shows it. A pid and its start time
// together name one process: a pid can be reused, the pair can not.
type proc struct {
	pid, ppid, pgid, sid int
	start                uint64 // clock ticks after boot
	state                byte
}

func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

// readProc reads /proc/PID/stat.
func readProc(pid int) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, err
	}
	return parseStat(b)
}

var errStat = errors.New("sandbox: malformed /proc stat")

// parseStat parses a stat line: "pid (comm) state ppid pgrp session … starttime …".
// comm may hold spaces and parentheses, so the fields start after the last ')'.
func parseStat(b []byte) (proc, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return proc{}, errStat
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:bytes.IndexByte(b, '(')])))
	if err != nil {
		return proc{}, errStat
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 of proc(5): state; then ppid, pgrp, session; starttime is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, errStat
	}
	p := proc{pid: pid, state: f[0][0]}
	if p.ppid, err = strconv.Atoi(f[1]); err != nil {
		return proc{}, errStat
	}
	if p.pgid, err = strconv.Atoi(f[2]); err != nil {
		return proc{}, errStat
	}
	if p.sid, err = strconv.Atoi(f[3]); err != nil {
		return proc{}, errStat
	}
	if p.start, err = strconv.ParseUint(f[19], 10, 64); err != nil {
		return proc{}, errStat
	}
	return p, nil
}

// allProcs reads every process in /proc. Processes that end while it reads
// are skipped.
func allProcs() (map[int]proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	out := make(map[int]proc, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, err := readProc(pid); err == nil {
			out[pid] = p
		}
	}
	return out, nil
}

// holdsPipe reports whether process pid has a descriptor open on one of the
// pipes, named by inode.
func holdsPipe(pid int, inodes map[uint64]bool) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		l, err := os.Readlink(dir + n)
		if err != nil || !strings.HasPrefix(l, "pipe:[") {
			continue
		}
		ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(l, "pipe:["), "]"), 10, 64)
		if err == nil && inodes[ino] {
			return true
		}
	}
	return false
}

// signal sends sig to exactly the process p names: it opens a pidfd, then
// checks that the pid still has p's start time, so a pid reused in between
// is never signalled.
func signal(p proc, sig unix.Signal) error {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	now, err := readProc(p.pid)
	if err != nil || now.start != p.start {
		return nil // gone, and its pid taken by another
	}
	err = unix.PidfdSendSignal(fd, sig, nil, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}
