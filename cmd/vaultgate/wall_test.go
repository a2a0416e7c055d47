package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestWallBinary drives the built binary's bash tool with the wall on, as
// the held-out checks do: a program of unknown effect (python3) runs, can't
// touch a protected file, and its delete in an edit zone (which it may do
// on the overlay) is refused when its changes are judged, so nothing of
// the call is applied; alone, its create in an edit zone is. The audit
// line records the layers that were up, and the helper that raised them:
// vaultgate-wall where it lies beside vaultgate, vaultgate itself otherwise.
func TestWallBinary(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("wall: the end-to-end wall test runs as root (CI runs it)")
	}
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("wall: %s is missing (apt-get install python3): the wall binds only system folders", python)
	}
	for _, tc := range []struct{ mode, bin, helper string }{
		{"required", binary(t), "helper:self"},
		{"best-effort", binary(t), "helper:self"},
		{"required", filepath.Join(bundle(t), "vaultgate"), "helper:vaultgate-wall"},
	} {
		mode := tc.mode
		t.Run(mode+"/"+tc.helper, func(t *testing.T) {
			vault, cfg, auditPath := sampleVault(t)
			body, _ := os.ReadFile(cfg)
			os.WriteFile(cfg, append(body, []byte("[bash]\nwall = \""+mode+"\"\ntimeout = \"20s\"\n")...), 0o644)
			c, err := client.NewStdioMCPClient(tc.bin, []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, "serve", "--config", cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			init.Params.ClientInfo = mcp.Implementation{Name: "wall-test", Version: "1"}
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatal(err)
			}
			protected, _ := os.ReadFile(filepath.Join(vault, "мета/план.md"))
			script := `import os
open("notes/from-python.md", "w").write("made inside the wall\n")
try:
    open("мета/план.md", "w").write("overwritten")
    print("PROTECTED-WRITTEN")
except OSError as e:
    print("protected refused:", e.strerror)
try:
    os.remove("notes/ideas.md")
    print("EDIT-DELETED")
except OSError as e:
    print("delete refused:", e.strerror)
`
			os.WriteFile(filepath.Join(vault, "notes/t.py"), []byte(script), 0o644)
			text, isErr := callTool(t, c, "bash", map[string]any{"command": python + " notes/t.py"})
			if !isErr || strings.Contains(text, "PROTECTED-WRITTEN") || !strings.Contains(text, "protected refused") ||
				!strings.Contains(text, "nothing in the vault was changed") || !strings.Contains(text, `delete "notes/ideas.md": zone edit`) {
				t.Fatalf("python under the wall: error=%v\n%s", isErr, text)
			}
			if _, err := os.Lstat(filepath.Join(vault, "notes/from-python.md")); err == nil {
				t.Errorf("a call with a refused change had its create applied")
			}
			text, isErr = callTool(t, c, "bash", map[string]any{"command": python + ` -c 'open("notes/from-python.md", "w").write("made inside the wall\n")'`})
			if isErr {
				t.Fatalf("python creating a note: %s", text)
			}
			if b, err := os.ReadFile(filepath.Join(vault, "notes/from-python.md")); err != nil || string(b) != "made inside the wall\n" {
				t.Errorf("create in an edit zone: %q %v", b, err)
			}
			if b, _ := os.ReadFile(filepath.Join(vault, "мета/план.md")); string(b) != string(protected) {
				t.Errorf("the protected file changed: %q", b)
			}
			if _, err := os.Stat(filepath.Join(vault, "notes/ideas.md")); err != nil {
				t.Errorf("a file in the edit zone was deleted: %v", err)
			}
			c.Close()
			wall := lastBashWall(t, auditPath)
			layers := strings.Join(wall, " ")
			for _, want := range []string{"pidns", "mountns", "netns", "landlock", "nonewprivs", "caps-dropped", "overlay", tc.helper} {
				if !strings.Contains(layers, want) {
					t.Errorf("audit wall %q lacks %s", layers, want)
				}
			}
		})
	}
}

