package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/policy"
)

// A session is whose calls the rules count together and whose reads
// read_before_write remembers. Where its state lives depends on how long
// it lives:
//
//   - a Claude Code session (the hook's PreToolUse and PostToolUse, and
//     the vaultgate exec that runs an allowed Bash) outlives every process
//     that serves it, so its state is a file in the state folder, held
//     (flock) by one process at a time: this file's store, the only one;
//   - a server's sessions (serve over stdio: the process; over HTTP: the
//     agent; vaultgate run: the run, across all its connections) live as
//     long as the process, in a policy.State it keeps.
//
// A label (exec --session, CLAUDE_CODE_SESSION_ID) names a session in the
// audit but reaches no state: only the hook's own input, and a call id
// the hook issued (exec --call), open a Claude Code session's state.

// sessionTTL is how long a Claude Code session's state is kept unused.
const sessionTTL = 7 * 24 * time.Hour

// heldSession is one session's state file, held while a process judges a
// call of the session, so that concurrent calls of a session take turns.
type heldSession struct {
	f     *os.File
	state *policy.State
	file  sessionFile
}

// sessionFile is what a session's state file holds.
type sessionFile struct {
	SessionID string       `json:"session_id"`
	State     policy.Saved `json:"state"`
	// Forwarded are the calls the hook passed on to the vault server,
	// newest last, at most maxForwarded: the server's lines carry the
	// tool and the time but not Claude Code's ids, and these join them.
	Forwarded []forwardedCall `json:"forwarded,omitempty"`
}

type forwardedCall struct {
	Tool      string    `json:"tool"`
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Time      time.Time `json:"time"`
}

// maxForwarded bounds the forwarded calls a state file keeps.
const maxForwarded = 256

// sessionsDir is the folder of the Claude Code sessions' state files.
func sessionsDir(stateDir string) string { return filepath.Join(stateDir, "hook-sessions") }

// holdSession opens and locks session id's state file, loading its state;
// close releases it, save writes the state back.
func holdSession(stateDir, id string) (*heldSession, error) {
	dir := sessionsDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session state folder: %w", err)
	}
	sum := sha256.Sum256([]byte(id))
	name := filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
	if _, err := os.Lstat(name); err != nil {
		// A new session clears the old ones; the calls of a session that
		// has its file don't walk the folder again.
		cleanOldSessions(dir)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session state: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking session state: %w", err)
	}
	s := &heldSession{f: f, state: policy.NewState()}
	if err := s.load(id); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// load reads the held file into the state. A torn or foreign file (or one
// of an older vaultgate) starts the session afresh, which only makes
// read_before_write stricter.
func (s *heldSession) load(id string) error {
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("session state: %w", err)
	}
	s.file = sessionFile{}
	if fi.Size() > 0 {
		data := make([]byte, fi.Size())
		if _, err := s.f.ReadAt(data, 0); err != nil {
			return fmt.Errorf("session state: %w", err)
		}
		if json.Unmarshal(data, &s.file) != nil || s.file.SessionID != id {
			s.file = sessionFile{}
		}
	}
	s.file.SessionID = id
	s.state.Load(s.file.State)
	return nil
}

// noteForwarded remembers a call passed on to the vault server.
func (s *heldSession) noteForwarded(in *claude.HookInput) {
	s.file.Forwarded = append(s.file.Forwarded, forwardedCall{Tool: in.ToolName, ToolUseID: in.ToolUseID, Time: time.Now().UTC()})
	if n := len(s.file.Forwarded); n > maxForwarded {
		s.file.Forwarded = slices.Clone(s.file.Forwarded[n-maxForwarded:])
	}
}

func (s *heldSession) save() error {
	s.file.State = s.state.Save()
	data, err := json.Marshal(s.file)
	if err != nil {
		return err
	}
	// Over the old bytes, then cut what is left of them: truncating to
	// zero first cost a journal commit of its own (1.2 ms here) on every
	// call. A crash between the two leaves a file that does not parse,
	// which starts the session afresh, as an empty one did.
	if _, err := s.f.WriteAt(data, 0); err != nil {
		return err
	}
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > int64(len(data)) {
		if err := s.f.Truncate(int64(len(data))); err != nil {
			return err
		}
	}
	// Not synced: the next process reads it from the page cache, which a
	// killed process can't lose. A power cut can lose the last call's
	// update, as it can the audit line of that call (not synced either):
	// read_before_write is then stricter, and session.* counts start a
	// little lower. An fsync here cost 0.3-1 ms of every hook call.
	return nil
}

func (s *heldSession) close() {
	syscall.Flock(int(s.f.Fd()), syscall.LOCK_UN)
	s.f.Close()
}

// cleanOldSessions removes state files of sessions unused for a week.
func cleanOldSessions(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-sessionTTL)
	for i, e := range ents {
		if i > 1000 {
			return // bounded: the rest go next time
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// sessionHold is a call's hold on a session kept in the state folder: taken
// while the call judges (and commits), given back while it runs, so that
// the session's other calls (Claude Code reads while a Bash runs) are not
// kept waiting for the run. Taken again, the state is read afresh: what
// the session's other calls did meanwhile counts. A hold on a process's
// own session (id "") does nothing.
type sessionHold struct {
	stateDir string
	id       string
	session  *policy.Session
	held     *heldSession
}

func (h *sessionHold) take() error {
	if h.id == "" || h.held != nil {
		return nil
	}
	s, err := holdSession(h.stateDir, h.id)
	if err != nil {
		return err
	}
	h.held = s
	h.session.State.Load(s.state.Save())
	return nil
}

// give saves what the call changed of the state and lets the session go.
func (h *sessionHold) give() error {
	if h.held == nil {
		return nil
	}
	s := h.held
	h.held = nil
	defer s.close()
	s.state.Load(h.session.State.Save())
	if err := s.save(); err != nil {
		return fmt.Errorf("saving session %s: %w", h.id, err)
	}
	return nil
}
