package server

import (
	"context"
	"github.com/vaultgate/vaultgate/claude"
	"os"
	"path/filepath"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
)

// TestHookKeepsClaudeCodeWrites: a Write or Edit of Claude Code's that
// the hook allows has its pre-image kept in PreToolUse, under that line's
// id, confirmed in PostToolUse; undo takes it back. A write that never
// happened is marked failed at the session's next hook call.
func TestHookKeepsClaudeCodeWrites(t *testing.T) {
	g, vault, _ := historyGate(t)
	p := g.cfg.Policy(config.DefaultAgent)
	st := g.keep.(*history.Store)
	before := tree(t, vault)
	hook := func(event, tool string, input map[string]any) {
		t.Helper()
		in := &claude.HookInput{SessionID: "S", Cwd: vault, HookEventName: event, ToolName: tool, ToolInput: input}
		if a, err := g.Hook(context.Background(), p, in); err != nil || a.Deny != "" {
			t.Fatalf("%s %s: %+v %v", event, tool, a, err)
		}
	}
	write := map[string]any{"file_path": filepath.Join(vault, "a.md"), "content": "new\n"}
	hook("PreToolUse", "Write", write)
	os.WriteFile(filepath.Join(vault, "a.md"), []byte("new\n"), 0o644) // Claude Code writes
	hook("PostToolUse", "Write", write)
	edit := map[string]any{"file_path": "b.md", "old_string": "bee", "new_string": "BEE"}
	hook("PreToolUse", "Edit", edit)
	os.WriteFile(filepath.Join(vault, "b.md"), []byte("BEE\n"), 0o644)
	hook("PostToolUse", "Edit", edit)
	never := map[string]any{"file_path": "other/keep.md", "content": "x"}
	hook("PreToolUse", "Write", never) // Claude Code never writes it
	hook("PreToolUse", "Read", map[string]any{"file_path": "a.md"})

	all, err := st.All()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	var ids []string
	for _, e := range all {
		states[e.Path] = e.State
		if e.Path == "a.md" || e.Path == "b.md" {
			ids = append(ids, e.ID)
			if !e.Before.Exists || e.Before.SHA256 == "" {
				t.Errorf("%s: no pre-image: %+v", e.Path, e.Before)
			}
		}
	}
	want := map[string]string{"a.md": history.Applied, "b.md": history.Applied, "other/keep.md": history.Failed}
	for path, state := range want {
		if states[path] != state {
			t.Errorf("%s is %q in the history, want %q (all: %v)", path, states[path], state, states)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("history ids of the writes: %v", ids)
	}
	plan, err := st.PlanUndo(ids, false)
	if err != nil || len(plan.Conflicts) > 0 {
		t.Fatalf("undo plan %+v, err %v", plan, err)
	}
	if err := st.Apply(plan, "undo-hook", history.Meta{Via: "cli"}, g.vault.Fs); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after undo", tree(t, vault), before)
}

// TestHookDeniesWriteNotKept: a Claude Code write whose pre-image can't be
// kept is denied in PreToolUse (fail closed).
func TestHookDeniesWriteNotKept(t *testing.T) {
	g, vault, _ := historyGate(t)
	g.keep = failingRecorder{}
	p := g.cfg.Policy(config.DefaultAgent)
	for _, tool := range []string{"Write", "Edit"} {
		in := &claude.HookInput{SessionID: "S", Cwd: vault, HookEventName: "PreToolUse", ToolName: tool,
			ToolInput: map[string]any{"file_path": "a.md", "content": "x", "old_string": "beta", "new_string": "b"}}
		a, err := g.Hook(context.Background(), p, in)
		if err == nil && a.Deny == "" {
			t.Errorf("%s: allowed though its pre-image could not be kept", tool)
		}
	}
}
