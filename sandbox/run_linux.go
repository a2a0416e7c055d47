package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// drainGrace is how long the output pipes are read after every process of
// the call has ended: enough for what is still in them, and a bound should
// something outside the call hold them open.
const drainGrace = time.Second

// sweepBudget bounds the sweep that makes sure nothing of the call is left.
const sweepBudget = 5 * time.Second

func run(ctx context.Context, c *call) (Result, error) {
	res, err := runWith(ctx, c, true)
	if errors.Is(err, errSpareDied) {
		// The helper started ahead died before bash started (a helper's
		// "ready" comes before its exec): nothing ran, and a helper of
		// the call's own makes it.
		return runWith(ctx, c, false)
	}
	return res, err
}

// errSpareDied is a call whose helper, started ahead, ended before bash
// started.
var errSpareDied = errors.New("sandbox: the helper started ahead ended before bash started")

// runWith makes the call, with a helper started ahead if useSpare and
// there is one.
func runWith(ctx context.Context, c *call, useSpare bool) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: -1}, fmt.Errorf("sandbox: %w", err)
	}
	spec, err := bashLaunch(c)
	if err != nil {
		return Result{}, err
	}
	var plan, first []byte
	if c.wall != nil {
		undo, err := makePlaceholders(c.wall.Placeholders)
		if err != nil {
			return Result{}, err
		}
		// Every process of the call has ended when run returns.
		defer undo()
		if spec, plan, first, err = wallLaunch(c, spec); err != nil {
			return Result{}, err
		}
		if c.ahead {
			// Last of all, once this call's processes have ended: the
			// helper of the next call (ahead_linux.go). Not while its
			// bash runs: on a machine of two cores, the clone of its
			// namespaces and its Go runtime's start took the CPU this
			// call's bash and its end were waiting for (0.5-0.9 ms of
			// every call).
			defer startAhead(spec, first)
		}
	}
	begin := time.Now()
	var l launched
	var sp *spare
	if useSpare {
		sp = takeSpareFor(c, spec, plan, first)
	}
	fromSpare := sp != nil
	switch {
	case fromSpare:
		l = sp.launched
	case plan != nil:
		pf, err := planFileOf(plan)
		if err != nil {
			return Result{}, err
		}
		if l, err = launch(c.contain, spec, pf); err != nil {
			return Result{}, err
		}
	default:
		if l, err = launch(c.contain, spec); err != nil {
			return Result{}, err
		}
	}
	defer l.close()
	// The wall's mount namespace goes when the call is over, off its path.
	defer l.mntns.release()
	l.mntns = heldNS{}
	cont, cmd, outR, errR, status := l.cont, l.cmd, l.outR, l.errR, l.status
	type wallStatus struct {
		upper *os.File
		err   error
	}
	var wallErr chan wallStatus
	if status != nil {
		wallErr = make(chan wallStatus, 1)
		wantUpper := c.wall.Overlay != nil && c.wall.Overlay.Memory != nil
		go func() {
			upper, err := readStatus(status, wantUpper)
			wallErr <- wallStatus{upper, err}
		}()
	}

	slack := maxSecretLen(c.secrets) + utf8.UTFMax
	stdout, stderr := newCapture(c.max, slack), newCapture(c.max, slack)
	var readers sync.WaitGroup
	readers.Go(func() { drain(outR, stdout) })
	readers.Go(func() { drain(errR, stderr) })

	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	var timedOut, cancelled bool
	select {
	case <-waited:
	case <-timer.C:
		timedOut = true
		cont.kill()
		<-waited
	case <-ctx.Done():
		cancelled = true
		cont.kill()
		<-waited
	}
	contErr := cont.finish(time.Now().Add(sweepBudget))
	grace := time.Now().Add(drainGrace)
	outR.SetReadDeadline(grace)
	errR.SetReadDeadline(grace)
	readers.Wait()
	if status != nil {
		// The helper's end closed at its exec or its death, and every
		// process of the call has ended: what it said is in the socket.
		// An end still open is held outside the call (a child forked
		// meanwhile that kept it), and must not hold the call: the read
		// of the status ends as the output's do.
		status.SetReadDeadline(time.Now().Add(drainGrace))
	}

	res := Result{Duration: time.Since(begin), Isolation: cont.layers()}
	if wallErr != nil {
		// The helper's status socket closes at its exec (or its death),
		// long before bash has been reaped; held open by another
		// process, its read ends within drainGrace (errStatusHeld).
		st := <-wallErr
		if err := st.err; err != nil && !timedOut && !cancelled {
			if st.upper != nil {
				st.upper.Close()
			}
			if fromSpare && errors.Is(err, errHelperEnded) {
				return Result{ExitCode: -1}, errSpareDied
			}
			return Result{ExitCode: -1, Duration: res.Duration}, fmt.Errorf("sandbox: %w", err)
		} else if err != nil {
			res.Isolation = append(res.Isolation, "wall-failed")
		} else {
			res.Isolation = append(res.Isolation, wallLayers(c.wall)...)
		}
		// Every process of the call has ended: nothing writes there now.
		res.Upper = st.upper
	}
	res.Stdout, res.StdoutCut = stdout.text(c.secrets)
	res.Stderr, res.StderrCut = stderr.text(c.secrets)
	res.Truncated = res.StdoutCut > 0 || res.StderrCut > 0
	res.ExitCode = exitCode(cmd.ProcessState)
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = int(ws.Signal())
		}
	}
	switch {
	case cancelled:
		res.ExitCode = -1
		if res.Upper != nil {
			res.Upper.Close()
			res.Upper = nil
		}
		return res, fmt.Errorf("sandbox: %w", context.Cause(ctx))
	case timedOut:
		res.TimedOut, res.ExitCode = true, ExitTimedOut
	}
	if contErr != nil && res.Upper != nil {
		res.Upper.Close()
		res.Upper = nil
	}
	return res, contErr
}

