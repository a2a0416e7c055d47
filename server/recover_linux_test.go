package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalledBashCantTakeAReservedName: a walled bash command — mv, or a
// python rename the analysis can't see — can't give a note or a folder (a
// git repository in it) a name vaultgate reserves: what it really changed
// is judged by the same zone table, which caps the name at protected, and
// nothing of the call is applied. The positive control, a name without the
// leading dot, is committed.
func TestWalledBashCantTakeAReservedName(t *testing.T) {
	cfg := txnConfig(t)
	for p, body := range map[string]string{"notes/repo/.git/HEAD": "ref: refs/heads/main\n", "notes/repo/r.md": "r\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(cfg.Vault, p)), 0o755)
		if err := os.WriteFile(filepath.Join(cfg.Vault, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := txnGate(t, cfg)
	before := tree(t, cfg.Vault)
	for _, cmd := range []string{
		"mv notes/a.md notes/.vaultgate-tmp-a",
		`python3 -c "import os; os.rename('notes/a.md', 'notes/.vaultgate-tmp-a')"`,
		`python3 -c "import os; os.rename('notes/repo', '.vaultgate-tmp-repo')"`,
		`python3 -c "open('notes/.VAULTGATE-TMP-new', 'w').write('x')"`,
		"mkdir notes/.vaultgate-txn-1-0",
	} {
		o := bashCall(t, g, cmd)
		if !o.IsError() || !strings.Contains(strings.ToLower(o.Text()), `.vaultgate-`) || !strings.Contains(o.Text(), "zone protected") {
			t.Errorf("%s: %s %q, want the reserved name refused", cmd, o.Decision, o.Text())
		}
		sameTree(t, cmd, tree(t, cfg.Vault), before)
	}
	if o := bashCall(t, g, "mv notes/a.md notes/vaultgate-tmp-a.md"); o.IsError() {
		t.Fatalf("the positive control: %s %q", o.Decision, o.Text())
	}
	if _, err := os.Lstat(filepath.Join(cfg.Vault, "notes/vaultgate-tmp-a.md")); err != nil {
		t.Error(err)
	}
}
