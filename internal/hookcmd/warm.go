package hookcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/execcmd"
	"github.com/vaultgate/vaultgate/internal/judgesock"
	"github.com/vaultgate/vaultgate/internal/peercred"
	"github.com/vaultgate/vaultgate/server"
)

// A hook process is new for every tool call: it would open the vault,
// the audit log and the history before it could judge, and for an agent
// with [[rules.deny]] start CEL and check the rules, most of its time. A
// judge has all of that open already and answers the hook's calls over a
// Unix socket: `vaultgate hook-judge`, which vaultgate-hook starts on its
// first call, or the stdio server Claude Code starts beside it. The hook
// asks a judge first and judges cold (vaultgate hook) only when none can
// be had.
//
// The socket's folder and name are judgesock's: a hash of the config
// file's path and bytes, the agent and the vaultgate binary, so a hook
// reaches only a judge that loaded the very config it would load itself;
// an edited config has another name. The folder is the user's alone
// (0700) and not seen from inside the wall, the socket is 0600, the judge
// answers only a peer of its own uid and the hook asks only a judge of
// its own: whoever can reach it could write the audit log directly anyway.

// warmSocket is the judge's socket for agent under cfg, with this
// process's binary as the judge; "" when there is none to have.
func warmSocket(cfg *config.Config, agent string) string {
	if cfg.File == "" || cfg.Digest == "" {
		return ""
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	path, err := judgesock.Name(judgesock.Dir(), cfg.File, cfg.Digest, agent, exe)
	if err != nil {
		return ""
	}
	return path
}

// DialJudge connects to the judge for agent under cfg — a hook-judge, or
// a server that loaded the very config — or returns nil when none answers.
// vaultgate exec hands its command to it (judgesock.AskExec).
func DialJudge(cfg *config.Config, agent string) *os.File { return dialWarm(cfg, agent) }

// dialWarm connects to the judge for agent, or returns nil when none
// answers; the call is then judged cold.
func dialWarm(cfg *config.Config, agent string) *os.File {
	path := warmSocket(cfg, agent)
	if path == "" || judgesock.CheckDir(filepath.Dir(path)) != nil {
		return nil
	}
	c, err := judgesock.Dial(path)
	if err != nil {
		return nil
	}
	return c
}

// askWarm has the judge on c answer the call on stdin; anything that goes
// wrong once connected denies.
func (h *hook) askWarm(c *os.File, cfg *config.Config, agent string, stdin io.Reader) int {
	req := judgesock.Request{Config: cfg.File, Digest: cfg.Digest, Agent: agent, Exec: h.flags.Exec, ExecProblem: h.flags.ExecProblem, Env: judgesock.Environ(judgesock.HookEnv)}
	code, err := judgesock.Ask(c, req, stdin, h.stdout, h.stderr)
	if err != nil {
		return h.deny("%v", err)
	}
	return code
}

// WarmJudge answers hook calls for a server's agents.
type WarmJudge struct {
	g   *server.Gate
	cfg *config.Config
	log *log.Logger

	mu     sync.Mutex
	socks  []warmListener
	wg     sync.WaitGroup
	closed bool
	// Answered counts the calls judged, for tests and the server's log.
	answered int
	ran      int       // exec commands run
	last     time.Time // started, or last asked
}

type warmListener struct {
	ln   *net.UnixListener
	path string
	fi   os.FileInfo // the socket file as made, so Close removes only ours
}

// ListenWarm starts the warm judge for every agent of cfg, on g, which
// compiled their rules. An agent whose socket is
// served by another live server is left to it. It never fails the server:
// a judge that can't listen leaves the hook to judge cold, and says why
// on errLog.
func ListenWarm(g *server.Gate, cfg *config.Config, errLog *log.Logger) *WarmJudge {
	return ListenWarmFor(g, cfg, slices.Collect(maps.Keys(cfg.Agents)), errLog)
}

// ListenWarmFor is ListenWarm for the named agents only.
func ListenWarmFor(g *server.Gate, cfg *config.Config, agents []string, errLog *log.Logger) *WarmJudge {
	w := &WarmJudge{g: g, cfg: cfg, log: errLog, last: time.Now()}
	if !peercred.Supported {
		return w
	}
	for _, name := range agents {
		path := warmSocket(cfg, name)
		if path == "" {
			continue
		}
		l, err := listenWarm(path)
		if err != nil {
			errLog.Printf("warm hook judge for agent %q: %v (the hook judges cold)", name, err)
			continue
		}
		if l.ln == nil {
			continue // another server answers
		}
		w.socks = append(w.socks, l)
		w.wg.Add(1)
		go w.serve(l.ln, name)
	}
	return w
}

func listenWarm(path string) (warmListener, error) {
	if err := judgesock.EnsureDir(filepath.Dir(path)); err != nil {
		return warmListener{}, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		if c, derr := judgesock.Dial(path); derr == nil {
			c.Close()
			return warmListener{}, nil // live: its judge answers
		}
		// A socket left by a server that died: take its place.
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return warmListener{}, err
		}
		if ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"}); err != nil {
			return warmListener{}, err
		}
	}
	ln.SetUnlinkOnClose(false) // Close removes the file only if it is still ours
	fi, err := os.Lstat(path)
	if err == nil {
		err = os.Chmod(path, 0o600)
	}
	if err != nil {
		ln.Close()
		return warmListener{}, err
	}
	return warmListener{ln: ln, path: path, fi: fi}, nil
}

