package main

import (
	"errors"
	"io/fs"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/history"
)

// The history keeps a change under the id of the audit line of the call
// that made it. For Claude Code's Bash that is the line of the vaultgate
// exec that ran it, not the hook's line that judged it; history shows the
// hook's call beside such an entry, as the log's reader joins them
// (audit.Joiner).

// hookCall is what history shows of the hook's call an exec continued.
type hookCall struct {
	ID        string // the hook's line
	ToolUseID string // Claude Code's id of the call
}

// hookCalls reads the audit log at logPath, joined, for the hook calls
// the exec entries among entries continue, by the exec line's id. It
// reads the log only when there is such an entry; a log that is not
// there, or a line of it that is damaged, leaves out what it would have
// told.
func hookCalls(logPath string, entries []history.Entry) (map[string]hookCall, error) {
	want := map[string]bool{}
	for _, e := range entries {
		if e.Via == "exec" {
			want[e.ID] = true
		}
	}
	if len(want) == 0 || logPath == "" {
		return nil, nil
	}
	out := map[string]hookCall{}
	err := audit.ReadCalls(logPath, func(c *audit.Call) error {
		if c.Exec != nil && want[c.Exec.ID] {
			out[c.Exec.ID] = hookCall{ID: c.ID, ToolUseID: c.ToolUseID}
		}
		return nil
	})
	var lineErr *audit.LineError
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &lineErr) {
		return nil, err
	}
	return out, nil
}

// historyLine is an entry as history --json prints it: with the hook call
// an exec's entry continues, when the log tells.
type historyLine struct {
	history.Entry
	Continues string `json:"continues,omitempty"`   // the hook's line
	ToolUseID string `json:"tool_use_id,omitempty"` // Claude Code's id of the call
}

func withHookCall(e history.Entry, calls map[string]hookCall) historyLine {
	h := calls[e.ID]
	return historyLine{Entry: e, Continues: h.ID, ToolUseID: h.ToolUseID}
}

// toolOf is an entry's tool as the history table shows it: for an exec
// that ran Claude Code's Bash, the hook's call it continues too.
func toolOf(e history.Entry, calls map[string]hookCall) string {
	h, ok := calls[e.ID]
	if !ok {
		return e.Tool
	}
	return e.Tool + " (Bash " + dash(h.ToolUseID) + ")"
}
