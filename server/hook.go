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
	"strings"
	"syscall"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// HookInput is what Claude Code sends a hook on stdin (the fields used).
type HookInput struct {
	SessionID     string         `json:"session_id"`
	Cwd           string         `json:"cwd"`
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
}

// HookAnswer is the hook's reply. Deny empty means allow: print nothing.
type HookAnswer struct {
	Deny string
}

// JSON is the PreToolUse output for a deny.
func (a HookAnswer) JSON() []byte {
	b, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "deny",
		"permissionDecisionReason": a.Deny,
	}})
	return b
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

// hookBuiltins are Claude Code's tools the hook judges by their effects.
var hookBuiltins = map[string]bool{"Read": true, "Write": true, "Edit": true, "MultiEdit": true,
	"NotebookEdit": true, "Glob": true, "Grep": true, "Bash": true}

func init() {
	policy.Register("hook.tool",
		`%[1]s is not allowed here: vaultgate lets through only the vault's own tools (mcp__%[2]s__*), Claude Code's tools it can check (Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash), and those [hook] allow lists. Use the mcp__%[2]s__ tools instead.`,
		`%[1]s здесь запрещён: vaultgate пропускает только инструменты хранилища (mcp__%[2]s__*), проверяемые инструменты Claude Code (Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash) и перечисленные в [hook] allow. Используйте инструменты mcp__%[2]s__.`)
}

// Hook judges one Claude Code hook call through the gate, with the
// session's state loaded from and saved to the state folder.
func (g *Gate) Hook(ctx context.Context, p *config.Policy, in *HookInput) (HookAnswer, error) {
	store, err := openHookSession(g.cfg.StateDir, in.SessionID)
	if err != nil {
		return HookAnswer{}, err
	}
	defer store.close()
	session := &policy.Session{ID: in.SessionID, Agent: p.Name, State: store.state}
	if in.HookEventName == "PostToolUse" {
		// After Claude Code read or wrote a file: remember it as it is
		// now, so read_before_write sees the session's own writes.
		g.hookAfter(p, in, store.state)
		return HookAnswer{}, store.save()
	}
	caller := Caller{Via: ViaHook, Session: session, Policy: p, Cwd: in.Cwd}
	switch {
	case strings.HasPrefix(in.ToolName, "mcp__"+p.Hook.ServerName+"__"), hookAllows(p.Hook.Allow, in.ToolName):
		// a pass the person can't see in the log is not let through
		return HookAnswer{}, g.recordHook(caller, in, Allow, "", "")
	case !hookBuiltins[in.ToolName]:
		reason := policy.Phrase(p.Lang, "hook.tool", in.ToolName, p.Hook.ServerName)
		g.recordHook(caller, in, Deny, "hook", reason)
		return HookAnswer{Deny: reason}, nil
	}
	o := g.Call(ctx, caller, in.ToolName, in.ToolInput, true)
	if o.Decision == Allow && o.Err != nil {
		return HookAnswer{}, o.Err // allowed, but not recorded: deny (exit 2)
	}
	if o.Decision == Allow {
		if in.ToolName == "Read" {
			for _, e := range o.Effects {
				if e.Op == zones.OpRead && e.Exists {
					policy.MarkRead(store.state, e.Path.String(), e.Size, e.ModTime)
				}
			}
		}
		return HookAnswer{}, store.save()
	}
	return HookAnswer{Deny: o.Text()}, nil
}

func hookAllows(allow []string, tool string) bool {
	for _, a := range allow {
		if a == tool || (strings.HasSuffix(a, "*") && strings.HasPrefix(tool, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}

// hookAfter records the stamp of the file a built-in tool just read or wrote.
func (g *Gate) hookAfter(p *config.Policy, in *HookInput, state *policy.State) {
	field := "file_path"
	if in.ToolName == "NotebookEdit" {
		field = "notebook_path"
	}
	raw, _ := in.ToolInput[field].(string)
	if raw == "" || !hookBuiltins[in.ToolName] {
		return
	}
	if !filepath.IsAbs(raw) && in.Cwd != "" {
		raw = filepath.Join(in.Cwd, raw)
	}
	rel, err := zones.Normalize(g.cfg.Vault, raw)
	if err != nil || rel.Outside() {
		return
	}
	set := g.ToolSet(Caller{Via: ViaHook, Policy: p})
	real, err := set.Vault.Resolve(rel, true)
	if err != nil {
		return
	}
	fi, err := os.Lstat(real.Abs(g.cfg.Vault))
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	policy.MarkRead(state, real.String(), fi.Size(), fi.ModTime())
}

// recordHook writes the audit line of a hook decision taken without the
// gate (a pass, or a tool the hook does not judge).
func (g *Gate) recordHook(c Caller, in *HookInput, decision, rule, reason string) error {
	o := &Outcome{ID: audit.NewID(), Tool: in.ToolName, Decision: decision}
	if reason != "" {
		o.Deny = &policy.Deny{Rule: rule, Reason: reason}
	}
	o.Record = g.record(c, o, in.ToolInput, 0)
	if g.log == nil {
		return nil
	}
	if err := g.log.Write(&o.Record); err != nil {
		return fmt.Errorf("the audit log could not be written: %w", err)
	}
	return nil
}

// hookSessionTTL is how long a Claude Code session's state is kept unused.
const hookSessionTTL = 7 * 24 * time.Hour

// hookSession is one session's state file, locked while the hook runs so
// that concurrent hooks of a session take turns.
type hookSession struct {
	f     *os.File
	state *policy.State
}

func openHookSession(stateDir, sessionID string) (*hookSession, error) {
	dir := filepath.Join(stateDir, "hook-sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("hook state folder: %w", err)
	}
	cleanOldSessions(dir)
	sum := sha256.Sum256([]byte(sessionID))
	name := filepath.Join(dir, hex.EncodeToString(sum[:16])+".json")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("hook session state: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking hook session state: %w", err)
	}
	s := &hookSession{f: f, state: policy.NewState()}
	var stamps map[string]policy.Stamp
	if data, err := os.ReadFile(name); err == nil && len(data) > 0 {
		if err := json.Unmarshal(data, &stamps); err != nil {
			// A torn or foreign file: start the session afresh, which only
			// makes read_before_write stricter.
			stamps = nil
		}
	}
	for p, st := range stamps {
		policy.MarkRead(s.state, p, st.Size, st.ModTime)
	}
	return s, nil
}

func (s *hookSession) save() error {
	stamps := map[string]policy.Stamp{}
	for k, v := range s.state.Snapshot() {
		if st, ok := v.(policy.Stamp); ok && strings.HasPrefix(k, "read:") {
			stamps[strings.TrimPrefix(k, "read:")] = st
		}
	}
	data, err := json.Marshal(stamps)
	if err != nil {
		return err
	}
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	if _, err := s.f.WriteAt(data, 0); err != nil {
		return err
	}
	return s.f.Sync()
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
