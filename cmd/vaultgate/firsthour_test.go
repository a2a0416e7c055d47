package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// The tests' own config folder: vaultgate init lists every vault it sets
// up in the person's config folder (config.RegistryPath), and a test's
// init must not list its vaults in the real one. A test that needs one
// of its own sets XDG_CONFIG_HOME again.
func init() {
	if dir, err := os.MkdirTemp("", "vaultgate-config-"); err == nil {
		os.Setenv("XDG_CONFIG_HOME", dir)
	}
}

// person is a fresh home folder: its own config and state folders, so a
// test's vaults are listed where nothing else is.
type person struct {
	home string
	env  []string
}

func newPerson(t *testing.T) *person {
	t.Helper()
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", configEnv:
			continue
		}
		env = append(env, kv)
	}
	return &person{home: home, env: env}
}

// run runs a built binary in dir as the person, with extra environment.
func (p *person) run(t *testing.T, dir, stdin string, extra []string, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), p.env...), extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// vaultgate runs the built vaultgate in dir as the person.
func (p *person) vaultgate(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	return p.run(t, dir, "", nil, filepath.Join(bundle(t), "vaultgate"), args...)
}

// initVault copies the sample vault to name in the person's home and runs
// init on it; it returns the vault and the config init wrote.
func (p *person) initVault(t *testing.T, name string) (string, string) {
	t.Helper()
	vault := filepath.Join(p.home, name)
	vaulttest.CopyDir(t, "../../testdata/vault", vault)
	out, errOut, code := p.vaultgate(t, p.home, "init", vault)
	if code != 0 || !strings.Contains(out, "listed "+vault) {
		t.Fatalf("init %s: exit %d\n%s%s", name, code, out, errOut)
	}
	ls, err := config.Lookup(filepath.Join(p.home, ".config", "vaultgate", config.RegistryFile), vault)
	if err != nil || ls == nil {
		t.Fatalf("%s is not listed: %v", vault, err)
	}
	return vault, ls.Config
}

