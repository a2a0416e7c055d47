package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds vaultgate once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vaultgate-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "vaultgate")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// sampleVault copies testdata/vault to a temp folder and writes a config for it.
func sampleVault(t *testing.T) (vault, cfg, auditPath string) {
	t.Helper()
	dir := t.TempDir()
	vault = filepath.Join(dir, "vault")
	vaulttest.CopyDir(t, "../../testdata/vault", vault)
	auditPath = filepath.Join(dir, "state", "audit.jsonl")
	cfg = filepath.Join(dir, "vault.toml")
	body := `vault = "vault"
[audit]
path = "state/audit.jsonl"
[zones]
write     = ["мета/бобер"]
create    = ["💬 чаты"]
edit      = ["."]
protected = [".obsidian", "мета"]
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return vault, cfg, auditPath
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		b.WriteString(mcp.GetTextFromContent(ct))
	}
	return b.String(), res.IsError
}

// TestStdioBinary drives the built binary the way Claude Code does.
func TestStdioBinary(t *testing.T) {
	bin := binary(t)
	vault, cfg, auditPath := sampleVault(t)
	c, err := client.NewStdioMCPClient(bin, []string{"HOME=" + t.TempDir()}, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "stdio-test", Version: "1"}
	info, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if info.ServerInfo.Name != "vaultgate" || !strings.Contains(info.Instructions, "мета/бобер: write") {
		t.Errorf("initialize: %+v", info)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "bash,delete,edit,list,move,read,search,write" {
		t.Errorf("tools: %v", names)
	}
	text, isErr := callTool(t, c, "delete", map[string]any{"path": "мета/x.md"})
	if !isErr || !strings.Contains(text, "Deleting is allowed in: мета/бобер") {
		t.Errorf("delete мета/x.md: %q %v", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(vault, "мета/x.md")); err != nil {
		t.Errorf("the protected file is gone: %v", err)
	}
	text, isErr = callTool(t, c, "delete", map[string]any{"path": "мета/бобер/x.md"})
	if isErr {
		t.Errorf("delete мета/бобер/x.md: %q", text)
	}
	if _, err := os.Stat(filepath.Join(vault, "мета/бобер/x.md")); err == nil {
		t.Error("the file in the write zone is still there")
	}
	c.Close()
	// the audit log has both calls, with their decisions
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var decisions []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct{ Tool, Decision, Via string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		decisions = append(decisions, r.Tool+":"+r.Decision+":"+r.Via)
	}
	if strings.Join(decisions, " ") != "delete:deny:stdio delete:allow:stdio" {
		t.Errorf("audit: %v", decisions)
	}
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestCheckExitCodes(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	out, _, code := runCLI(t, "check", "--config", cfg, "delete", `{"path":"мета/x.md"}`)
	if code != exitDeny || !strings.Contains(out, "delete   мета/x.md") || !strings.Contains(out, "protected") || !strings.Contains(out, "decision: deny") {
		t.Errorf("deny: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "check", "--config", cfg, "delete", `{"path":"мета/бобер/x.md"}`)
	if code != exitOK || !strings.Contains(out, "decision: allow") {
		t.Errorf("allow: %d\n%s", code, out)
	}
	_, _, code = runCLI(t, "check", "--config", cfg, "delete", `{"path":`)
	if code != exitUsage {
		t.Errorf("bad JSON: exit %d", code)
	}
	_, _, code = runCLI(t, "check", "--config", cfg, "delete", `{"paht":"x"}`)
	if code != exitUsage {
		t.Errorf("malformed call: exit %d", code)
	}
	_, _, code = runCLI(t, "check", "delete", `{"path":"x"}`)
	if code != exitUsage {
		t.Errorf("no config: exit %d", code)
	}
	// a dry run touches nothing and logs nothing
	vault, cfg2, auditPath := sampleVault(t)
	runCLI(t, "check", "--config", cfg2, "delete", `{"path":"мета/бобер/x.md"}`)
	if _, err := os.Stat(filepath.Join(vault, "мета/бобер/x.md")); err != nil {
		t.Error("check ran the call")
	}
	if _, err := os.Stat(auditPath); err == nil {
		t.Error("check wrote the audit log")
	}
}

func TestZonesCommand(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	out, _, code := runCLI(t, "zones", "--config", cfg, "--colour", "never")
	for _, want := range []string{"[edit:", "мета/  [protected: read only]", "бобер/  [write: anything, deleting included]", "💬 чаты/  [create: new files only]", ".obsidian/  [protected"} {
		if !strings.Contains(out, want) {
			t.Errorf("zones output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 || strings.Contains(out, "\x1b[") {
		t.Errorf("exit %d, colour with --colour never", code)
	}
	out, _, code = runCLI(t, "zones", "--config", cfg, "--wall")
	if code != 0 || !strings.Contains(out, "мета") {
		t.Errorf("zones --wall: exit %d\n%s", code, out)
	}
	out, _, _ = runCLI(t, "zones", "--config", cfg, "--colour", "always")
	if !strings.Contains(out, "\x1b[33m[protected") {
		t.Errorf("no colour with --colour always:\n%q", out)
	}
}

func TestInit(t *testing.T) {
	vault, _, _ := sampleVault(t)
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	out, errOut, code := runCLI(t, "init", vault)
	if code != 0 {
		t.Fatalf("init: %d %s", code, errOut)
	}
	cfgPath := filepath.Join(home, ".config", "vaultgate", "vault.toml")
	if !strings.Contains(out, "wrote "+cfgPath) || !strings.Contains(out, `"serve"`) || !strings.Contains(out, cfgPath) {
		t.Errorf("init output:\n%s", out)
	}
	// the snippet is valid JSON with the config in args and nothing secret there
	start := strings.Index(out, "{")
	var snippet struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		} `json:"mcpServers"`
	}
	if err := json.NewDecoder(strings.NewReader(out[start:])).Decode(&snippet); err != nil {
		t.Fatalf("snippet: %v\n%s", err, out[start:])
	}
	if s := snippet.MCPServers["vault"]; strings.Join(s.Args, " ") != "serve --config "+cfgPath {
		t.Errorf("snippet args: %v", s.Args)
	}
	// the settings snippet: built-in writers denied, no prompts, the hook on every tool
	rest := out[start:]
	settingsAt := strings.Index(rest, "settings.json")
	var settings struct {
		Permissions struct {
			Allow, Deny []string
			DefaultMode string
		}
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Type, Command, OnFailure string }
		}
	}
	if settingsAt < 0 {
		t.Fatalf("no settings snippet:\n%s", out)
	}
	jsonAt := strings.Index(rest[settingsAt:], "{")
	if err := json.NewDecoder(strings.NewReader(rest[settingsAt+jsonAt:])).Decode(&settings); err != nil {
		t.Fatalf("settings snippet: %v", err)
	}
	// no built-in denied, no mode a project file can't grant; the vault's tools allowed
	if strings.Join(settings.Permissions.Allow, ",") != "mcp__vault" || len(settings.Permissions.Deny) > 0 || settings.Permissions.DefaultMode != "" {
		t.Errorf("permissions: %+v", settings.Permissions)
	}
	pre, post := settings.Hooks["PreToolUse"], settings.Hooks["PostToolUse"]
	if len(pre) != 1 || pre[0].Matcher != "*" || !strings.HasSuffix(pre[0].Hooks[0].Command, " || exit 2") || pre[0].Hooks[0].OnFailure != "block" {
		t.Fatalf("PreToolUse hook: %+v", pre)
	}
	if len(post) != 1 || post[0].Matcher != "Read|Write|Edit|MultiEdit|NotebookEdit" || post[0].Hooks[0].OnFailure != "block" {
		t.Fatalf("PostToolUse hook: %+v", post)
	}
	// the failure policy works: a hook binary that can't start blocks (2), not 127
	missing := strings.Replace(pre[0].Hooks[0].Command, snippet.MCPServers["vault"].Command, "/nonexistent/vaultgate", 1)
	err := exec.Command("sh", "-c", missing).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("a missing hook binary: %v, want exit 2", err)
	}
	// the written config loads, and serves the vault it names
	out, errOut, code = runCLI(t, "zones", "--config", cfgPath, "--colour", "never")
	if code != 0 || !strings.Contains(out, ".obsidian/  [protected") {
		t.Errorf("zones on the new config: %d %s %s", code, out, errOut)
	}
	// a second init keeps the vault's one config as it is
	os.WriteFile(cfgPath, append(mustRead(t, cfgPath), "# the person's own line\n"...), 0o600)
	if out, _, code := runCLI(t, "init", vault); code != 0 || !strings.Contains(out, "kept "+cfgPath) || !strings.Contains(string(mustRead(t, cfgPath)), "the person's own line") {
		t.Errorf("init again: exit %d, or the config was overwritten without --force\n%s", code, out)
	}
	if _, _, code := runCLI(t, "init", "--force", vault); code != 0 {
		t.Error("init --force failed")
	}
}

func TestHelp(t *testing.T) {
	for _, c := range commands {
		for _, flag := range []string{"--help", "-h"} {
			out, errOut, code := runCLI(t, c.name, flag)
			if code != 0 || strings.Count(out, "usage: vaultgate "+c.name) != 1 || errOut != "" {
				t.Errorf("%s %s: exit %d, want the usage once on stdout and nothing on stderr\nstdout:\n%s\nstderr:\n%s", c.name, flag, code, out, errOut)
			}
		}
	}
	if _, _, code := runCLI(t, "frobnicate"); code != exitUsage {
		t.Errorf("unknown command: exit %d", code)
	}
}

// Every mistake of the person's — a flag, an argument, a value — exits 2,
// with the reason on stderr and nothing on stdout.
func TestUsageErrorsExit2(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"serve", "x"}, {"serve", "--bogus"}, {"check"}, {"check", "--config", cfg, "delete", "{"},
		{"check", "--config", cfg, "nosuchtool", "{}"}, {"zones", "x"}, {"zones", "--config", cfg, "--colour", "sometimes"},
		{"init"}, {"init", "/nonexistent/vault"}, {"audit"}, {"audit", "frob"}, {"audit", "tail", "--bogus"},
		{"audit", "stats", "--config", cfg, "--since", "yesterday"}, {"history", "--config", cfg, "a", "b"},
		{"diff", "--config", cfg}, {"undo", "--config", cfg}, {"admin"},
		{"undo", "--config", cfg, "--session"}, {"history", "--config", cfg, "--since"}, // a value flag last, with no value
	} {
		out, errOut, code := runCLI(t, args...)
		if code != exitUsage || (errOut == "" && !strings.Contains(out, "decision: error")) || (out != "" && args[0] != "check") {
			t.Errorf("vaultgate %q: exit %d, stdout %q, stderr %q; want 2 and a reason on stderr", args, code, out, errOut)
		}
	}
}

// TestUndoNothingMatched: a session or a time that matches no change in
// the history says so, and exits 0 (there was nothing to undo).
func TestUndoNothingMatched(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	for _, c := range []struct{ flag, value, want string }{
		{"--session", "no-such-session", "no change of session no-such-session"},
		{"--since", "1h", "no change since 1h"},
	} {
		out, errOut, code := runCLI(t, "undo", "--config", cfg, c.flag, c.value)
		if code != exitOK || !strings.Contains(out, "nothing to undo") || !strings.Contains(out, c.want) {
			t.Errorf("undo %s %s: exit %d, stdout %q, stderr %q; want 0 and %q", c.flag, c.value, code, out, errOut, c.want)
		}
	}
}

// check takes bash's command as the words after the tool name, options
// and all, and a tool without required arguments needs no "{}".
func TestCheckWords(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bash", "rm", "-rf", "notes"}, exitDeny, "delete   notes/**"},
		{[]string{"bash", "--", "rm", "-rf", "notes"}, exitDeny, "delete   notes/**"},
		{[]string{"bash", "rm -rf notes"}, exitDeny, "delete   notes/**"},
		{[]string{"bash", "ls", "-la", "notes"}, -1, "read     notes"},
		{[]string{"list"}, exitOK, "read     .  "},
		{[]string{"search", `{"query":"x"}`}, exitOK, "read     ."},
	} {
		out, errOut, code := runCLI(t, append([]string{"check", "--config", cfg}, c.args...)...)
		if (c.code >= 0 && code != c.code) || code == exitUsage || !strings.Contains(out, c.want) {
			t.Errorf("check %q: exit %d, want %d and %q\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}
}