func (w *WarmJudge) serve(ln *net.UnixListener, agent string) {
	defer w.wg.Done()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return // closed
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close()
			w.answer(c, agent)
		}()
	}
}

// answer judges one hook call, as the hook process would have: the same
// code from the parsed input on, with this server's gate.
func (w *WarmJudge) answer(c *net.UnixConn, agent string) {
	if uid, err := peercred.UID(c); err != nil || uid != os.Getuid() {
		return // not ours to answer: the hook denies on the closed line
	}
	c.SetDeadline(time.Now().Add(Budget + time.Second))
	br := bufio.NewReader(io.LimitReader(c, maxInput+64<<10))
	line, err := br.ReadBytes('\n')
	var req judgesock.Request
	if err != nil || json.Unmarshal(line, &req) != nil {
		return
	}
	w.mu.Lock()
	w.last = time.Now()
	w.mu.Unlock()
	if req.Run != nil {
		w.runExec(c, br, req, agent)
		return
	}
	var out, errOut bytes.Buffer
	env := req.Env
	if env == nil {
		env = map[string]string{}
	}
	h := &hook{flags: Flags{Config: w.cfg.File, Agent: agent, Exec: req.Exec, ExecProblem: req.ExecProblem}, stdout: &out, stderr: &errOut, env: env}
	code := h.guard(func() int {
		data, err := io.ReadAll(br)
		if err != nil {
			return h.deny("reading the hook's input: %v", err)
		}
		if len(data) > maxInput {
			return h.deny("the hook input is over %d MiB", maxInput>>20)
		}
		// Belt and braces: the socket's name says as much.
		if req.Config != w.cfg.File || req.Digest != w.cfg.Digest || req.Agent != agent {
			return h.deny("the judge on this socket loaded %s (%.12s) for agent %q, not %s (%.12s) for %q", w.cfg.File, w.cfg.Digest, agent, req.Config, req.Digest, req.Agent)
		}
		p := w.cfg.Policy(agent)
		if p == nil {
			return h.deny("no agent %q in the config", agent)
		}
		in, err := claude.ParseHookInput(data)
		if err != nil {
			return h.deny("%v", err)
		}
		return h.answer(w.g, w.cfg, p, in)
	})
	w.mu.Lock()
	w.answered++
	w.mu.Unlock()
	reply, _ := json.Marshal(judgesock.Answer{Code: code, Stdout: out.Bytes(), Stderr: errOut.Bytes()})
	c.Write(reply)
}

// runExec runs the command an exec handed over, on the judge's gate, as
// exec would have run it on a gate of its own (execcmd.Run), and answers
// with what exec is to print and exit with. The exec closing the
// connection before the answer (killed, interrupted) stops the command.
func (w *WarmJudge) runExec(c *net.UnixConn, br *bufio.Reader, req judgesock.Request, agent string) {
	c.SetDeadline(time.Time{}) // the command's own timeout bounds it
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		io.Copy(io.Discard, br) // returns when exec goes away, or at the answer
		cancel()
	}()
	reply := func() (r execcmd.Reply) {
		defer func() {
			if p := recover(); p != nil {
				r = execcmd.Reply{Stderr: execcmd.Reason(nil, "the judge failed: %v", p), Code: execcmd.ExitRefused}
			}
		}()
		p := w.cfg.Policy(agent)
		if req.Config != w.cfg.File || req.Digest != w.cfg.Digest || req.Agent != agent || p == nil {
			return execcmd.Reply{Stderr: execcmd.Reason(nil, "the judge on this socket loaded %s for agent %q, not %s for %q", w.cfg.File, agent, req.Config, req.Agent), Code: execcmd.ExitRefused}
		}
		x := req.Run
		return execcmd.Run(ctx, w.g, server.ExecRequest{Agent: p, CallID: x.CallID, Label: x.Label, Cwd: x.Cwd, Args: x.Args(), Environ: x.Environ})
	}()
	w.mu.Lock()
	w.ran++
	w.mu.Unlock()
	answer, _ := json.Marshal(judgesock.Answer{Code: reply.Code, Stdout: reply.Stdout, Stderr: reply.Stderr})
	c.Write(answer)
}

// Ran is how many exec commands the judge has run.
func (w *WarmJudge) Ran() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran
}

// Listening is whether the judge has a socket of its own.
func (w *WarmJudge) Listening() bool { return len(w.socks) > 0 }

// Idle is how long since the judge started or was last asked.
func (w *WarmJudge) Idle() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.last)
}

// Lost is whether a socket of the judge's is no longer its own (removed,
// or replaced by another's): no hook reaches it there any more.
func (w *WarmJudge) Lost() bool {
	for _, s := range w.socks {
		if fi, err := os.Lstat(s.path); err != nil || !os.SameFile(fi, s.fi) {
			return true
		}
	}
	return false
}

// Answered is how many calls the judge has answered.
func (w *WarmJudge) Answered() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answered
}

// Close stops the judge, waits for the calls it is answering, and removes
// its sockets (those that are still its own).
func (w *WarmJudge) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	socks := w.socks
	w.mu.Unlock()
	for _, s := range socks {
		if fi, err := os.Lstat(s.path); err == nil && os.SameFile(fi, s.fi) {
			os.Remove(s.path)
		}
		s.ln.Close()
	}
	w.wg.Wait()
}

// String names the judge's sockets, for the server's log.
func (w *WarmJudge) String() string {
	var names []string
	for _, s := range w.socks {
		names = append(names, s.path)
	}
	return fmt.Sprint(names)
}
