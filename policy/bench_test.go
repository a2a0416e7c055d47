package policy

import (
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

// BenchmarkChainWrite is the whole built-in chain for a write that
// overwrites a file the session has read.
func BenchmarkChainWrite(b *testing.B) {
	tab := table(b)
	st := NewState()
	mod := time.Unix(1700000000, 0)
	MarkRead(st, "notes/projects/2026/plan.md", 120, mod)
	effects := []Effect{{Op: zones.OpModify, Path: at("notes/projects/2026/plan.md"), Exists: true, Size: 120, ModTime: mod}}
	chain := Builtin(true)
	call := &ToolCall{Tool: "write", Zones: tab, Effects: effects, Session: &Session{State: st}}
	b.ReportAllocs()
	for b.Loop() {
		Zoned(tab, effects)
		if d := chain.Judge(call); d != nil {
			b.Fatal(d)
		}
	}
}
