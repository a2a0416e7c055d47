package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/tools"
)

// HookInput is what Claude Code sends a hook on stdin (the fields used).
type HookInput struct {
	SessionID     string         `json:"session_id"`
	Cwd           string         `json:"cwd"`
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
	ToolUseID     string         `json:"tool_use_id"` // sent by newer Claude Codes
}

// After reports whether Claude Code has run the tool already (PostToolUse).
func (in *HookInput) After() bool { return in.HookEventName == "PostToolUse" }

// HookAnswer is the hook's reply: a deny with its reason, an allow before
// the call (Allow), perhaps rewriting it (UpdatedInput), or nothing to say
// (after the call).
type HookAnswer struct {
	Deny string
	// Allow answers permissionDecision "allow": the call was judged and
	// allowed, and Claude Code runs it without asking the person (a
	// project's settings can't grant that any other way; an allow never
	// overrides a deny or ask rule the person wrote).
	Allow bool
	// UpdatedInput is the whole tool input Claude Code is to run instead
	// of the one it sent (an allowed Bash, through vaultgate exec).
	UpdatedInput map[string]any
}

// Silent reports whether the hook prints nothing (PostToolUse).
func (a HookAnswer) Silent() bool { return a.Deny == "" && !a.Allow && a.UpdatedInput == nil }

// JSON is the PreToolUse output for a deny or an allow.
func (a HookAnswer) JSON() []byte {
	out := map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": a.Deny,
	}
	if a.Deny == "" {
		out["permissionDecision"] = "allow"
		out["permissionDecisionReason"] = "vaultgate: judged and allowed"
		if a.UpdatedInput != nil {
			out["permissionDecisionReason"] = "vaultgate: runs inside vaultgate's wall through vaultgate exec"
			out["updatedInput"] = a.UpdatedInput
		}
	}
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": out})
	return b
}

// HookOptions are what the hook command knows of its surroundings.
type HookOptions struct {
	// Exec is the vaultgate binary an allowed Bash runs through (absolute);
	// "" refuses every Bash, for ExecProblem's reason.
	Exec        string
	ExecProblem string
	// Sandbox, when not "", is the Claude Code settings file that turns
	// Claude Code's own sandbox on.
	Sandbox string
}

// ErrHookInput is a hook input that can't be read: the caller denies (exit 2).
var ErrHookInput = errors.New("hook input")

// ParseHookInput reads Claude Code's hook JSON strictly enough to judge it.
func ParseHookInput(data []byte) (*HookInput, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("%w: stdin is empty; Claude Code sends the call as JSON", ErrHookInput)
	}
	var in HookInput
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrHookInput, err)
	}
	if in.ToolName == "" {
		return nil, fmt.Errorf("%w: no tool_name", ErrHookInput)
	}
	if in.ToolInput == nil {
		in.ToolInput = map[string]any{}
	}
	return &in, nil
}

// Hook judges one Claude Code hook call through the gate, with the
// session's state loaded from and saved to the state folder. Claude Code's
// tools are a hook tool set: planned, judged, run (which records what
// Claude Code reads and writes) and audited like the vault's own, before
// the call (PreToolUse) and after it (PostToolUse). Only a PreToolUse deny
// is answered; after the call there is nothing left to refuse.
func (g *Gate) Hook(ctx context.Context, p *config.Policy, in *HookInput) (HookAnswer, error) {
	return g.HookWith(ctx, p, in, HookOptions{})
}

// HookWith is Hook with the hook command's options: Bash is allowed only
// through opt.Exec.
func (g *Gate) HookWith(ctx context.Context, p *config.Policy, in *HookInput, opt HookOptions) (HookAnswer, error) {
	store, err := openHookSession(g.cfg.StateDir, in.SessionID)
	if err != nil {
		return HookAnswer{}, err
	}
	defer store.close()
	caller := Caller{
		Via:     ViaHook,
		Session: &policy.Session{ID: in.SessionID, Agent: p.Name, State: store.state},
		Policy:  p,
		Hook: &tools.HookCall{After: in.After(), Cwd: in.Cwd, ServerName: p.Hook.ServerName,
			ExecProblem: opt.ExecProblem, Sandbox: opt.Sandbox, ToolUseID: in.ToolUseID},
	}
	switch {
	case opt.Exec != "" && g.cfg.File == "":
		caller.Hook.ExecProblem = "the hook's config has no file for vaultgate exec to load"
	case opt.Exec != "":
		caller.Hook.Exec = &tools.HookExec{Binary: opt.Exec, Config: g.cfg.File, Agent: p.Name, Session: in.SessionID}
	}
	o := g.Call(ctx, caller, in.ToolName, in.ToolInput, Serve)
	switch {
	case o.Decision == Allow && o.Err != nil:
		return HookAnswer{}, o.Err // allowed, but not recorded: deny (exit 2)
	case o.Decision == Allow:
		if o.Forwarded && !in.After() {
			store.noteForwarded(in)
		}
		a := HookAnswer{Allow: !in.After()}
		if o.Result != nil && !in.After() {
			a.UpdatedInput = o.Result.UpdatedInput
		}
		return a, store.save()
	case in.After():
		return HookAnswer{}, nil // the audit line says what became of it
	}
	return HookAnswer{Deny: o.Text()}, nil
}

