// Command hookfloor is the floor that the hook's start-up is measured
// against: a Go binary that reads Claude Code's PreToolUse JSON on stdin,
// parses it as the hook does, and prints a fixed allow, nothing else. The
// difference between it and vaultgate-hook is what the hook adds.
package main

import (
	"encoding/json"
	"io"
	"os"
)

type input struct {
	SessionID     string         `json:"session_id"`
	Cwd           string         `json:"cwd"`
	HookEventName string         `json:"hook_event_name"`
	ToolName      string         `json:"tool_name"`
	ToolInput     map[string]any `json:"tool_input"`
	ToolUseID     string         `json:"tool_use_id"`
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(2)
	}
	var in input
	if json.Unmarshal(data, &in) != nil || in.ToolName == "" {
		os.Exit(2)
	}
	os.Stdout.WriteString(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}` + "\n")
}
