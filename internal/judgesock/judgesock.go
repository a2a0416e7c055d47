// Package judgesock is how a hook process finds the judge that answers it
// (see docs/claude-code.md, The hook): the folder and name of the judge's Unix
// socket, the connect with its check of who listens, and the two messages
// that pass over it. It links only the standard library and x/sys, so that
// vaultgate-hook, which uses it on every tool call, starts about as fast as
// a Go binary that does nothing.
package judgesock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// DefaultAgent is the agent a hook judges as when --agent is not given:
// config.DefaultAgent, which this package can't import (a test holds the
// two equal).
const DefaultAgent = "default"

// MaxInput bounds the hook input a judge reads (a Write's content travels
// in it); MaxAnswer, what a hook reads back.
const (
	MaxInput  = 64 << 20
	MaxAnswer = 4 * MaxInput
)

// Budget is the hook's own time limit, well under Claude Code's hook
// timeout: past it the hook denies rather than let Claude Code time it out,
// which would let the call through.
const Budget = 5 * time.Second

// Request is the first line a hook sends; its input follows, to EOF. The
// judge answers only a request for the config (by path and content) and
// agent it loaded itself.
type Request struct {
	Config      string `json:"config"` // absolute
	Digest      string `json:"digest"` // sha256 of the config's bytes, hex
	Agent       string `json:"agent"`
	Exec        string `json:"exec"` // the vaultgate an allowed Bash runs through; "" refuses Bash
	ExecProblem string `json:"exec_problem,omitempty"`
	// Env is the hook's environment that judging reads (Claude Code's
	// project and settings folders and its home, which differ from session
	// to session while the judge's own environment is the first hook's).
	Env map[string]string `json:"env"`
	// Run, when set, asks the judge to run a vaultgate exec command on
	// its open gate instead of judging a hook's call: exec hands it over
	// (AskExec) rather than open the vault itself.
	Run *ExecCall `json:"run,omitempty"`
}

// ExecCall is one vaultgate exec command, as exec hands it to a judge.
type ExecCall struct {
	CallID  string   `json:"call_id,omitempty"` // the id the hook issued; "" for a command run by hand
	Label   string   `json:"label,omitempty"`   // --session, for a command run by hand
	Cwd     string   `json:"cwd"`               // absolute, links resolved
	Command string   `json:"command"`
	Timeout int      `json:"timeout,omitempty"` // seconds; 0 is [bash] timeout
	Environ []string `json:"environ"`           // exec's, for [bash] env
}

// HookEnv names the variables a hook sends in Request.Env: those the
// judging reads (hookcmd's check of Claude Code's sandbox settings, and
// HOME, where ~ in a path of Claude Code's tools leads).
var HookEnv = []string{"CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "HOME"}

// Environ is this process's value of each of keys that is set.
func Environ(keys []string) map[string]string {
	env := make(map[string]string, len(keys))
	for _, k := range keys {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

// Answer is the judge's reply: what the hook prints, and its exit status.
type Answer struct {
	Code   int    `json:"code"`
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
}

// Beside is the vaultgate binary in the running binary's folder: the one
// a hook hands its calls to, and whose exec command an allowed Bash runs
// through.
func Beside() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the running binary can't be named: %v", err)
	}
	exe := filepath.Join(filepath.Dir(self), "vaultgate")
	fi, err := os.Stat(exe)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("no vaultgate binary beside %s", self)
	}
	return exe, nil
}

// ConfigKey is the config file as a judge is keyed by it: its absolute
// path and the sha256 of its bytes.
func ConfigKey(path string) (abs, digest string, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(data)
	return abs, hex.EncodeToString(sum[:]), nil
}

// Dir is the folder of the judges' sockets: $XDG_RUNTIME_DIR/vaultgate,
// or else vaultgate-UID in the system's temporary folder. Neither is seen
// from inside the wall, which mounts its own /tmp and /run.
func Dir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "vaultgate")
	}
	return filepath.Join(os.TempDir(), "vaultgate-"+strconv.Itoa(os.Getuid()))
}

// ErrDir is a socket folder this process must not trust: not a folder of
// its own that no one else may enter.
var ErrDir = errors.New("judgesock: the socket folder is not this user's alone")

// CheckDir is nil if dir is a real folder (no link), owned by this user,
// which no one else can enter.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("%w: %s", ErrDir, dir)
	}
	return nil
}

// ownedByMe is whether this process's user owns the file fi describes.
func ownedByMe(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// EnsureDir makes dir (0700) if it is missing, then checks it.
func EnsureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return CheckDir(dir)
}

// Name is the socket of the judge for agent under the config (abs,
// digest), run by the vaultgate binary judge: a hook reaches only a judge
// that loaded the very config it would load itself, with the very binary
// it would run (an edited config or an upgraded binary gets a judge of
// its own; the old one ends, see docs/claude-code.md). The binary is named by its
// real path, size and modification time.
func Name(dir, abs, digest, agent, judge string) (string, error) {
	real, err := filepath.EvalSymlinks(judge)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	id := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%d\x00%d", abs, digest, agent, real, fi.Size(), fi.ModTime().UnixNano())
	sum := sha256.Sum256([]byte(id))
	path := filepath.Join(dir, hex.EncodeToString(sum[:12])+".sock")
	if len(path) > 100 { // sun_path holds 108 bytes on Linux, 104 on macOS
		return "", fmt.Errorf("judgesock: %s is too long for a socket's name", path)
	}
	return path, nil
}
