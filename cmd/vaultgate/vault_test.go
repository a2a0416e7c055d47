package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/vaultid"
)

// initVault runs `vaultgate init --config CFG VAULT` and returns the
// config it wrote.
func initVault(t *testing.T, vault, cfg string) string {
	t.Helper()
	if out, errOut, code := runCLI(t, "init", "--config", cfg, vault); code != exitOK {
		t.Fatalf("init %s: exit %d\n%s%s", vault, code, out, errOut)
	}
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestInitGivesEachVaultItsStateFolder: two vaults of one folder name get
// two state folders, named by the vault and a hash of its real path.
func TestInitGivesEachVaultItsStateFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	var states []string
	for _, parent := range []string{"work", "home"} {
		vault := filepath.Join(dir, parent, "My Notes")
		if err := os.MkdirAll(vault, 0o755); err != nil {
			t.Fatal(err)
		}
		cfgPath := filepath.Join(dir, parent+".toml")
		body := initVault(t, vault, cfgPath)
		if !regexp.MustCompile(`(?m)^path = "~/\.local/state/vaultgate/My-Notes-[0-9a-f]{8}/audit\.jsonl"$`).MatchString(body) {
			t.Errorf("the config of %s has no state folder of its own:\n%s", vault, body)
		}
		cfg, err := config.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(cfg.StateDir, filepath.Join(home, ".local/state/vaultgate")+"/My-Notes-") {
			t.Errorf("state folder %s", cfg.StateDir)
		}
		states = append(states, cfg.StateDir)
	}
	if states[0] == states[1] {
		t.Fatalf("two vaults named alike share the state folder %s", states[0])
	}
	// Each served once, neither state folder is shared: doctor says nothing of it.
	for _, parent := range []string{"work", "home"} {
		cfg := filepath.Join(dir, parent+".toml")
		if out, errOut, code := runCLI(t, "history", "--config", cfg); code != exitOK {
			t.Fatalf("history: exit %d %s%s", code, out, errOut)
		}
		if out, _, _ := runCLI(t, "doctor", "--config", cfg); strings.Contains(out, "shared with another vault") {
			t.Errorf("doctor on a state folder of its own:\n%s", out)
		}
	}
	// Named by the vault's real path: init through a symlink names the same folder.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "work", "My Notes"), link); err != nil {
		t.Fatal(err)
	}
	initVault(t, link, filepath.Join(dir, "link.toml"))
	cfg, err := config.Load(filepath.Join(dir, "link.toml"))
	if err != nil || cfg.StateDir != states[0] {
		t.Errorf("through a symlink: %v, %v; want %s", cfg.StateDir, err, states[0])
	}
}

// oldSharedPath is the audit path every config `vaultgate init` wrote before
// each vault had a state folder of its own.
const oldSharedPath = `path = "~/.local/state/vaultgate/audit.jsonl"`

