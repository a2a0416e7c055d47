package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
)

// folderRules are docs/config.md's drafts_are_mine, as written there, and a
// limit of deletes per session.
const folderRules = `
[[rules.deny]]
name   = "drafts_are_mine"
when   = 'effect.op in ["modify", "delete", "move-out"] && effect.path.startsWith("drafts/")'
reason = "drafts/ is the person's own: put your version in drafts-agent/ instead"

[[rules.deny]]
name   = "three_deletes"
when   = 'effect.op == "delete" && session.count["delete"] >= 3'
reason = "no more than 3 deletes per session"
`

// folderConfig is a vault on disk whose bash runs walled on the overlay:
//
//	.   edit    notes/a.md  notes/plain/{a,b}.md  notes/repo/{n.md,.git/HEAD}  drafts/x.md
//	w   write   w/repo/{n.md,.git/HEAD}  w/plain/{a,b}.md  w/two/{a,b}.md  w/fifty/f00…f49.md
func folderConfig(t *testing.T) *config.Config {
	t.Helper()
	if _, err := sandbox.ProbeWall("").For(false, false, true); err != nil {
		t.Skipf("wall with overlay unavailable: %v", err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	vault := filepath.Join(base, "vault")
	files := []string{"notes/a.md", "notes/plain/a.md", "notes/plain/b.md", "notes/repo/n.md", "notes/repo/.git/HEAD", "drafts/x.md",
		"w/repo/n.md", "w/repo/.git/HEAD", "w/plain/a.md", "w/plain/b.md", "w/two/a.md", "w/two/b.md"}
	for i := range 50 {
		files = append(files, fmt.Sprintf("w/fifty/f%02d.md", i))
	}
	for _, name := range files {
		p := filepath.Join(vault, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cfgPath := filepath.Join(base, "vault.toml")
	body := "vault = \"" + vault + "\"\n[audit]\npath = \"" + filepath.Join(base, "state", "audit.jsonl") + "\"\n" +
		"[zones]\nedit = [\".\"]\nwrite = [\"w\"]\n[bash]\nenv = [\"PATH\"]\n" + folderRules
	if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestWallFolderEffects: a folder moved, removed or renamed away and back
// is judged on every path inside it, by every route — the move and delete
// tools, bash's mv and rm, a program's os.rename and rmtree — and the
// config's rules see each path: a nested .git (a control path) can't be
// moved or removed with its folder, drafts_are_mine as docs/config.md writes
// it holds against moving drafts away, and a recursive delete of 50 files
// counts 50 deletes in a fresh session. Each refusal leaves the vault as
// it was; each row has its positive control.
func TestWallFolderEffects(t *testing.T) {
	const py = `python3 -c "import os, shutil; `
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		refuse     string // "" allowed; else what the refusal says
		gone, made string // allowed: a path the call removes, one it makes
	}{
		// a nested .git
		{"move tool, folder holding .git", "move", map[string]any{"source": "notes/repo", "destination": "notes/r2"}, "notes/repo/.git", "", ""},
		{"move tool, plain folder", "move", map[string]any{"source": "notes/plain", "destination": "notes/p2"}, "", "notes/plain/a.md", "notes/p2/a.md"},
		{"bash mv, folder holding .git", "bash", bashArgs("mv notes/repo notes/r2"), "notes/repo/.git", "", ""},
		{"bash mv, plain folder", "bash", bashArgs("mv notes/plain notes/p2"), "", "notes/plain/a.md", "notes/p2/a.md"},
		{"os.rename, folder holding .git", "bash", bashArgs(py + `os.rename('notes/repo', 'notes/r2')"`), "notes/repo/.git", "", ""},
		{"os.rename, plain folder", "bash", bashArgs(py + `os.rename('notes/plain', 'notes/p2')"`), "", "notes/plain/a.md", "notes/p2/a.md"},
		// moved away, then removed, in a write zone
		{"mv and rm -rf, folder holding .git", "bash", bashArgs("mv w/repo w/r2 && rm -rf w/r2"), "w/repo/.git", "", ""},
		{"mv and rm -rf, plain folder", "bash", bashArgs("mv w/plain w/p2 && rm -rf w/p2"), "", "w/plain/a.md", ""},
		{"rename and rmtree, folder holding .git", "bash", bashArgs(py + `os.rename('w/repo', 'w/r2'); shutil.rmtree('w/r2')"`), "w/repo/.git", "", ""},
		{"rename and rmtree, plain folder", "bash", bashArgs(py + `os.rename('w/plain', 'w/p2'); shutil.rmtree('w/p2')"`), "", "w/plain/a.md", ""},
		// drafts_are_mine, moved away and back
		{"move tool, drafts away", "move", map[string]any{"source": "drafts", "destination": "d2"}, "drafts/ is the person's own", "", ""},
		{"bash mv, drafts away", "bash", bashArgs("mv drafts d2"), "drafts/ is the person's own", "", ""},
		{"os.rename, drafts away", "bash", bashArgs(py + `os.rename('drafts', 'd2')"`), "drafts/ is the person's own", "", ""},
		{"python, drafts away, edited and back", "bash",
			bashArgs(py + `os.rename('drafts', 'd2'); open('d2/x.md', 'a').write('more'); os.rename('d2', 'drafts')"`), "drafts/ is the person's own", "", ""},
		{"python, a folder beside drafts away, edited and back", "bash",
			bashArgs(py + `os.rename('w/plain', 'w/p2'); open('w/p2/a.md', 'a').write('more'); os.rename('w/p2', 'w/plain')"`), "", "", "w/plain/a.md"},
		{"move tool, notes away", "move", map[string]any{"source": "notes", "destination": "n2"}, "notes/repo/.git", "", ""},
		{"move tool, a plain folder beside drafts", "move", map[string]any{"source": "w/plain", "destination": "w/drafts"}, "", "w/plain/a.md", "w/drafts/a.md"},
		// a recursive delete counts every file
		{"delete tool, 50 files", "delete", map[string]any{"path": "w/fifty", "recursive": true}, "no more than 3 deletes per session", "", ""},
		{"delete tool, 2 files", "delete", map[string]any{"path": "w/two", "recursive": true}, "", "w/two/a.md", ""},
		{"rm -rf, 50 files", "bash", bashArgs("rm -rf w/fifty"), "no more than 3 deletes per session", "", ""},
		{"rm -rf, 2 files", "bash", bashArgs("rm -rf w/two"), "", "w/two/a.md", ""},
		{"rmtree, 50 files", "bash", bashArgs(py + `shutil.rmtree('w/fifty')"`), "no more than 3 deletes per session", "", ""},
		{"rmtree, 2 files", "bash", bashArgs(py + `shutil.rmtree('w/two')"`), "", "w/two/a.md", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := folderConfig(t)
			g := serverGate(t, cfg)
			before := tree(t, cfg.Vault)
			p := cfg.Policy(config.DefaultAgent)
			// a fresh session for each call
			caller := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}, Policy: p}
			o := g.Call(context.Background(), caller, c.tool, c.args, Serve)
			refused := o.Decision == Deny || o.Err != nil || o.Result != nil && o.Result.NotApplied != ""
			if c.refuse == "" {
				if refused || o.IsError() {
					t.Fatalf("refused: %s %q", o.Decision, o.Text())
				}
				if _, err := os.Lstat(filepath.Join(cfg.Vault, c.gone)); c.gone != "" && err == nil {
					t.Errorf("%s is still there", c.gone)
				}
				if _, err := os.Lstat(filepath.Join(cfg.Vault, c.made)); c.made != "" && err != nil {
					t.Errorf("%s was not made: %v", c.made, err)
				}
				return
			}
			if !refused || !strings.Contains(o.Text(), c.refuse) {
				t.Fatalf("%s %q, want a refusal saying %q", o.Decision, o.Text(), c.refuse)
			}
			sameTree(t, "after the refusal", tree(t, cfg.Vault), before)
		})
	}
}

func bashArgs(command string) map[string]any { return map[string]any{"command": command} }

// TestWallFolderAudit: the audit line keeps a folder's effect with how
// many paths inside it the rules judged, not each of them; a real folder
// effect one of whose paths was refused is marked refused.
func TestWallFolderAudit(t *testing.T) {
	cfg := folderConfig(t)
	g := serverGate(t, cfg)
	p := cfg.Policy(config.DefaultAgent)
	call := func(tool string, args map[string]any) *Outcome {
		c := Caller{Via: ViaStdio, Session: &policy.Session{ID: "s", Agent: p.Name, State: policy.NewState()}, Policy: p}
		return g.Call(context.Background(), c, tool, args, Serve)
	}
	effects := func(o *Outcome) string {
		var out []string
		for _, e := range o.Record.Effects {
			out = append(out, fmt.Sprintf("%s %s %d", e.Op, e.Path, e.Covers))
		}
		for _, e := range o.Record.Real {
			out = append(out, fmt.Sprintf("real %s %s %d %v", e.Op, e.Path, e.Covers, e.Refused))
		}
		return strings.Join(out, "; ")
	}
	o := call("move", map[string]any{"source": "notes/plain", "destination": "notes/p2"})
	if got, want := effects(o), "move-out notes/plain/** 2; move-in notes/p2/** 2"; o.IsError() || got != want {
		t.Errorf("move tool: %q, want %q (%s)", got, want, o.Text())
	}
	o = call("bash", bashArgs(`python3 -c "import os; os.rename('w/plain', 'w/p2')"`))
	if got, want := effects(o), "real move-out w/plain/** 2 false; real move-in w/p2/** 2 false"; o.IsError() || !strings.HasSuffix(got, want) {
		t.Errorf("os.rename: %q, want it to end %q (%s)", got, want, o.Text())
	}
	o = call("bash", bashArgs(`python3 -c "import os; os.rename('notes/repo', 'notes/r2')"`))
	if got, want := effects(o), "real move-out notes/repo/** 3 true; real move-in notes/r2/** 3 true"; !o.IsError() || !strings.HasSuffix(got, want) {
		t.Errorf("os.rename of a folder holding .git: %q, want it to end %q (%s)", got, want, o.Text())
	}
}

// TestWallFolderEffectsUnwalled: without the wall, bash's prediction is
// all that is judged, and its folder effects are judged on every path the
// folder holds, as the file tools' are.
func TestWallFolderEffectsUnwalled(t *testing.T) {
	for _, c := range []struct {
		command, refuse, gone string // refuse: "" allowed
	}{
		{"mv w/repo w/r2", "w/repo/.git", ""},
		{"mv w/plain w/p2", "", "w/plain/a.md"},
		{"rm -rf w/fifty", "no more than 3 deletes per session", ""},
		{"rm -rf w/two", "", "w/two/a.md"},
	} {
		t.Run(c.command, func(t *testing.T) {
			cfg := folderConfig(t)
			cfg.Agents[config.DefaultAgent].Bash.Wall = config.WallOff
			g := serverGate(t, cfg)
			before := tree(t, cfg.Vault)
			o := bashCall(t, g, c.command)
			if c.refuse == "" {
				if o.Decision != Allow || o.IsError() {
					t.Fatalf("refused: %s %q", o.Decision, o.Text())
				}
				if _, err := os.Lstat(filepath.Join(cfg.Vault, c.gone)); err == nil {
					t.Errorf("%s is still there", c.gone)
				}
				return
			}
			if o.Decision != Deny || !strings.Contains(o.Text(), c.refuse) {
				t.Fatalf("%s %q, want a refusal saying %q", o.Decision, o.Text(), c.refuse)
			}
			sameTree(t, "after the refusal", tree(t, cfg.Vault), before)
		})
	}
}
