package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
