package hookcmd

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/peercred"
	"github.com/vaultgate/vaultgate/server"
)

// A hook process is new for every tool call: it opens the vault, the
// audit log and the history before it can judge, and for an agent with
// [[rules.deny]] it starts CEL and checks the rules, most of its time.
// The stdio server Claude Code starts beside it has all of that open
// already, so it answers the hook's calls too, over a Unix socket in the
// state folder: the warm judge. The hook asks it first and judges cold
// (itself, or vaultgate-hook-rules for rules) only when no judge accepts
// the connection.
//
// The socket's name is a hash of the config file's path and bytes and of
// the agent, so a hook reaches only a judge that loaded the very config it
// would load itself; an edited config has another name and is judged
// cold until a server loads it. The socket is in the state folder (0700,
// hidden from the agent and outside the wall), mode 0600, and the judge
// answers only a peer of its own uid: whoever can reach it could write the
// audit log directly anyway.

// warmSocket is the judge's socket for agent under cfg, or "" when there
// is none to have (no config file, or a name too long for a socket).
func warmSocket(cfg *config.Config, agent string) string {
	if cfg.File == "" || cfg.Digest == "" || cfg.StateDir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(cfg.File + "\x00" + cfg.Digest + "\x00" + agent))
	path := filepath.Join(cfg.StateDir, "hook-judge", hex.EncodeToString(sum[:12])+".sock")
	if len(path) > 100 { // sun_path holds 108 bytes on Linux, 104 on macOS
		return ""
	}
	return path
}

// warmRequest is the first line a hook sends; its input follows, to EOF.
type warmRequest struct {
	Exec        string `json:"exec"`
	ExecProblem string `json:"exec_problem,omitempty"`
}

// warmAnswer is the judge's reply: what the hook prints, and its exit.
type warmAnswer struct {
	Code   int    `json:"code"`
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
}

// warmDialTimeout bounds the connect: a judge that is there accepts at
// once (the kernel does, before the judge reads).
const warmDialTimeout = 250 * time.Millisecond

// dialWarm connects to the judge for agent, or returns nil when none
// answers; the call is then judged cold.
func dialWarm(cfg *config.Config, agent string) net.Conn {
	path := warmSocket(cfg, agent)
	if path == "" {
		return nil
	}
	c, err := net.DialTimeout("unix", path, warmDialTimeout)
	if err != nil {
		return nil
	}
	return c
}

// askWarm has the judge on c answer the call on stdin. Once connected
// there is no going back to a cold judge (the judge may have written the
// call's audit line and history): anything that goes wrong denies.
func (h *hook) askWarm(c net.Conn, stdin io.Reader) int {
	defer c.Close()
	c.SetDeadline(time.Now().Add(Budget))
	data, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err != nil {
		return h.deny("reading stdin: %v", err)
	}
	if len(data) > maxInput {
		return h.deny("the hook input is over %d MiB", maxInput>>20)
	}
	head, _ := json.Marshal(warmRequest{Exec: h.flags.Exec, ExecProblem: h.flags.ExecProblem})
	if _, err := c.Write(append(append(head, '\n'), data...)); err != nil {
		return h.deny("asking the warm judge: %v", err)
	}
	if uc, ok := c.(*net.UnixConn); ok {
		uc.CloseWrite()
	}
	reply, err := io.ReadAll(io.LimitReader(c, 4*maxInput))
	if err != nil {
		return h.deny("the warm judge's answer: %v", err)
	}
	var a warmAnswer
	if err := json.Unmarshal(reply, &a); err != nil {
		return h.deny("the warm judge gave no answer (%d bytes): %v", len(reply), err)
	}
	if a.Code != ExitAnswered && a.Code != ExitDenied {
		return h.deny("the warm judge answered exit %d", a.Code)
	}
	h.stderr.Write(a.Stderr)
	if len(a.Stdout) > 0 {
		if _, err := h.stdout.Write(a.Stdout); err != nil {
			return h.deny("writing the answer: %v", err)
		}
	}
	return a.Code
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
	w := &WarmJudge{g: g, cfg: cfg, log: errLog}
	if !peercred.Supported {
		return w
	}
	for name := range cfg.Agents {
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
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return warmListener{}, err
	}
	if err := os.Chmod(filepath.Dir(path), 0o700); err != nil {
		return warmListener{}, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		if c, derr := net.DialTimeout("unix", path, warmDialTimeout); derr == nil {
			c.Close()
			return warmListener{}, nil // live: its server answers
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
	var req warmRequest
	if err != nil || json.Unmarshal(line, &req) != nil {
		return
	}
	var out, errOut bytes.Buffer
	h := &hook{flags: Flags{Config: w.cfg.File, Agent: agent, Exec: req.Exec, ExecProblem: req.ExecProblem}, stdout: &out, stderr: &errOut}
	code := h.guard(func() int {
		data, err := io.ReadAll(br)
		if err != nil {
			return h.deny("reading the hook's input: %v", err)
		}
		if len(data) > maxInput {
			return h.deny("the hook input is over %d MiB", maxInput>>20)
		}
		p := w.cfg.Policy(agent)
		if p == nil {
			return h.deny("no agent %q in the config", agent)
		}
		in, err := server.ParseHookInput(data)
		if err != nil {
			return h.deny("%v", err)
		}
		return h.answer(w.g, w.cfg, p, in)
	})
	w.mu.Lock()
	w.answered++
	w.mu.Unlock()
	reply, _ := json.Marshal(warmAnswer{Code: code, Stdout: out.Bytes(), Stderr: errOut.Bytes()})
	c.Write(reply)
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