// hookKeptKey is the session state's key prefix of tools' kept hook writes.
const hookKeptKey = tools.HookKeptPrefix

// hookSessionTTL is how long a Claude Code session's state is kept unused.
const hookSessionTTL = 7 * 24 * time.Hour

// hookSession is one session's state file, locked while the hook runs so
// that concurrent hooks of a session take turns.
type hookSession struct {
	f     *os.File
	state *policy.State
	file  hookStateFile
}

// hookStateFile is what a session's state file holds.
type hookStateFile struct {
	SessionID string `json:"session_id"`
	// Read is what read_before_write remembers: the files the session has
	// seen, as it saw them.
	Read map[string]policy.Stamp `json:"read"`
	// Forwarded are the calls the hook passed on to the vault server,
	// newest last, at most maxForwarded: the server's lines carry the
	// tool and the time but not Claude Code's ids, and these join them.
	Forwarded []forwardedCall `json:"forwarded,omitempty"`
	// Kept are the files whose pre-image a PreToolUse kept for Claude
	// Code's own write, by the call id its PostToolUse confirms.
	Kept map[string]string `json:"kept,omitempty"`
	// Tally is what the session has been allowed, for the config's rules
	// (session.*), carried from one hook process to the next.
	Tally *policy.Tally `json:"tally,omitempty"`
}

type forwardedCall struct {
	Tool      string    `json:"tool"`
	ToolUseID string    `json:"tool_use_id,omitempty"`
	Time      time.Time `json:"time"`
}

// maxForwarded bounds the forwarded calls a state file keeps.
const maxForwarded = 256

func openHookSession(stateDir, sessionID string) (*hookSession, error) {
	dir := filepath.Join(stateDir, "hook-sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hook state folder: %w", err)
	}
	sum := sha256.Sum256([]byte(sessionID))
	name := filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
	if _, err := os.Lstat(name); err != nil {
		// A new session clears the old ones; the calls of a session that
		// has its file don't walk the folder again.
		cleanOldSessions(dir)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hook session state: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking hook session state: %w", err)
	}
	s := &hookSession{f: f, state: policy.NewState()}
	if data, err := os.ReadFile(name); err == nil && len(data) > 0 {
		if err := json.Unmarshal(data, &s.file); err != nil || s.file.SessionID != sessionID {
			// A torn or foreign file (or one of an older vaultgate): start
			// the session afresh, which only makes read_before_write
			// stricter.
			s.file = hookStateFile{}
		}
	}
	s.file.SessionID = sessionID
	for p, st := range s.file.Read {
		policy.MarkRead(s.state, p, st.Size, st.ModTime)
	}
	for p, id := range s.file.Kept {
		s.state.Set(hookKeptKey+p, id)
	}
	if s.file.Tally != nil {
		policy.SetTally(s.state, *s.file.Tally)
	}
	return s, nil
}

// noteForwarded remembers a call passed on to the vault server.
func (s *hookSession) noteForwarded(in *HookInput) {
	s.file.Forwarded = append(s.file.Forwarded, forwardedCall{Tool: in.ToolName, ToolUseID: in.ToolUseID, Time: time.Now().UTC()})
	if n := len(s.file.Forwarded); n > maxForwarded {
		s.file.Forwarded = slices.Clone(s.file.Forwarded[n-maxForwarded:])
	}
}

func (s *hookSession) save() error {
	s.file.Read = map[string]policy.Stamp{}
	s.file.Kept = nil
	for k, v := range s.state.Snapshot() {
		if id, ok := v.(string); ok && strings.HasPrefix(k, hookKeptKey) {
			if s.file.Kept == nil {
				s.file.Kept = map[string]string{}
			}
			s.file.Kept[strings.TrimPrefix(k, hookKeptKey)] = id
		}
		if st, ok := v.(policy.Stamp); ok && strings.HasPrefix(k, "read:") {
			s.file.Read[strings.TrimPrefix(k, "read:")] = st
		}
	}
	if t := policy.SessionTally(s.state); t.Calls > 0 || !t.Started.IsZero() {
		s.file.Tally = &t
	}
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
	// Not synced: the next hook process reads it from the page cache, which
	// a killed process can't lose. A power cut can lose the last call's
	// update, as it can the audit line of that call (not synced either):
	// read_before_write is then stricter, and session.* counts start a
	// little lower. An fsync here cost 0.3-1 ms of every hook call.
	return nil
}

func (s *hookSession) close() {
	syscall.Flock(int(s.f.Fd()), syscall.LOCK_UN)
	s.f.Close()
}

// cleanOldSessions removes state files of sessions unused for a week.
func cleanOldSessions(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-hookSessionTTL)
	for i, e := range ents {
		if i > 1000 {
			return // bounded: the rest go next time
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