// TestEveryCommandFindsItsConfig: with two vaults set up by init, every
// command run inside one without --config takes that vault's config;
// outside both it names them and how to pick one (exit 2);
// $VAULTGATE_CONFIG comes before the list and --config before both; a
// config planted in the vault is never taken.
func TestEveryCommandFindsItsConfig(t *testing.T) {
	p := newPerson(t)
	a, aCfg := p.initVault(t, "notes")
	b, bCfg := p.initVault(t, "work/notes") // the same name: a config of its own
	if aCfg == bCfg {
		t.Fatalf("two vaults named notes share %s", aCfg)
	}
	// an agent's plant: a config in the vault that would open мета
	os.WriteFile(filepath.Join(a, "vaultgate.toml"), []byte("vault = \".\"\n[zones]\nwrite = [\".\"]\n"), 0o644)
	for _, v := range []struct{ vault, cfg string }{{a, aCfg}, {b, bCfg}} {
		in := filepath.Join(v.vault, "notes")
		for _, args := range [][]string{
			{"zones", "--colour", "never"}, {"doctor"}, {"check", "delete", "path=мета/x.md"}, {"rules"},
			{"history"}, {"diff", "0"}, {"undo", "--since", "1h"}, {"audit", "stats"}, {"audit", "verify"},
		} {
			out, errOut, code := p.vaultgate(t, in, args...)
			if strings.Contains(errOut, "no config") || strings.Contains(errOut, "--config") || code == exitUsage && args[0] != "diff" {
				t.Errorf("%s in %s: exit %d\n%s%s", args, in, code, out, errOut)
			}
		}
		out, errOut, code := p.vaultgate(t, in, "check", "delete", "path=мета/x.md")
		if code != exitDeny || !strings.Contains(out, "zone edit") {
			t.Errorf("check in %s: exit %d, want the config's deny (not the planted one's)\n%s%s", v.vault, code, out, errOut)
		}
		out, _, _ = p.vaultgate(t, in, "doctor")
		if !strings.Contains(out, "config "+v.cfg+" loads (vault "+v.vault+")") {
			t.Errorf("doctor in %s took another config:\n%s", v.vault, out)
		}
		if os.Geteuid() == 0 || os.Getenv("CI") != "" {
			out, errOut, code = p.vaultgate(t, in, "exec", "--", "pwd")
			if code != 0 || strings.TrimSpace(out) != in {
				t.Errorf("exec in %s: exit %d %q %q", in, code, out, errOut)
			}
		}
	}
	// the audit log each wrote to is its own
	for _, v := range []string{a, b} {
		out, _, code := p.vaultgate(t, v, "audit", "tail", "--json")
		if code != 0 || strings.Count(out, "\n") == 0 && (os.Geteuid() == 0 || os.Getenv("CI") != "") {
			t.Errorf("audit tail in %s: exit %d %q", v, code, out)
		}
	}
	out, errOut, code := p.vaultgate(t, p.home, "zones")
	if code != exitUsage || out != "" || !strings.Contains(errOut, a) || !strings.Contains(errOut, b) || !strings.Contains(errOut, "VAULTGATE_CONFIG") {
		t.Errorf("outside every vault: exit %d\n%s%s", code, out, errOut)
	}
	// $VAULTGATE_CONFIG before the list, --config before both
	out, _, _ = p.run(t, a, "", []string{configEnv + "=" + bCfg}, filepath.Join(bundle(t), "vaultgate"), "zones", "--colour", "never")
	if !strings.HasPrefix(out, b+" ") {
		t.Errorf("VAULTGATE_CONFIG in a: %s", out)
	}
	out, _, _ = p.run(t, a, "", []string{configEnv + "=" + bCfg}, filepath.Join(bundle(t), "vaultgate"), "zones", "--config", aCfg, "--colour", "never")
	if !strings.HasPrefix(out, a+" ") {
		t.Errorf("--config over VAULTGATE_CONFIG: %s", out)
	}
	// the list open to others' writes is not trusted: the command says so
	reg := filepath.Join(p.home, ".config", "vaultgate", config.RegistryFile)
	os.Chmod(reg, 0o666)
	if _, errOut, code := p.vaultgate(t, a, "zones"); code != exitUsage || !strings.Contains(errOut, "open to others") {
		t.Errorf("an open list: exit %d %s", code, errOut)
	}
	os.Chmod(reg, 0o600)
	// a second init changes nothing and keeps the one config
	before, _ := os.ReadFile(aCfg)
	if out, _, code := p.vaultgate(t, p.home, "init", a); code != 0 || !strings.Contains(out, "kept "+aCfg) {
		t.Errorf("init again: exit %d\n%s", code, out)
	}
	if after, _ := os.ReadFile(aCfg); !bytes.Equal(before, after) {
		t.Error("init again changed the config")
	}
}

