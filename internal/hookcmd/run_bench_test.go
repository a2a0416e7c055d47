package hookcmd

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRunWrite is the hook's own work for an allowed Write, in
// process: what is left of a hook call once the process has started.
//
//	go test ./internal/hookcmd -run '^$' -bench RunWrite -benchtime 200x
func BenchmarkRunWrite(b *testing.B) {
	dir, cfg := vault(b)
	in := input(dir, "Write", map[string]any{"file_path": filepath.Join(dir, "notes/new.md"), "content": "x"})
	for b.Loop() {
		var out, errOut bytes.Buffer
		if code := Run(Flags{Config: cfg, Agent: "default"}, strings.NewReader(in), &out, &errOut); code != ExitAnswered || !strings.Contains(out.String(), `"allow"`) {
			b.Fatalf("exit %d: %s %s", code, out.String(), errOut.String())
		}
	}
}