// TestWallBinaryUnprivileged is the Claude Code deployment: the server runs
// as an ordinary user, so the wall comes from a user namespace. The built
// binary, started as an unprivileged user who owns the vault, runs python
// inside the wall, on an overlay of the vault in its user namespace: it
// can't change a protected file, its delete in an edit zone is refused
// when its changes are judged (and with it the rest of the call), and
// alone, its create in an edit zone is applied.
func TestWallBinaryUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("wall: starting the server as another, unprivileged user needs root (CI runs as root)")
	}
	const name = "vaultgate-test"
	if _, err := user.Lookup(name); err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("wall: useradd %s: %v %s", name, err, out)
		}
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("wall: setpriv (util-linux) is needed to start the server as %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "vaultgate-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	vault := filepath.Join(dir, "vault")
	for _, d := range []string{"notes", "p"} {
		os.MkdirAll(filepath.Join(vault, d), 0o755)
	}
	os.WriteFile(filepath.Join(vault, "p/x.md"), []byte("keep\n"), 0o644)
	os.WriteFile(filepath.Join(vault, "notes/keep.md"), []byte("keep\n"), 0o644)
	cfg := filepath.Join(dir, "c.toml")
	os.WriteFile(cfg, []byte("vault = \"vault\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nedit = [\".\"]\nprotected = [\"p\"]\n[bash]\nwall = \"required\"\n"), 0o644)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })
	// vaultgate alone re-executes itself as the helper; beside
	// vaultgate-wall it starts that, which the user must be able to run too.
	for _, tc := range []struct{ bin, helper string }{
		{binary(t), "helper:self"},
		{filepath.Join(bundle(t), "vaultgate"), "helper:vaultgate-wall"},
	} {
		t.Run(tc.helper, func(t *testing.T) {
			runUnprivileged(t, tc.bin, setpriv, u, uid, vault, cfg, dir)
			if wall := lastBashWall(t, filepath.Join(dir, "state", "audit.jsonl")); !slices.Contains(wall, tc.helper) {
				t.Errorf("audit wall %v lacks %s", wall, tc.helper)
			}
		})
	}
}

// lastBashWall is the wall field of the audit log's last bash line.
func lastBashWall(t *testing.T, auditPath string) []string {
	t.Helper()
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wall []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Tool string
			Wall []string
		}
		json.Unmarshal(sc.Bytes(), &r)
		if r.Tool == "bash" {
			wall = r.Wall
		}
	}
	return wall
}

func runUnprivileged(t *testing.T, bin, setpriv string, u *user.User, uid int, vault, cfg, dir string) {
	os.Remove(filepath.Join(vault, "notes/new.md")) // what the subtest before made
	for d := filepath.Dir(bin); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o711) // the user must reach the binary
		}
	}
	c, err := client.NewStdioMCPClient(setpriv, []string{"HOME=" + dir, "PATH=/usr/bin:/bin"},
		"--reuid="+u.Uid, "--regid="+u.Gid, "--clear-groups", "--", bin, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	py := `/usr/bin/python3 -c '
import os
open("notes/new.md", "w").write("made\n")
for what, f in (("PROTECTED-WRITTEN", lambda: open("p/x.md", "w").write("gone")), ("EDIT-DELETED", lambda: os.remove("notes/keep.md"))):
    try:
        f(); print(what)
    except OSError as e:
        print("refused:", e.strerror)
'`
	text, isErr := callTool(t, c, "bash", map[string]any{"command": py})
	if !isErr || strings.Contains(text, "PROTECTED-WRITTEN") || strings.Count(text, "refused:") != 1 ||
		!strings.Contains(text, `delete "notes/keep.md": zone edit`) || !strings.Contains(text, "nothing in the vault was changed") {
		t.Fatalf("python as an unprivileged server's agent: error=%v\n%s", isErr, text)
	}
	if _, err := os.Lstat(filepath.Join(vault, "notes/new.md")); err == nil {
		t.Errorf("a call with a refused change had its create applied")
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "notes/keep.md")); string(b) != "keep\n" {
		t.Errorf("the edit zone's file: %q", b)
	}
	text, isErr = callTool(t, c, "bash", map[string]any{"command": `/usr/bin/python3 -c 'open("notes/new.md", "w").write("made\n")'`})
	if isErr {
		t.Fatalf("python creating a note: %s", text)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "notes/new.md")); string(b) != "made\n" {
		t.Errorf("create in the edit zone: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(vault, "p/x.md")); string(b) != "keep\n" {
		t.Errorf("the protected file changed: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(vault, "notes/new.md")); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != uid {
			t.Errorf("a file made inside the user namespace is owned by %d on the host, want %d", st.Uid, uid)
		}
	}
}