// secretVault is a vault set up by init as a new user would, with secrets
// kept beside the notes and everything committed to git.
func secretVault(t *testing.T, p *person) (string, string) {
	t.Helper()
	vault, cfg := p.initVault(t, "Notes")
	for name, body := range map[string]string{
		".env": "TOKEN=root-secret\n", "config/.env.production": "TOKEN=prod-secret\n",
		"keys/deploy.pem": "-----BEGIN pem-secret\n", "notes/a.md": "a note about env\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, name)), 0o755)
		if err := os.WriteFile(filepath.Join(vault, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if git, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "all"}} {
			cmd := exec.Command(git, args...)
			cmd.Dir = vault
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	}
	time.Sleep(20 * time.Millisecond) // git's files older than a call's start
	return vault, cfg
}

// TestStarterHidesSecrets: with the zones init writes, the usual secret
// files are hidden wherever they are: walled bash (the built vaultgate
// exec, run in the vault as Claude Code's Bash is) prints none of them by
// name or by glob, git there says why it finds no repository, and Claude
// Code's Read through the hook (vaultgate-hook) is refused; its Grep and
// Glob over a folder are refused while a secret is in it and allowed once
// none is (the starter config works with Claude Code), and a note is read.
func TestStarterHidesSecrets(t *testing.T) {
	p := newPerson(t)
	vault, cfg := secretVault(t, p)
	hook := filepath.Join(bundle(t), "vaultgate-hook")
	if os.Geteuid() == 0 || os.Getenv("CI") != "" {
		for _, c := range []struct {
			cmd     string
			refused bool
		}{
			{"cat .env", true}, {"head config/.env.production", true}, {"cat keys/deploy.pem", true},
			{"cat .en?", false}, {"cat */.env*; cat keys/*", false}, {"grep -r TOKEN . ; true", false},
		} {
			out, errOut, code := p.vaultgate(t, vault, "exec", "--", c.cmd)
			if strings.Contains(out+errOut, "-secret") {
				t.Errorf("%s printed a secret: exit %d\n%s%s", c.cmd, code, out, errOut)
			}
			if c.refused && (code != exitRefused || !strings.Contains(errOut, "zone hidden")) {
				t.Errorf("%s: exit %d, want refused (125) naming the zone\n%s", c.cmd, code, errOut)
			}
		}
		if out, errOut, code := p.vaultgate(t, vault, "exec", "--", "cat notes/a.md"); code != 0 || out != "a note about env\n" {
			t.Errorf("cat notes/a.md: exit %d %q %q", code, out, errOut)
		}
		if _, err := exec.LookPath("git"); err == nil {
			out, errOut, _ := p.vaultgate(t, vault, "exec", "--", "git status")
			if strings.Contains(out+errOut, "deleted:") || !strings.Contains(errOut, "its .git is hidden from you") {
				t.Errorf("git status in the wall:\n%s%s", out, errOut)
			}
		}
	}
	hookCall := func(tool string, input map[string]any) string {
		t.Helper()
		out, errOut, code := p.run(t, vault, hookJSON("s", vault, tool, input), nil, hook, "--config", cfg)
		var r struct {
			HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("hook %s: exit %d %q %q", tool, code, out, errOut)
		}
		return r.HookSpecificOutput.PermissionDecision + " " + r.HookSpecificOutput.PermissionDecisionReason
	}
	for _, f := range []string{".env", "config/.env.production", "keys/deploy.pem"} {
		if got := hookCall("Read", map[string]any{"file_path": filepath.Join(vault, f)}); !strings.HasPrefix(got, "deny") {
			t.Errorf("Read %s: %s", f, got)
		}
	}
	if got := hookCall("Read", map[string]any{"file_path": filepath.Join(vault, "notes/a.md")}); !strings.HasPrefix(got, "allow") {
		t.Errorf("Read notes/a.md: %s", got)
	}
	for _, c := range []struct {
		tool  string
		input map[string]any
	}{
		{"Grep", map[string]any{"pattern": "TOKEN", "path": vault}},
		{"Glob", map[string]any{"pattern": "**/*"}},
		{"Grep", map[string]any{"pattern": "TOKEN", "path": filepath.Join(vault, "config")}},
	} {
		if got := hookCall(c.tool, c.input); !strings.HasPrefix(got, "deny") || !strings.Contains(got, "hidden from you") {
			t.Errorf("%s %v with secrets there: %s", c.tool, c.input, got)
		}
	}
	if got := hookCall("Grep", map[string]any{"pattern": "TOKEN", "path": filepath.Join(vault, "notes")}); !strings.HasPrefix(got, "allow") {
		t.Errorf("Grep notes, which holds no secret: %s", got)
	}
	for _, f := range []string{".env", "config/.env.production", "keys/deploy.pem"} {
		os.Remove(filepath.Join(vault, f))
	}
	for _, c := range []struct {
		tool  string
		input map[string]any
	}{
		{"Grep", map[string]any{"pattern": "TOKEN", "path": vault}},
		{"Glob", map[string]any{"pattern": "**/*.md"}},
	} {
		if got := hookCall(c.tool, c.input); !strings.HasPrefix(got, "allow") {
			t.Errorf("%s %v with no secret left: %s", c.tool, c.input, got)
		}
	}
}

// TestZoneTypoStopsServers: a protected entry that names no folder (a
// typo of Archive) stops serve and hook-judge (exit 2) and the hook denies
// every call, each with a "did you mean"; doctor calls it a problem
// (exit 1). Marked as expected later it starts; the starter config on a
// fresh, empty vault starts without a word on stderr.
func TestZoneTypoStopsServers(t *testing.T) {
	p := newPerson(t)
	vault := filepath.Join(p.home, "v")
	os.MkdirAll(filepath.Join(vault, "Archive"), 0o755)
	cfg := filepath.Join(p.home, "v.toml")
	write := func(protected string) {
		os.WriteFile(cfg, []byte("vault = \"v\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nedit = [\".\"]\nprotected = [\""+protected+"\"]\n"), 0o600)
	}
	write("Archve")
	bin := filepath.Join(bundle(t), "vaultgate")
	for _, args := range [][]string{{"serve", "--config", cfg}, {"hook-judge", "--config", cfg, "--idle", "1s"}} {
		_, errOut, code := p.run(t, vault, "", nil, bin, args...)
		if code != exitUsage || !strings.Contains(errOut, `"Archve" does not exist`) || !strings.Contains(errOut, `did you mean "Archive"?`) {
			t.Errorf("%s: exit %d %s", args[0], code, errOut)
		}
	}
	out, _, code := p.run(t, vault, hookJSON("s", vault, "Write", map[string]any{"file_path": filepath.Join(vault, "Archive/x.md"), "content": "x"}), nil, bin, "hook", "--config", cfg)
	if !strings.Contains(out, `"permissionDecision":"deny"`) && code == 0 || code != 0 && code != exitUsage {
		t.Errorf("hook: exit %d %s", code, out)
	}
	out, _, code = p.run(t, vault, "", nil, bin, "doctor", "--config", cfg)
	if code != 1 || !regexp.MustCompile(`PROBLEM .*"Archve" does not exist.*did you mean "Archive"\?`).MatchString(out) {
		t.Errorf("doctor: exit %d\n%s", code, out)
	}
	write("Archve?")
	_, errOut, code := p.run(t, vault, "", nil, bin, "serve", "--config", cfg)
	if code != 0 || errOut != "" {
		t.Errorf("serve with Archve?: exit %d %s", code, errOut)
	}
	// the starter config on an empty vault
	fresh := filepath.Join(p.home, "fresh")
	os.MkdirAll(fresh, 0o755)
	if _, errOut, code := p.vaultgate(t, p.home, "init", fresh); code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	_, errOut, code = p.vaultgate(t, fresh, "serve")
	if code != 0 || errOut != "" {
		t.Errorf("serve on a fresh vault: exit %d, stderr %q", code, errOut)
	}
	if out, _, code := p.vaultgate(t, fresh, "doctor"); code != 0 || strings.Contains(out, "\nwarning") {
		t.Errorf("doctor on a fresh vault: exit %d\n%s", code, out)
	}
}

// TestHelpSpellsFlagsAsUsage: every command's help, and each audit
// subcommand's, spells a flag as its usage line does, --name (a one-letter
// flag -n), never Go's -name; so does the error of a bad flag.
func TestHelpSpellsFlagsAsUsage(t *testing.T) {
	oneDash := regexp.MustCompile(`(?m)^\s+-[A-Za-z][A-Za-z0-9-]+`)
	helps := map[string]string{}
	for _, c := range commands {
		out, _, _ := runCLI(t, c.name, "--help")
		helps[c.name] = out
	}
	for _, sub := range auditSubs {
		out, _, _ := runCLI(t, "audit", sub.name, "--help")
		helps["audit "+sub.name] = out
	}
	for name, out := range helps {
		if m := oneDash.FindString(out); m != "" {
			t.Errorf("%s --help spells a flag %q:\n%s", name, strings.TrimSpace(m), out)
		}
		if strings.Contains(out, "flags:") && !strings.Contains(out, "\n  --") {
			t.Errorf("%s --help lists no --flag:\n%s", name, out)
		}
	}
	if !strings.Contains(helps["audit tail"], "\n  -n int") || !strings.Contains(helps["audit tail"], "\n  --follow") {
		t.Errorf("audit tail --help:\n%s", helps["audit tail"])
	}
	if _, errOut, code := runCLI(t, "zones", "--bogus"); code != exitUsage || !strings.Contains(errOut, "not defined: --bogus") {
		t.Errorf("a bad flag: exit %d %s", code, errOut)
	}
}

// TestCheckKeyValue: check takes the tool's arguments as KEY=VALUE words,
// typed as the tool takes them, and decides as with the same JSON.
func TestCheckKeyValue(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"delete", "path=мета/x.md"}, exitDeny, "delete   мета/x.md"},
		{[]string{"delete", `{"path":"мета/x.md"}`}, exitDeny, "delete   мета/x.md"},
		{[]string{"delete", "path=мета/бобер/x.md"}, exitOK, "decision: allow"},
		{[]string{"list", "path=notes", "depth=2"}, exitOK, "read     notes"},
		{[]string{"write", "path=notes/n.md", "content=a=b c"}, exitOK, "create   notes/n.md"},
		{[]string{"list", "depth=two"}, exitUsage, ""},
		{[]string{"delete", "path=a", "path=b"}, exitUsage, ""},
		{[]string{"delete", "path=a", "oops"}, exitUsage, ""},
	} {
		out, errOut, code := runCLI(t, append([]string{"check", "--config", cfg}, c.args...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("check %q: exit %d, want %d and %q\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}
}

// TestRefusalSaysWhereItLies: a change refused in a protected folder of a
// vault whose root allows it names the folder it lies in, and the root
// as allowed outside it (never "the whole vault"), and no folder that is
// not there.
func TestRefusalSaysWhereItLies(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	out, _, code := runCLI(t, "check", "--config", cfg, "edit", "path=мета/план.md", "old_string=a", "new_string=b")
	want := `change "мета/план.md": zone protected (read only). It lies in мета. Changing existing files is allowed in: the vault (.) outside .obsidian, мета, 💬 чаты; мета/бобер.`
	if code != exitDeny || !strings.Contains(out, want) {
		t.Errorf("exit %d\n%s\nwant %s", code, out, want)
	}
	out, _, _ = runCLI(t, "check", "--config", cfg, "write", "path=notes/.claude/settings.json", "content=x")
	if !strings.Contains(out, `create "notes/.claude": zone protected (read only). It is a control path`) {
		t.Errorf("a control path:\n%s", out)
	}
}

// TestAuditStatsColumnsHold: a session id longer than the column keeps
// the counts of every row in line with the header's.
func TestAuditStatsColumnsHold(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	long := "claude-" + strings.Repeat("0123456789abcdef", 3)
	var lines []string
	for i, s := range []string{long, "short", "💬-сессия-с-длинным-именем-и-эмодзи"} {
		lines = append(lines, `{"v":1,"id":"`+string(rune('a'+i))+`","time":"2026-01-01T00:00:00Z","via":"stdio","session":"`+s+`","agent":"default","tool":"read","decision":"allow"}`)
	}
	os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	out, errOut, _ := runCLI(t, "audit", "stats", "--audit", log)
	var header int
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "by session:"):
			header = cellWidth(line[:strings.Index(line, "calls")+len("calls")])
		case header > 0 && strings.HasPrefix(line, "  ") && strings.TrimSpace(line) != "":
			fields := strings.Fields(line)
			first := strings.Index(line, " "+fields[len(fields)-4]) + 1 + len(fields[len(fields)-4])
			if got := cellWidth(line[:first]); got != header {
				t.Errorf("row %q: calls end at column %d, the header's at %d\n%s%s", line, got, header, out, errOut)
			}
		case header > 0:
			header = 0
		}
	}
	if !strings.Contains(out, long) {
		t.Errorf("no long session:\n%s%s", out, errOut)
	}
}