// launched is a call's first process, started, and the server's ends of
// its files.
type launched struct {
	cont    containment
	cmd     *exec.Cmd
	devnull *os.File
	outR    *os.File
	errR    *os.File
	status  *os.File // the helper's status socket; nil unwalled
	mntns   heldNS   // the helper's mount namespace, held (walled)
}

func (l *launched) close() {
	for _, f := range []*os.File{l.devnull, l.outR, l.errR, l.status} {
		if f != nil {
			f.Close()
		}
	}
	l.mntns.release()
}

// heldNS is a reference to a walled call's mount namespace, held by the
// server from the helper's start to the call's end. The last process of a
// namespace to exit tears it down before its parent hears of it: the
// wall's ~45 mounts unmounted and an RCU grace period waited for, 0.6 ms
// on every call between bash's exit and the server's wait. Held, the
// namespace outlives bash by the moment it takes the server to let it go,
// off the call's path. Nothing runs in it meanwhile, and nothing can
// enter it but through this descriptor.
type heldNS struct{ f *os.File }

// holdMountNS holds the mount namespace of the child pid (not yet reaped,
// so the pid is its). Holding is only a saving: where the kernel refuses
// it, the namespace goes at bash's exit, as it always did.
func holdMountNS(pid int) heldNS {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/mnt")
	if err != nil {
		return heldNS{}
	}
	return heldNS{f}
}

// release lets the namespace go, in the background: the teardown is done
// by whichever thread drops the last reference.
func (h heldNS) release() {
	if h.f != nil {
		go h.f.Close()
	}
}

// takeSpareFor is a helper started ahead for a walled call of a server
// that runs many (Request.Ahead), given its plan; nil otherwise.
func takeSpareFor(c *call, spec launchSpec, plan, first []byte) *spare {
	if c.wall == nil || !c.ahead || c.contain != containAuto {
		return nil
	}
	return takeSpare(spec, plan, first, c.mounts)
}

// launch starts the call's first process now: bash, or (given its plan
// files) the wall's helper, with the first plan file at planFD, the status
// socket at statusFD and the rest after them. It closes the plan files
// once the child has them, or on failure.
func launch(contain containMode, spec launchSpec, plans ...*os.File) (launched, error) {
	var l launched
	child := plans // the child's ends, closed once it has them
	defer func() {
		for _, f := range child {
			f.Close()
		}
	}()
	fail := func(err error) (launched, error) { l.close(); return launched{}, err }
	if len(plans) > 0 {
		sr, sw, err := statusSocket()
		if err != nil {
			return fail(fmt.Errorf("sandbox: wall: status socket: %w", err))
		}
		l.status = sr
		child = append(child, sw)
		spec.files = append([]*os.File{plans[0], sw}, plans[1:]...)
	}
	var err error
	if l.devnull, err = os.Open(os.DevNull); err != nil {
		return fail(fmt.Errorf("sandbox: stdin: %w", err))
	}
	var outW, errW *os.File
	if l.outR, outW, err = os.Pipe(); err != nil {
		return fail(fmt.Errorf("sandbox: stdout pipe: %w", err))
	}
	child = append(child, outW)
	if l.errR, errW, err = os.Pipe(); err != nil {
		return fail(fmt.Errorf("sandbox: stderr pipe: %w", err))
	}
	child = append(child, errW)
	cont, cmd, err := start(contain, spec, l.devnull, outW, errW, []*os.File{l.outR, l.errR})
	if err != nil {
		return fail(err)
	}
	// Only the child holds its ends now: when the call's processes are
	// gone, the readers see EOF.
	cont.started(cmd.Process)
	l.cont, l.cmd = cont, cmd
	if len(plans) > 0 {
		l.mntns = holdMountNS(cmd.Process.Pid)
	}
	return l, nil
}

// start starts bash contained as mode says: in a pid namespace where the
// kernel allows one, else (or when forced) with the sweep.
func start(mode containMode, spec launchSpec, stdin, stdout, stderr *os.File, reads []*os.File) (containment, *exec.Cmd, error) {
	if mode == containAuto || spec.walled {
		ns := &pidNamespace{}
		s := spec
		ns.prepare(&s)
		cmd := s.command(stdin, stdout, stderr)
		err := cmd.Start()
		if err == nil {
			return ns, cmd, nil
		}
		if !cloneRefused(err) || spec.walled {
			return nil, nil, fmt.Errorf("sandbox: start bash: %w", err)
		}
		// No process ran: the same command can start again with the sweep.
	}
	sw := newSweep(reads)
	s := spec
	sw.prepare(&s)
	cmd := s.command(stdin, stdout, stderr)
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("sandbox: start bash: %w", err)
	}
	return sw, cmd, nil
}

func drain(r *os.File, c *capture) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		c.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// exitCode is bash's status as bash itself would report it: 128+N for a
// process killed by signal N.
func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Supported says this system can run a bash call: contain its processes
// (a pid namespace, or the /proc sweep) and, where asked, wall it.
const Supported = true
