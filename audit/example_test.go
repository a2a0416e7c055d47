package audit_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vaultgate/vaultgate/audit"
)

// One call, denied: the line the server writes, and what a reader sees.
func Example() {
	dir, _ := os.MkdirTemp("", "audit")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")

	w, err := audit.Open(path, audit.Options{Mask: []string{"ghp_secret"}})
	if err != nil {
		panic(err)
	}
	err = w.Write(&audit.Record{
		Session: "s1", Agent: "default", Via: "stdio", Tool: "write",
		Args:     map[string]any{"path": "мета/план.md", "content": audit.Body("token ghp_secret")},
		Effects:  []audit.Effect{{Op: "modify", Path: "мета/план.md", Zone: "protected"}},
		Decision: "deny", Rule: "zones", Reason: `modify "мета/план.md": zone protected (read only)`,
	})
	if err != nil {
		panic(err) // fail closed: the call is refused
	}
	w.Close()

	rep, _ := audit.Verify(path)
	fmt.Println(rep.OK, rep.Lines)
	s, _ := audit.SummariseFile(path, audit.Filter{Decision: "deny"})
	fmt.Println(s.Denies, s.ByRule["zones"])
	// Output:
	// true 1
	// 1 1
}
