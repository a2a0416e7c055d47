package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
)

// txnConfig is a vault on disk (edit, with a create zone "chats") whose
// bash runs walled on the overlay, and its config.
func txnConfig(t *testing.T) *config.Config {
	t.Helper()
	if _, err := sandbox.ProbeWall("").For(false, false, true); err != nil {
		t.Skipf("wall with overlay unavailable: %v", err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vault := filepath.Join(base, "vault")
	for name, body := range map[string]string{"notes/a.md": "a\n", "chats/old.md": "old\n"} {
		p := filepath.Join(vault, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(base, "vault.toml")
	body := "vault = \"" + vault + "\"\n[audit]\npath = \"" + filepath.Join(base, "state", "audit.jsonl") + "\"\n" +
		"[zones]\nedit = [\".\"]\ncreate = [\"chats\"]\n[bash]\nenv = [\"PATH\"]\n"
	if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// txnGate is a server's gate over cfg's vault, with a library user's rules.
func txnGate(t *testing.T, cfg *config.Config, rules ...policy.Rule) *Gate {
	t.Helper()
	g := serverGate(t, cfg)
	g.AddRules(rules...)
	return g
}

func bashCall(t *testing.T, g *Gate, command string) *Outcome {
	t.Helper()
	p := g.Config().Policy(config.DefaultAgent)
	return g.Call(context.Background(), Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", State: policy.NewState()}, Policy: p},
		"bash", map[string]any{"command": command}, Serve)
}

// TestWallTxnGate: the real effects of a walled call are judged by the
// agent's whole chain, a library user's rule included, and the audit line
// records them beside the predicted ones.
func TestWallTxnGate(t *testing.T) {
	cfg := txnConfig(t)
	noDrafts := policy.Rule{Name: "no-drafts", Check: func(c *policy.ToolCall) *policy.Deny {
		for i, e := range c.Effects {
			if strings.HasSuffix(e.Path.String(), ".draft") {
				return &policy.Deny{Effect: &c.Effects[i], Reason: "no drafts: " + e.Path.String()}
			}
		}
		return nil
	}}
	g := txnGate(t, cfg, noDrafts)

	o := bashCall(t, g, `sed -i 's/a/A/' notes/a.md; python3 -c "open('notes/p.md','w').write('p')"`)
	if o.Decision != Allow || o.IsError() {
		t.Fatalf("decision %s: %s", o.Decision, o.Text())
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.Vault, "notes/a.md")); string(b) != "A\n" {
		t.Errorf("notes/a.md = %q", b)
	}
	r := o.Record
	if r.Outcome != "ok" || len(r.Real) != 2 {
		t.Fatalf("record: outcome %q, real %+v", r.Outcome, r.Real)
	}
	for _, e := range r.Real {
		switch e.Path {
		case "notes/a.md":
			if e.Op != "modify" || e.Unpredicted || e.Before == nil || e.After == nil || e.Before.SHA256 == e.After.SHA256 || e.Zone != "edit" {
				t.Errorf("real %+v", e)
			}
		case "notes/p.md":
			if e.Op != "create" || !e.Unpredicted || e.Before != nil || e.After == nil || e.After.Size != 1 {
				t.Errorf("real %+v", e)
			}
		default:
			t.Errorf("real %+v", e)
		}
	}

	// The analysis sees python, not the file it writes: the library rule
	// refuses the real one, and nothing of the call is applied.
	o = bashCall(t, g, `echo n > notes/n.md; python3 -c "open('notes/x.draft','w').write('d')"`)
	if o.Decision != Allow || !o.IsError() || !strings.Contains(o.Text(), "no drafts: notes/x.draft") {
		t.Fatalf("decision %s: %s", o.Decision, o.Text())
	}
	for _, name := range []string{"notes/n.md", "notes/x.draft"} {
		if _, err := os.Lstat(filepath.Join(cfg.Vault, name)); err == nil {
			t.Errorf("%s was applied", name)
		}
	}
	r = o.Record
	if r.Outcome != "failed" || r.Rule != "no-drafts" || !strings.Contains(r.Error, "nothing in the vault was changed") {
		t.Errorf("record: outcome %q, rule %q, error %q", r.Outcome, r.Rule, r.Error)
	}
	refused := 0
	for _, e := range r.Real {
		if e.Refused {
			refused++
			if e.Path != "notes/x.draft" || !e.Unpredicted {
				t.Errorf("refused %+v", e)
			}
		}
	}
	if refused != 1 {
		t.Errorf("real %+v: want one refused", r.Real)
	}
	rep, err := audit.Verify(cfg.AuditPath)
	if err != nil || !rep.OK || rep.Lines != 2 {
		t.Errorf("verify: %v, %v", rep, err)
	}
}

// TestWallTxnRenameInEditZone: with the overlay, a rename in an edit zone
// is no longer refused by the bash rule; without the wall it still is.
func TestWallTxnRenameInEditZone(t *testing.T) {
	cfg := txnConfig(t)
	g := txnGate(t, cfg)
	if o := bashCall(t, g, "mv notes/a.md notes/b.md"); o.Decision != Allow || o.IsError() {
		t.Fatalf("walled: %s: %s", o.Decision, o.Text())
	}
	if _, err := os.Stat(filepath.Join(cfg.Vault, "notes/b.md")); err != nil {
		t.Error(err)
	}
	cfg.Agents[config.DefaultAgent].Bash.Wall = config.WallOff
	o := bashCall(t, g, "mv notes/b.md notes/c.md")
	if o.Decision != Deny || !strings.Contains(o.Text(), "bash may remove or rename files only in write zones") {
		t.Fatalf("wall off: %s: %s", o.Decision, o.Text())
	}
}

// TestOpenChecksOverlay: a state folder inside the vault can't hold an
// overlay layer, and a server's start-up says so; a hook's or exec's
// gate (OpenCall), opened for every call, makes no layer to find out, nor
// do the person's and a dry run's.
func TestOpenChecksOverlay(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	if err := os.Mkdir(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Default(vault)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateDir, cfg.AuditPath = filepath.Join(vault, "state"), filepath.Join(vault, "state", "audit.jsonl")
	for role, openRole := range map[string]func() (*Gate, error){
		"call":    func() (*Gate, error) { return OpenCall(cfg, config.DefaultAgent) },
		"person":  func() (*Gate, error) { return OpenPerson(cfg) },
		"dry run": func() (*Gate, error) { return OpenDryRun(cfg) },
	} {
		said := stderrOf(t, func() {
			g, err := openRole()
			if err != nil {
				t.Fatalf("%s: %v", role, err)
			}
			g.Close()
		})
		if _, err := os.Lstat(filepath.Join(VaultStateDir(cfg), "txn")); said != "" || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a %s's gate: said %q, layers folder: %v", role, said, err)
		}
	}
	var log bytes.Buffer
	g, err := OpenServer(cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if !strings.Contains(log.String(), "walled bash calls will fail") || !strings.Contains(log.String(), "inside the vault") {
		t.Errorf("log %q", log.String())
	}
}

// TestOpenSweeps: a server's gate, a call's and the person's remove the
// layer of a call a stop cut short, and say so (a server to its log, the
// others to stderr); with nothing to sweep they say nothing.
func TestOpenSweeps(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	if err := os.Mkdir(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Default(vault)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StateDir, cfg.AuditPath = filepath.Join(dir, "state"), filepath.Join(dir, "state", "audit.jsonl")
	for role, openRole := range map[string]func(log io.Writer) (*Gate, error){
		"server": func(log io.Writer) (*Gate, error) { return OpenServer(cfg, log) },
		"call":   func(io.Writer) (*Gate, error) { return OpenCall(cfg, config.DefaultAgent) },
		"person": func(io.Writer) (*Gate, error) { return OpenPerson(cfg) },
	} {
		openOnce := func() string {
			var log bytes.Buffer
			said := stderrOf(t, func() {
				g, err := openRole(&log)
				if err != nil {
					t.Fatalf("%s: %v", role, err)
				}
				g.Close()
			})
			return log.String() + said
		}
		abandoned := filepath.Join(VaultStateDir(cfg), "txn", "0123", "upper", "notes")
		if err := os.MkdirAll(abandoned, 0o700); err != nil {
			t.Fatal(err)
		}
		said := openOnce()
		if _, err := os.Stat(filepath.Join(VaultStateDir(cfg), "txn", "0123")); !os.IsNotExist(err) {
			t.Errorf("%s: the abandoned layer is still there: %v", role, err)
		}
		if !strings.Contains(said, "removed 1 abandoned call layer") {
			t.Errorf("%s said %q", role, said)
		}
		if said := openOnce(); said != "" {
			t.Errorf("%s: a start-up with nothing to sweep said %q", role, said)
		}
	}
}

// TestBashRightAfterAFileTool: a walled bash call sent the moment a file
// tool changed the note it works on (as a script's calls come) commits:
// the file tool's change, made before the call started, is not taken for
// someone else's made while it ran.
func TestBashRightAfterAFileTool(t *testing.T) {
	cfg := txnConfig(t)
	g := txnGate(t, cfg)
	c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", State: policy.NewState()}, Policy: g.Config().Policy(config.DefaultAgent)}
	do := func(tool string, args map[string]any) *Outcome {
		t.Helper()
		o := g.Call(context.Background(), c, tool, args, Serve)
		if o.IsError() {
			t.Fatalf("%s %v: %s", tool, args, o.Text())
		}
		return o
	}
	for i := range 6 {
		do("read", map[string]any{"path": "notes/a.md"})
		switch i % 3 {
		case 0:
			do("write", map[string]any{"path": "notes/a.md", "content": "written\n"})
		case 1:
			do("edit", map[string]any{"path": "notes/a.md", "old_string": "more", "new_string": "edited"})
		case 2:
			do("move", map[string]any{"source": "notes/a.md", "destination": "notes/b.md"})
			do("move", map[string]any{"source": "notes/b.md", "destination": "notes/a.md"})
		}
		want := readFile(t, filepath.Join(cfg.Vault, "notes/a.md"))
		do("bash", map[string]any{"command": "echo more >> notes/a.md"})
		if got := readFile(t, filepath.Join(cfg.Vault, "notes/a.md")); got != want+"more\n" {
			t.Fatalf("round %d: the note holds %q, want %q", i, got, want+"more\n")
		}
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
