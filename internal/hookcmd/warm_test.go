//go:build linux

package hookcmd

import (
	"bytes"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/internal/judgesock"
	"github.com/vaultgate/vaultgate/internal/vaulttest"
	"github.com/vaultgate/vaultgate/server"
)

const draftsRule = `
[[rules.deny]]
name   = "drafts_are_mine"
when   = 'effect.path.startsWith("drafts/")'
reason = "drafts/ is the person's own"
`

// ruledVault is vault with one [[rules.deny]] rule in its config.
func ruledVault(t *testing.T) (dir, cfgPath string) {
	t.Helper()
	dir, cfgPath = vault(t)
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(draftsRule)
	f.Close()
	return dir, cfgPath
}

// startJudge opens the config's gate as serve does and starts its warm judge.
func startJudge(t *testing.T, cfgPath string) *WarmJudge {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	g, err := server.OpenServer(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	w := ListenWarm(g, cfg, log.New(io.Discard, "", 0))
	t.Cleanup(w.Close)
	return w
}

type hookCase struct {
	name, stdin, want string
}

func hookCases(dir string) []hookCase {
	return []hookCase{
		{"read allowed", input(dir, "Read", map[string]any{"file_path": filepath.Join(dir, "Welcome.md")}), `"permissionDecision":"allow"`},
		{"rule denies", input(dir, "Write", map[string]any{"file_path": filepath.Join(dir, "drafts/x.md"), "content": "x"}), "drafts/ is the person's own"},
		{"zone denies", input(dir, "Write", map[string]any{"file_path": filepath.Join(dir, "мета/x.md"), "content": "x"}), `"permissionDecision":"deny"`},
	}
}

func runHook(t *testing.T, cfgPath, stdin string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(Flags{Config: cfgPath, Agent: "default"}, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The hook has a server's warm judge answer, and the judge answers as the
// hook does cold; without a judge the hook judges the call itself, the
// config's rules and all (OpenCall compiles them).
func TestWarmJudge(t *testing.T) {
	dir, cfgPath := ruledVault(t)
	// Without a judge, the hook opens the vault and judges by itself.
	if code, out, errOut := runHook(t, cfgPath, hookCases(dir)[1].stdin); code != ExitAnswered || !strings.Contains(out, hookCases(dir)[1].want) {
		t.Fatalf("no judge: exit %d, out %q, err %q", code, out, errOut)
	}

	w := startJudge(t, cfgPath)
	for i, c := range hookCases(dir) {
		code, out, errOut := runHook(t, cfgPath, c.stdin)
		if code != ExitAnswered || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d, out %q, err %q; want %q", c.name, code, out, errOut, c.want)
		}
		if w.Answered() != i+1 {
			t.Errorf("%s: the judge answered %d calls, want %d", c.name, w.Answered(), i+1)
		}
	}

	// The same calls judged cold, by the hook itself, give the same answers.
	w.Close()
	for _, c := range hookCases(dir) {
		code, out, _ := runHook(t, cfgPath, c.stdin)
		if code != ExitAnswered || !strings.Contains(out, c.want) {
			t.Errorf("cold %s: exit %d, out %q; want %q", c.name, code, out, c.want)
		}
	}
	if w.Answered() != 3 {
		t.Errorf("the cold hook asked the judge: %d answers", w.Answered())
	}

	// An edited config is another config: the judge that loaded the old
	// one is not asked; the hook judges by the edited config itself.
	w = startJudge(t, cfgPath)
	f, _ := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("\n# edited\n")
	f.Close()
	if code, out, errOut := runHook(t, cfgPath, hookCases(dir)[1].stdin); code != ExitAnswered || !strings.Contains(out, hookCases(dir)[1].want) || w.Answered() != 0 {
		t.Errorf("edited config: exit %d, out %q, err %q, %d answers", code, out, errOut, w.Answered())
	}
}

// A judge that closes its socket leaves nothing behind; one that a second
// server would duplicate stays the one that answers.
func TestWarmJudgeSockets(t *testing.T) {
	dir, cfgPath := ruledVault(t)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sock := warmSocket(cfg, "default")
	if sock == "" {
		t.Fatal("no socket name")
	}

	// A socket file left by a server that died is taken over.
	os.MkdirAll(filepath.Dir(sock), 0o700)
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	dead.SetUnlinkOnClose(false)
	dead.Close()

	first := startJudge(t, cfgPath)
	if len(first.socks) != 1 {
		t.Fatalf("the judge did not take the dead socket's place: %v", first)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v %v", fi, err)
	}
	if fi, err := os.Stat(filepath.Dir(sock)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket folder mode: %v %v", fi, err)
	}
	second := startJudge(t, cfgPath)
	if len(second.socks) != 0 {
		t.Fatalf("a second server took a live judge's socket")
	}
	second.Close()
	if code, out, _ := runHook(t, cfgPath, hookCases(dir)[1].stdin); code != ExitAnswered || !strings.Contains(out, "drafts/") || first.Answered() != 1 {
		t.Fatalf("after the second closed: exit %d, %q, %d answers", code, out, first.Answered())
	}
	first.Close()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket is still there after Close: %v", err)
	}
}

// Once connected, a hook never falls back: a judge that hangs up, or
// answers nonsense, is a deny.
func TestWarmJudgeBroken(t *testing.T) {
	dir, cfgPath := ruledVault(t)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	sock := warmSocket(cfg, "default")
	os.MkdirAll(filepath.Dir(sock), 0o700)
	for _, reply := range []string{"", "not json", `{"code":0,"stdout":"e3`, `{"code":7}`} {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.Copy(io.Discard, c)
			io.WriteString(c, reply)
			c.Close()
		}()
		code, out, errOut := runHook(t, cfgPath, hookCases(dir)[0].stdin)
		ln.Close()
		if code != ExitDenied || out != "" || !strings.Contains(errOut, "the judge") {
			t.Errorf("judge replying %q: exit %d, out %q, err %q; want a deny naming the judge", reply, code, out, errOut)
		}
	}
}

