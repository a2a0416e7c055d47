package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/policy"
)

// TestFullDiskRefusesTheChange keeps the history on a small tmpfs of its
// own, filled up, and asks for changes whose pre-image or new content
// can't fit: each is refused with the disk's own reason and the vault is
// untouched. Once there is room again, the same change is made and kept,
// and undo takes it back: a full disk leaves the store usable.
func TestFullDiskRefusesTheChange(t *testing.T) {
	dir := t.TempDir()
	vault, state := filepath.Join(dir, "vault"), filepath.Join(dir, "state")
	vaulttest.SmallDisk(t, filepath.Join(state, "history"), "4m")
	big := strings.Repeat("a line of a big note\n", 100_000) // 2.1 MB
	for p, body := range map[string]string{"a.md": "alpha\n", "big/one.md": big, "big/two.md": big + "two\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, p)), 0o755)
		if err := os.WriteFile(filepath.Join(vault, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := loadConfig(t, `vault = "`+vault+`"
[audit]
path = "`+filepath.Join(state, "audit.jsonl")+`"
[rules]
read_before_write = false
[zones]
write = ["."]
[bash]
env = ["PATH"]
`)
	g := serverGate(t, cfg)
	filler := vaulttest.Fill(t, filepath.Join(state, "history"), 256<<10)
	before := tree(t, vault)
	bigWrite := toolCall{"write", map[string]any{"path": "a.md", "content": big}}
	for _, c := range []toolCall{
		bigWrite,
		{"write", map[string]any{"path": "new.md", "content": big}},
		{"delete", map[string]any{"path": "big", "recursive": true}},
		{"move", map[string]any{"source": "big/one.md", "destination": "a.md", "overwrite": true}},
		{"bash", map[string]any{"command": "cat big/one.md big/two.md > c.md"}},
		{"bash", map[string]any{"command": "rm -r big"}},
	} {
		o := g.Call(t.Context(), Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", State: policy.NewState()}, Policy: g.cfg.Policy(config.DefaultAgent)}, c.tool, c.args, Serve)
		if !o.IsError() || !strings.Contains(o.Text(), "no space left on device") {
			t.Errorf("%s %v on a full disk: %q, want a refusal that says the disk is full", c.tool, c.args, o.Text())
		}
		if o.Record.Outcome != "failed" {
			t.Errorf("%s: audit outcome %q, want failed", c.tool, o.Record.Outcome)
		}
	}
	sameTree(t, "after the refused changes", tree(t, vault), before)

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	o := call(t, g, "s", bigWrite)
	if body, _ := os.ReadFile(filepath.Join(vault, "a.md")); string(body) != big {
		t.Fatalf("with room again, the write did not land: %d bytes", len(body))
	}
	if _, err := undo(t, g, UndoRequest{IDs: []string{o.ID}}); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "after undoing the write made with room again", tree(t, vault), before)
}
