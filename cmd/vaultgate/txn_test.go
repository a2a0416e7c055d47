package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestWallBinaryTxn is the held-out check of bash as a transaction: the
// built binary, as root with run_as, driven by an MCP client; after each
// call the vault on disk is compared with what it was before, and only
// the paths the call may change have changed.
func TestWallBinaryTxn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("wall: run_as needs a root server (CI runs as root)")
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
	runAsUID, _ := strconv.Atoi(u.Uid)
	vault, cfg, auditPath := sampleVault(t)
	body, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(body, []byte("[bash]\nwall = \"required\"\ntimeout = \"20s\"\nrun_as = \""+name+"\"\n")...), 0o644)
	// The vault stays root's, open to the run_as user: a change keeps its
	// file's owner, a new file takes its folder's.
	for d := filepath.Dir(vault); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o711)
		}
	}
	filepath.Walk(vault, func(p string, fi os.FileInfo, _ error) error {
		if fi.IsDir() {
			return os.Chmod(p, 0o777)
		}
		return os.Chmod(p, 0o666)
	})
	c, err := client.NewStdioMCPClient(binary(t), []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin"}, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	txnSteps(t, c, vault, []txnStep{
		{"sed -i 's/e/E/g' notes/ideas.md", false, "exit code: 0", []string{"notes/ideas.md"}},
		{`/usr/bin/python3 -c "open('💬 чаты/2026-11-30.md','w').write('x')"`, true, `change "💬 чаты/2026-11-30.md": zone create`, nil},
		{"mv notes/ideas.md notes/ideas2.md", false, "exit code: 0", []string{"notes/ideas.md", "notes/ideas2.md"}},
		{"echo hi > notes/new.md && cp notes/new.md '💬 чаты/new.md'", false, "exit code: 0", []string{"notes/new.md", "💬 чаты/new.md"}},
		{"rm мета/план.md", true, `delete "мета/план.md": zone protected`, nil},
		{"grep -rn E .", false, "notes/ideas2.md", nil},
		// (a rename into мета/бобер fails with EXDEV: a write zone inside a protected one is a mount of its own)
		{`/usr/bin/python3 -c "import os; os.link('💬 чаты/2026-11-30.md', 'notes/l.md')"`, true, `hard-link "notes/l.md"`, nil},
		{`/usr/bin/python3 -c "import os; os.mkfifo('notes/f')"`, true, "FIFO", nil},
		{"git init -q notes/projects", true, "notes/projects/.git", nil},
		{"echo x > notes/late.md; sleep 30", true, "did not finish by itself", nil},
	})
	for _, name := range []string{"notes/ideas2.md", "notes/new.md"} {
		fi, err := os.Lstat(filepath.Join(vault, name))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || int(st.Uid) == runAsUID {
			t.Errorf("%s is owned by %d, want root's like its folder", name, st.Uid)
		}
	}
	c.Close()
	audit, err := os.ReadFile(auditPath)
	if err != nil || !strings.Contains(string(audit), `"real":[`) || !strings.Contains(string(audit), `"unpredicted":true`) {
		t.Errorf("the audit log holds no real effects: %v", err)
	}
}

// txnStep is one bash call of an end-to-end check, and what it must
// come to: whether it is an error, what its result says, and every path
// whose entry changes on disk.
type txnStep struct {
	command string
	isErr   bool
	says    string
	changed []string
}

// txnSteps makes each call in turn, comparing the vault on disk before and after.
func txnSteps(t *testing.T, c *client.Client, vault string, steps []txnStep) {
	t.Helper()
	for _, step := range steps {
		before := vaultTree(t, vault)
		args := map[string]any{"command": step.command}
		if strings.Contains(step.command, "sleep 30") {
			args["timeout"] = 1
		}
		text, isErr := callTool(t, c, "bash", args)
		got := changedPaths(before, vaultTree(t, vault))
		if isErr != step.isErr || !strings.Contains(text, step.says) || strings.Join(got, ",") != strings.Join(step.changed, ",") {
			t.Errorf("%s: error=%v, changed %v (want error=%v, changed %v)\n%s", step.command, isErr, got, step.isErr, step.changed, text)
		}
	}
}