// sharedInit writes vault's config as init writes it, then as an older
// init did: the shared audit path. Its zones let the agent delete, so a
// note can be deleted and undone.
func sharedInit(t *testing.T, vault, cfgPath string) {
	t.Helper()
	body := initVault(t, vault, cfgPath)
	body = regexp.MustCompile(`(?m)^path = ".*"$`).ReplaceAllString(body, oldSharedPath)
	body = strings.Replace(body, `write     = []`, `write     = ["."]`, 1)
	body = strings.Replace(body, `edit      = ["."]`, `edit      = []`, 1)
	if !strings.Contains(body, oldSharedPath) || !strings.Contains(body, `write     = ["."]`) {
		t.Fatalf("config not as expected:\n%s", body)
	}
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func serveAt(t *testing.T, bin, home, cfg string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(bin, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "vault-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCall(t *testing.T, c *client.Client, tool string, args map[string]any) {
	t.Helper()
	if text, isErr := callTool(t, c, tool, args); isErr {
		t.Fatalf("%s %v: %s", tool, args, text)
	}
}

// files is a vault's content: each file by its path, with its mode and body.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		body := ""
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			body = string(b)
		}
		out[rel] = fmt.Sprintf("%v %q", fi.Mode(), body)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

type listed struct {
	ID, Session, Path, Op string
	Vault                 string
}

func historyOf(t *testing.T, cfg string) []listed {
	t.Helper()
	out, errOut, code := runCLI(t, "history", "--config", cfg, "--json")
	if code != exitOK {
		t.Fatalf("history --config %s: exit %d %s", cfg, code, errOut)
	}
	var es []listed
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var e listed
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	return es
}

// TestTwoVaultsOneStateFolder: two vaults whose configs share the old
// shared audit path (one log, one history), each changed over MCP. history,
// diff and undo with each config see and act on its own vault alone; b's
// call given to a's diff or undo exits 2 and changes nothing, and a's undo
// by time or session never writes b's deleted note into a.
func TestTwoVaultsOneStateFolder(t *testing.T) {
	bin := binary(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a", "notes"), filepath.Join(dir, "b", "notes")
	for root, content := range map[string]map[string]string{
		// a holds what b's write leaves, so an undo of b's write in a
		// would find a's file "as the call left it".
		a: {"shared.md": "b's new text\n", "a.md": "a's own\n"},
		b: {"shared.md": "b's old text\n", "gone.md": "b's deleted note\n"},
	} {
		for p, body := range content {
			if err := os.MkdirAll(root, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfgA, cfgB := filepath.Join(dir, "a.toml"), filepath.Join(dir, "b.toml")
	sharedInit(t, a, cfgA)
	sharedInit(t, b, cfgB)
	state := filepath.Join(home, ".local/state/vaultgate")
	auditPath := filepath.Join(state, "audit.jsonl")
	initialA, initialB := files(t, a), files(t, b)

	cb := serveAt(t, bin, home, cfgB)
	mustCall(t, cb, "read", map[string]any{"path": "shared.md"})
	mustCall(t, cb, "write", map[string]any{"path": "shared.md", "content": "b's new text\n"})
	mustCall(t, cb, "delete", map[string]any{"path": "gone.md"})
	cb.Close()
	ca := serveAt(t, bin, home, cfgA)
	mustCall(t, ca, "write", map[string]any{"path": "a-new.md", "content": "a's new note\n"})
	ca.Close()

	// Every line names its vault.
	vaults, err := vaultid.Vaults(state)
	if err != nil || len(vaults) != 2 {
		t.Fatalf("the registry names %v (%v), want a and b", vaults, err)
	}
	idOf := map[string]string{}
	for id, p := range vaults {
		idOf[p] = id
	}
	idA, idB := idOf[a], idOf[b]
	lines := 0
	err = audit.Read(auditPath, func(r audit.Record) error {
		lines++
		if r.Vault != idA && r.Vault != idB {
			t.Fatalf("audit line %s names vault %q, not a's %s or b's %s (does server.Open set tools.Vault.ID? see server.vaultID)", r.ID, r.Vault, idA, idB)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if lines < 4 {
		t.Fatalf("%d audit lines", lines)
	}

	// history lists each vault's own changes.
	histA, histB := historyOf(t, cfgA), historyOf(t, cfgB)
	if len(histA) != 1 || histA[0].Path != "a-new.md" || histA[0].Vault != idA {
		t.Errorf("history of a: %+v", histA)
	}
	var bDelete, bSession string
	for _, e := range histB {
		if e.Vault != idB || e.Path == "a-new.md" {
			t.Errorf("history of b lists %+v", e)
		}
		if e.Op == "delete" && e.Path == "gone.md" {
			bDelete, bSession = e.ID, e.Session
		}
	}
	if len(histB) != 2 || bDelete == "" || bSession == "" {
		t.Fatalf("history of b: %+v", histB)
	}

	// diff: b's call shows with b's config, is refused with a's.
	if out, errOut, code := runCLI(t, "diff", "--config", cfgB, bDelete); code != exitOK || !strings.Contains(out, "b's deleted note") {
		t.Errorf("diff of b's call with b's config: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := runCLI(t, "diff", "--config", cfgA, bDelete); code != exitUsage || strings.Contains(out, "b's deleted note") ||
		!strings.Contains(errOut, "another vault") || !strings.Contains(errOut, b) {
		t.Errorf("diff of b's call with a's config: exit %d\n%s%s", code, out, errOut)
	}

	// undo: b's call by id with a's config exits 2 and changes nothing.
	beforeA := files(t, a)
	for _, args := range [][]string{{bDelete}, {bDelete, histA[0].ID}} {
		out, errOut, code := runCLI(t, append([]string{"undo", "--config", cfgA}, args...)...)
		if code != exitUsage || !strings.Contains(errOut, "another vault") || !strings.Contains(errOut, "nothing was undone") {
			t.Errorf("undo %v with a's config: exit %d\n%s%s", args, code, out, errOut)
		}
		sameFiles(t, "a after undo of b's call", files(t, a), beforeA)
	}
	// By b's session: nothing of a's to undo.
	if out, errOut, code := runCLI(t, "undo", "--config", cfgA, "--session", bSession); code != exitOK || !strings.Contains(out, "nothing to undo") {
		t.Errorf("undo --session of b's with a's config: exit %d\n%s%s", code, out, errOut)
	}
	sameFiles(t, "a after undo --session of b's session", files(t, a), beforeA)
	// By time: a's own change alone.
	out, errOut, code := runCLI(t, "undo", "--config", cfgA, "--since", "1h")
	if code != exitOK || !strings.Contains(out, "removed a-new.md") || strings.Contains(out, "gone.md") || strings.Contains(out, "shared.md") {
		t.Errorf("undo --since with a's config: exit %d\n%s%s", code, out, errOut)
	}
	sameFiles(t, "a after its undo --since", files(t, a), initialA)
	if _, err := os.Lstat(filepath.Join(a, "gone.md")); err == nil {
		t.Fatal("b's deleted note appeared in a")
	}
	// b's undo by time puts b back, and touches a not.
	out, errOut, code = runCLI(t, "undo", "--config", cfgB, "--since", "1h")
	if code != exitOK || !strings.Contains(out, "put back gone.md") || !strings.Contains(out, "put back shared.md") {
		t.Errorf("undo --since with b's config: exit %d\n%s%s", code, out, errOut)
	}
	sameFiles(t, "b after its undo --since", files(t, b), initialB)
	sameFiles(t, "a after b's undo", files(t, a), initialA)

	// doctor warns of the shared state folder, with the fix.
	out, _, _ = runCLI(t, "doctor", "--config", cfgA)
	if !strings.Contains(out, "shared with another vault") || !strings.Contains(out, "give each vault its own [audit] path") {
		t.Errorf("doctor on a shared state folder:\n%s", out)
	}
	if !strings.Contains(out, b) {
		t.Errorf("doctor does not name the other vault:\n%s", out)
	}
}