// An agent without rules is answered by the judge too: it saves the hook
// opening the vault, the audit log and the history.
func TestWarmJudgeWithoutRules(t *testing.T) {
	dir, cfgPath := vault(t)
	w := startJudge(t, cfgPath)
	for i, c := range []hookCase{hookCases(dir)[0], hookCases(dir)[2]} {
		code, out, errOut := runHook(t, cfgPath, c.stdin)
		if code != ExitAnswered || !strings.Contains(out, c.want) || w.Answered() != i+1 {
			t.Errorf("%s: exit %d, out %q, err %q, %d answers; want %q from the judge", c.name, code, out, errOut, w.Answered(), c.want)
		}
	}
}

func TestMain(m *testing.M) {
	remove := vaulttest.RuntimeDir()
	code := m.Run()
	remove()
	os.Exit(code)
}

// The judge reads Claude Code's settings where the asking hook's
// environment says they are, not where its own does: two sessions of
// one config in two projects share a judge.
func TestWarmJudgeReadsTheHooksEnv(t *testing.T) {
	dir, cfgPath := vault(t)
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[bash]\nwall = \"required\"\n")
	f.Close()
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, ".claude"), 0o755)
	os.WriteFile(filepath.Join(project, ".claude", "settings.json"), []byte(`{"sandbox":{"enabled":true}}`), 0o644)
	t.Setenv("CLAUDE_PROJECT_DIR", "") // the judge's own says nothing
	startJudge(t, cfgPath)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	bash := input(dir, "Bash", map[string]any{"command": "ls"})
	for _, c := range []struct {
		env     map[string]string
		sandbox bool
	}{
		{map[string]string{"CLAUDE_PROJECT_DIR": project, "HOME": t.TempDir()}, true},
		{map[string]string{"HOME": t.TempDir()}, false},
	} {
		conn := dialWarm(cfg, "default")
		if conn == nil {
			t.Fatal("no judge")
		}
		req := judgesock.Request{Config: cfg.File, Digest: cfg.Digest, Agent: "default", Exec: "/usr/bin/true", Env: c.env}
		var out, errOut bytes.Buffer
		code, err := judgesock.Ask(conn, req, strings.NewReader(bash), &out, &errOut)
		if err != nil || code != ExitAnswered {
			t.Fatalf("%v: %d %v %s", c.env, code, err, errOut.String())
		}
		if got := strings.Contains(out.String(), "Claude Code's own sandbox is on"); got != c.sandbox {
			t.Errorf("%v: sandbox seen %v, want %v: %s", c.env, got, c.sandbox, out.String())
		}
	}
}

// ~ in a path of Claude Code's tools is Claude Code's home: the HOME of
// the hook process Claude Code started, judging cold, and the asking
// hook's HOME at a judge, whatever the judge's own is.
func TestHookHomeIsClaudeCodes(t *testing.T) {
	dir, cfgPath := vault(t)
	elsewhere := t.TempDir()
	write := func(p string) string {
		return input(dir, "Write", map[string]any{"file_path": p, "content": "x"})
	}
	t.Setenv("HOME", dir)
	for stdin, want := range map[string]string{
		write("~/notes/x.md"): `"permissionDecision":"allow"`,
		write("~/мета/x.md"):  "zone protected",
	} {
		if code, out, errOut := runHook(t, cfgPath, stdin); code != ExitAnswered || !strings.Contains(out, want) {
			t.Errorf("cold, HOME the vault: %s: exit %d, %s %s; want %q", stdin, code, out, errOut, want)
		}
	}
	t.Setenv("HOME", elsewhere) // the judge's own
	startJudge(t, cfgPath)
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env   map[string]string
		stdin string
		want  string
	}{
		{map[string]string{"HOME": dir}, write("~/notes/x.md"), `"permissionDecision":"allow"`},
		{map[string]string{"HOME": dir}, write("~/мета/x.md"), "zone protected"},
		{map[string]string{"HOME": elsewhere}, write("~/notes/x.md"), "outside the vault"},
		{map[string]string{}, write("~/notes/x.md"), "starts with ~"},
	} {
		conn := dialWarm(cfg, "default")
		if conn == nil {
			t.Fatal("no judge")
		}
		req := judgesock.Request{Config: cfg.File, Digest: cfg.Digest, Agent: "default", Exec: "/usr/bin/true", Env: c.env}
		var out, errOut bytes.Buffer
		code, err := judgesock.Ask(conn, req, strings.NewReader(c.stdin), &out, &errOut)
		if err != nil || code != ExitAnswered || !strings.Contains(out.String(), c.want) {
			t.Errorf("judge, env %v: %s: exit %d %v, %s %s; want %q", c.env, c.stdin, code, err, out.String(), errOut.String(), c.want)
		}
	}
}