// TestWallBinaryTxnUnprivileged is the same check for a server that is
// not root: the overlay is mounted in its user namespace, where a renamed
// file is matched by its content.
func TestWallBinaryTxnUnprivileged(t *testing.T) {
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
		t.Fatalf("wall: setpriv (util-linux) is needed: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "vaultgate-txn-userns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	vault := filepath.Join(dir, "vault")
	for name, body := range map[string]string{"notes/a.md": "bee\n", "notes/b.md": "b\na\n", "c/old.md": "old\n", "p/x.md": "keep\n", "h/s.md": "secret-text\n",
		"w/w.md": "w\n", "c/in/--target-directory=..": "evil\n", "c/in/old.md": "evil\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(vault, name)), 0o755)
		os.WriteFile(filepath.Join(vault, name), []byte(body), 0o644)
	}
	cfg := filepath.Join(dir, "c.toml")
	os.WriteFile(cfg, []byte("vault = \"vault\"\n[audit]\npath = \"state/audit.jsonl\"\n[zones]\nedit = [\".\"]\ncreate = [\"c\"]\nwrite = [\"w\"]\nprotected = [\"p\"]\nhidden = [\"h\"]\n[bash]\nwall = \"required\"\n"), 0o644)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, gid) })
	bin := binary(t)
	for d := filepath.Dir(bin); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o711)
		}
	}
	c, err := client.NewStdioMCPClient(setpriv, []string{"HOME=" + dir, "PATH=/usr/bin:/bin"},
		"--reuid="+u.Uid, "--regid="+u.Gid, "--clear-groups", "--", bin, "serve", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	txnSteps(t, c, vault, []txnStep{
		{"sed -i 's/bee/BEE/' notes/a.md", false, "exit code: 0", []string{"notes/a.md"}},
		{"sort -o notes/b.md notes/b.md", false, "exit code: 0", []string{"notes/b.md"}},
		{`/usr/bin/python3 -c "import os; os.rename('notes/b.md','notes/b2.md')"`, false, "exit code: 0", []string{"notes/b.md", "notes/b2.md"}},
		{"cat notes/a.md > notes/.a.tmp && echo more >> notes/.a.tmp && mv notes/.a.tmp notes/a.md", false, "exit code: 0", []string{"notes/a.md"}},
		{`/usr/bin/python3 -c "import os; os.rename('notes/b2.md','w/b.md')"`, true, "from zone edit to zone write", nil},
		{`/usr/bin/python3 -c "open('c/old.md','w').write('x')"`, true, `change "c/old.md": zone create`, nil},
		{`echo n > notes/n.md; /usr/bin/python3 -c "open('c/old.md','w').write('x')"`, true, `change "c/old.md": zone create`, nil},
		{"cd c/in && cp * ../../notes/", true, "", nil},
		{"git init -q notes/proj", true, "notes/proj/.git", nil},
		{"ln -s ../notes notes/r; echo x > notes/r/../c/old.md", true, "", nil},
		{`/usr/bin/python3 -c "import os; os.link('c/old.md','notes/l.md')"`, true, "hard-link", nil},
		{`/usr/bin/python3 -c "import os; os.mkfifo('notes/f')"`, true, "FIFO", nil},
		// No setuid, setgid, sticky or world-writable bit comes from bash;
		// a mode change is a modify, judged by the zones.
		{"chmod 3777 notes", true, `give "notes" mode 3777: it adds setgid, sticky and world-writable`, nil},
		{`echo n > notes/n.md; /usr/bin/python3 -c "import os; os.chmod('notes/a.md', 0o4755)"`, true, "no setuid, setgid, sticky or world-writable bit", nil},
		{"chmod o+w w/w.md", true, `give "w/w.md" mode 0646: it adds world-writable`, nil},
		{`/usr/bin/python3 -c "import os; os.chmod('c/old.md', 0o600)"`, true, `change "c/old.md": zone create`, nil},
		{"chmod 0600 notes/a.md && chmod 0700 w", false, "exit code: 0", []string{"notes/a.md", "w"}},
		{"grep -rni e .", false, "notes/a.md:1:BEE", nil},
		{"echo x > notes/late.md; sleep 30", true, "did not finish by itself", nil},
	})
	text, _ := callTool(t, c, "bash", map[string]any{"command": "grep -rn secret ."})
	if strings.Contains(text, "secret-text") {
		t.Errorf("the hidden zone was read: %s", text)
	}
}

// vaultTree is every path of the vault with its kind, mode, owner and content's hash.
func vaultTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String() + " " + strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid))
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:8])
		}
		out[rel] = v
		return nil
	})
	return out
}

func changedPaths(before, after map[string]string) []string {
	var out []string
	for p, v := range before {
		if after[p] != v {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
