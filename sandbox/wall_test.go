package sandbox

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

// The wall's tests run real programs against real files, and never ask the
// analysis: what they show is what the kernel enforces. They skip only
// where the kernel lacks a feature, with "wall: <feature> unavailable",
// and .ci/run fails on any such skip.

// wallLayers probes once and skips the test if a required layer is absent.
func requireWall(t *testing.T) Layers {
	t.Helper()
	L, err := ProbeWall("").For(false, false, true)
	if err != nil {
		t.Skipf("wall: %v unavailable: %v", "required layer", err)
	}
	return L
}

// testUser is the run_as user of the tests, created when missing.
const testUser = "vaultgate-test"

var userOnce sync.Once

func requireTestUser(t *testing.T) *User {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("wall: run_as unavailable: the tests do not run as root")
	}
	userOnce.Do(func() {
		if _, err := user.Lookup(testUser); err != nil {
			exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", testUser).Run()
		}
	})
	u, err := lookupUser(testUser)
	if err != nil {
		t.Fatalf("creating the test user %s: %v", testUser, err)
	}
	return u
}

// zoneVault is a vault with one folder per zone, each holding f.txt (and
// f2, f3 to delete and rename), and the zone table for it. The root is
// in no zone when noRoot, else edit.
type zoneVault struct {
	dir  string
	tab  *zones.Table
	cfg  string // a config file inside the vault
	logf string // an audit log inside the vault
}

var zoneDirs = map[string]zones.Mode{
	"w": zones.Write, "e": zones.Edit, "c": zones.Create, "p": zones.Protected, "h": zones.Hidden,
}

const hiddenMark = "HIDDEN-CONTENT-7f3a"

func newZoneVault(t *testing.T, rootZone zones.Mode, owner *User) *zoneVault {
	t.Helper()
	dir := t.TempDir()
	v := &zoneVault{dir: dir, cfg: filepath.Join(dir, "vault.toml"), logf: filepath.Join(dir, "state", "audit.jsonl")}
	var entries []zones.Entry
	if rootZone != zones.NoZone {
		entries = append(entries, zones.Entry{Path: ".", Mode: rootZone})
	}
	for d, m := range zoneDirs {
		entries = append(entries, zones.Entry{Path: d, Mode: m})
	}
	for _, d := range []string{"w", "e", "c", "p", "h", "n", "state", "p/.git"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for d := range zoneDirs {
		body := "content of " + d + "\n"
		if d == "h" {
			body = hiddenMark + "\n"
		}
		for _, f := range []string{"f.txt", "f2.txt", "f3.txt"} {
			must(t, os.WriteFile(filepath.Join(dir, d, f), []byte(body), 0o644))
		}
	}
	for _, f := range []string{"f.txt", "f2.txt", "f3.txt"} {
		must(t, os.WriteFile(filepath.Join(dir, "n", f), []byte(hiddenMark+" no zone\n"), 0o644))
	}
	must(t, os.WriteFile(filepath.Join(dir, "p/.git/config"), []byte("[core]\n"), 0o644))
	must(t, os.WriteFile(v.cfg, []byte("# "+hiddenMark+" config\n"), 0o600))
	must(t, os.WriteFile(v.logf, []byte(hiddenMark+" audit\n"), 0o600))
	tab, err := zones.New(dir, entries, zones.Options{Protect: []string{v.cfg}, Hide: []string{v.logf, filepath.Dir(v.logf)}})
	must(t, err)
	v.tab = tab
	if owner != nil {
		chownTree(t, dir, owner)
	}
	return v
}

func chownTree(t *testing.T, dir string, u *User) {
	t.Helper()
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, u.UID, u.GID)
	}))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// walled runs command under the required wall for the zone table, as a
// server does: with its helper started ahead (after the first call, most
// calls of these tests take a helper another call started).
func walled(t *testing.T, tab *zones.Table, dir, command string, mod ...func(*Request)) Result {
	t.Helper()
	L := requireWall(t)
	r := Request{
		Command: command, Dir: dir, Env: []string{"PATH", "LANG"}, Environ: os.Environ(),
		Timeout: 30 * time.Second,
		Wall:    &WallConfig{Zones: tab, Required: true, Layers: L},
		Ahead:   true,
	}
	for _, m := range mod {
		m(&r)
	}
	if r.Wall.RunAs != "" {
		r.Wall.Layers.RunAs = true
	}
	// Errorf, not Fatalf: the corpus calls this from worker goroutines,
	// where FailNow must not be called.
	res, err := Run(context.Background(), r)
	if err != nil {
		t.Errorf("Run(%q): %v (stderr %q)", command, err, res.Stderr)
	}
	if !strings.Contains(strings.Join(res.Isolation, " "), "mountns") {
		t.Errorf("Run(%q): isolation %v: the wall was not up", command, res.Isolation)
	}
	return res
}

// snapshot is every file under the given roots: type, mode, owner, size,
// content hash, link target.
func snapshot(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				m[p] = "error " + err.Error()
				return nil
			}
			fi, err := os.Lstat(p)
			if err != nil {
				m[p] = "gone"
				return nil
			}
			st := fi.Sys().(*syscall.Stat_t)
			s := fmt.Sprintf("%v %o %d:%d %d mtime=%d", fi.Mode().Type(), fi.Mode().Perm(), st.Uid, st.Gid, fi.Size(), fi.ModTime().UnixNano())
			switch {
			case fi.Mode().IsRegular():
				b, _ := os.ReadFile(p)
				h := sha256.Sum256(b)
				s += " " + hex.EncodeToString(h[:8])
			case fi.Mode()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				s += " -> " + l
			}
			m[p] = s
			return nil
		})
	}
	return m
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, b := range before {
		if a := after[p]; a != b {
			t.Errorf("%s: %s changed: %q → %q", what, p, b, a)
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared: %q", what, p, a)
		}
	}
}

// The programs of the zone matrix. Each prints "ZONE OP ok|fail" for
// every op on every zone folder given as arguments.
var programs = map[string]string{
	"bash": `for z in "$@"; do
  r() { if "$@" >/dev/null 2>&1; then echo "$z $op ok"; else echo "$z $op fail"; fi; }
  op=read;   r eval 'while IFS= read -r l; do :; done < "$z/f.txt"; [[ -n $l || -s $z/f.txt ]]'
  op=list;   if ls "$z" 2>/dev/null | grep -qx f.txt; then echo "$z $op ok"; else echo "$z $op fail"; fi
  op=create; r eval 'echo new > "$z/new-bash.txt"'
  op=modify; r eval 'echo more >> "$z/f.txt"'
  op=chmod;  r chmod 600 "$z/f.txt"
  op=touch;  r touch -d 2001-01-01 "$z/f.txt"
  op=delete; r rm "$z/f2.txt"
  op=rename; r mv "$z/f3.txt" "$z/f3-moved.txt"
done`,
	"python3": `import os, sys
for z in sys.argv[1:]:
    def r(op, f):
        try:
            f(); print(z, op, "ok")
        except Exception:
            print(z, op, "fail")
    def read():
        with open(z + "/f.txt") as fh: assert fh.read()
    def lst():
        assert "f.txt" in os.listdir(z)
    r("read", read)
    r("list", lst)
    r("create", lambda: open(z + "/new-python3.txt", "x").write("new"))
    r("modify", lambda: open(z + "/f.txt", "a").write("more"))
    r("chmod", lambda: os.chmod(z + "/f.txt", 0o600))
    r("touch", lambda: os.utime(z + "/f.txt", (1, 1)))
    r("delete", lambda: os.unlink(z + "/f2.txt"))
    r("rename", lambda: os.rename(z + "/f3.txt", z + "/f3-moved.txt"))
`,
	"perl": `for my $z (@ARGV) {
  my $r = sub { my ($op, $ok) = @_; print "$z $op ", ($ok ? "ok" : "fail"), "\n" };
  my $fh; my $ok = open($fh, "<", "$z/f.txt"); $r->("read", $ok && length(scalar <$fh>));
  my $dh; $ok = opendir($dh, $z); $r->("list", $ok && (grep { $_ eq "f.txt" } readdir($dh)));
  $r->("create", open(my $c, ">", "$z/new-perl.txt") && print($c "new") && close($c));
  $r->("modify", open(my $m, ">>", "$z/f.txt") && print($m "more") && close($m));
  $r->("chmod", chmod(0600, "$z/f.txt") == 1);
  $r->("touch", utime(1, 1, "$z/f.txt") == 1);
  $r->("delete", unlink("$z/f2.txt") == 1);
  $r->("rename", rename("$z/f3.txt", "$z/f3-moved.txt"));
}`,
	"dd": `for z in "$@"; do
  r() { if "$@" >/dev/null 2>&1; then echo "$z $op ok"; else echo "$z $op fail"; fi; }
  op=read;   r eval 'dd if="$z/f.txt" status=none | grep -q .'
  op=create; r dd if=/dev/zero of="$z/new-dd.txt" bs=1 count=4 status=none
  op=modify; r dd if=/dev/zero of="$z/f.txt" bs=1 count=4 oflag=append conv=notrunc status=none
done`,
	"find": `for z in "$@"; do
  r() { out=$("$@" 2>&1); if [ $? -eq 0 ] && ! grep -q . <<<"$out"; then echo "$z $op ok"; else echo "$z $op fail"; fi; }
  op=read;   if find "$z" -name f.txt -exec cat {} \; 2>/dev/null | grep -q .; then echo "$z $op ok"; else echo "$z $op fail"; fi
  op=list;   if find "$z" 2>/dev/null | grep -q '/f.txt$'; then echo "$z $op ok"; else echo "$z $op fail"; fi
  op=modify; r find "$z" -name f.txt -exec sh -c 'echo more >> "$1"' _ {} \;
  op=chmod;  r find "$z" -name f.txt -exec chmod 600 {} \;
  op=touch;  r find "$z" -name f.txt -exec touch -d 2001-01-01 {} \;
  op=delete; r find "$z" -name f2.txt -exec rm {} \;
  op=rename; r find "$z" -name f3.txt -exec mv {} "$z/f3-moved.txt" \;
done`,
}

// allowedByWall is what the kernel lets a program do in each zone, per the
// table of the wall in docs/bash.md. A create zone is an edit zone to the kernel.
func allowedByWall(m zones.Mode, op string) bool {
	switch m {
	case zones.Write:
		return true
	case zones.Edit, zones.Create:
		return op != "delete" && op != "rename"
	case zones.Protected:
		return op == "read" || op == "list"
	}
	return false
}

func TestWallZoneMatrix(t *testing.T) {
	requireWall(t)
	for _, asUser := range []bool{false, true} {
		for name, script := range programs {
			label := name
			if asUser {
				label += "/run_as"
			}
			t.Run(label, func(t *testing.T) {
				var u *User
				if asUser {
					u = requireTestUser(t)
				}
				v := newZoneVault(t, zones.NoZone, u)
				protected := snapshot(t, filepath.Join(v.dir, "p"))
				hidden := snapshot(t, filepath.Join(v.dir, "h"), filepath.Join(v.dir, "n"))
				cmd := ""
				switch name {
				case "python3":
					cmd = "python3 -c " + shellQuote(script) + " w e c p h n"
				case "perl":
					cmd = "perl -e " + shellQuote(script) + " w e c p h n"
				default:
					cmd = "set -- w e c p h n\n" + script
				}
				res := walled(t, v.tab, v.dir, cmd, func(r *Request) {
					if u != nil {
						r.Wall.RunAs = u.Name
					}
				})
				if strings.Contains(res.Stdout+res.Stderr, hiddenMark) {
					t.Errorf("hidden content shown: %s%s", res.Stdout, res.Stderr)
				}
				got := map[string]bool{}
				sc := bufio.NewScanner(strings.NewReader(res.Stdout))
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					if len(f) == 3 {
						got[f[0]+" "+f[1]] = f[2] == "ok"
					}
				}
				if len(got) == 0 {
					t.Fatalf("no results: stdout %q stderr %q", res.Stdout, res.Stderr)
				}
				modes := map[string]zones.Mode{"n": zones.NoZone}
				for d, m := range zoneDirs {
					modes[d] = m
				}
				for k, ok := range got {
					z, op, _ := strings.Cut(k, " ")
					if want := allowedByWall(modes[z], op); ok != want {
						t.Errorf("%s %s in zone %s (%s): ok=%v, want %v", name, op, z, modes[z], ok, want)
					}
				}
				sameSnapshot(t, "protected", protected, snapshot(t, filepath.Join(v.dir, "p")))
				sameSnapshot(t, "hidden", hidden, snapshot(t, filepath.Join(v.dir, "h"), filepath.Join(v.dir, "n")))
				for _, z := range []string{"e", "c", "p"} {
					for _, f := range []string{"f2.txt", "f3.txt"} {
						if !exists(filepath.Join(v.dir, z, f)) {
							t.Errorf("%s/%s was deleted or renamed outside a write zone", z, f)
						}
					}
				}
			})
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestWallRunsAsUser: with run_as the command runs as that user, with no
// supplementary groups, and the vault it owns is still walled.
func TestWallRunsAsUser(t *testing.T) {
	u := requireTestUser(t)
	v := newZoneVault(t, zones.Edit, u)
	res := walled(t, v.tab, v.dir, `id -u; id -g; id -G; echo ok > made.txt && stat -c %u made.txt; grep Cap /proc/self/status`, func(r *Request) { r.Wall.RunAs = u.Name })
	lines := strings.Split(res.Stdout, "\n")
	want := strconv.Itoa(u.UID)
	if len(lines) < 4 || lines[0] != want || lines[1] != strconv.Itoa(u.GID) || lines[2] != strconv.Itoa(u.GID) || lines[3] != want {
		t.Errorf("ids %q (stderr %q), want uid %d gid %d and no other group", res.Stdout, res.Stderr, u.UID, u.GID)
	}
	if !strings.Contains(strings.Join(res.Isolation, " "), "uid:"+u.Name) {
		t.Errorf("isolation %v lacks uid:%s", res.Isolation, u.Name)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "Cap") && !strings.HasSuffix(l, "0000000000000000") {
			t.Errorf("capability left: %s", l)
		}
	}
}

// TestWallCapsDroppedAsRoot: without run_as, root in the wall holds no
// capability at all, in any set, and no supplementary group.
func TestWallCapsDroppedAsRoot(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	res := walled(t, v.tab, v.dir, `grep -E '^(Cap|NoNewPrivs|Seccomp:|Groups:)' /proc/self/status`)
	if !strings.Contains(res.Stdout, "Groups:") {
		t.Fatalf("no status read: %q %q", res.Stdout, res.Stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Groups:" {
			t.Errorf("supplementary groups left: %s", l)
		}
		if strings.HasPrefix(l, "Cap") && !strings.HasSuffix(l, "0000000000000000") {
			t.Errorf("capability left: %s", l)
		}
		if strings.HasPrefix(l, "NoNewPrivs") && !strings.HasSuffix(l, "1") {
			t.Errorf("no_new_privs not set: %s", l)
		}
	}
}

// TestWallHidesServer: neither the server's environment nor its process
// can be seen from inside; only the call's own processes are in /proc.
func TestWallHidesServer(t *testing.T) {
	const secret = "server-secret-5d1c"
	t.Setenv("VG_WALL_TEST_DB", secret)
	v := newZoneVault(t, zones.Edit, nil)
	res := walled(t, v.tab, v.dir, `cat /proc/*/environ | tr '\0' '\n'; ps e -A ww; cat /proc/*/cmdline | tr '\0' ' '; ls /proc`, func(r *Request) {
		r.Environ = append(r.Environ, "VG_WALL_TEST_DB="+secret)
	})
	exe := filepath.Base(os.Args[0])
	for _, bad := range []string{secret, exe, HelperArg} {
		if strings.Contains(res.Stdout, bad) || strings.Contains(res.Stderr, bad) {
			t.Errorf("visible inside the wall: %q\n%s", bad, res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, "PID") {
		t.Errorf("ps did not run: %q %q", res.Stdout, res.Stderr)
	}
}

// TestWallControlPaths: the config, the audit log and the home folder are
// not readable, wherever they lie; the server's own home is empty.
func TestWallControlPaths(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	home, err := os.UserHomeDir()
	must(t, err)
	homeFile := filepath.Join(home, ".vaultgate-wall-test-"+strconv.Itoa(os.Getpid()))
	must(t, os.WriteFile(homeFile, []byte(hiddenMark), 0o600))
	t.Cleanup(func() { os.Remove(homeFile) })
	res := walled(t, v.tab, v.dir, fmt.Sprintf(`cat %q %q %q; ls -A %q; ls -A state; cat /etc/shadow; echo x > %q; echo done`,
		v.cfg, v.logf, homeFile, home, v.cfg))
	if strings.Contains(res.Stdout+res.Stderr, hiddenMark) {
		t.Errorf("a control path was readable:\n%s%s", res.Stdout, res.Stderr)
	}
	if got := strings.TrimSpace(res.Stdout); got != "done" {
		t.Errorf("stdout %q: want only done (home and state empty)", got)
	}
	if b, _ := os.ReadFile(v.cfg); !strings.Contains(string(b), hiddenMark) {
		t.Errorf("config changed: %q", b)
	}
}

// TestWallControlNamesCantBeCreated: an exec'd program can't create
// .claude/settings.json (or .git, .vscode, .mcp.json) at the vault root or
// at a zone root, and nothing of the placeholders is left after the call.
func TestWallControlNamesCantBeCreated(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	script := `import os
for d in [".", "w", "e", "c"]:
    for name in [".claude/settings.json", ".git/config", ".vscode/tasks.json", ".mcp.json"]:
        p = os.path.join(d, name)
        try:
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "w").write("{}")
            print("CREATED", p)
        except OSError:
            pass
print("new.md", open("new.md", "w").write("ok"))`
	res := walled(t, v.tab, v.dir, "python3 -c "+shellQuote(script))
	if strings.Contains(res.Stdout, "CREATED") || !strings.Contains(res.Stdout, "new.md 2") {
		t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	for _, d := range []string{".", "w", "e", "c"} {
		for _, n := range zones.ControlNames {
			if exists(filepath.Join(v.dir, d, n)) {
				t.Errorf("%s/%s exists after the call", d, n)
			}
		}
	}
	if !exists(filepath.Join(v.dir, "new.md")) {
		t.Error("creating a note at the edit root failed")
	}
	if !exists(filepath.Join(v.dir, "p/.git/config")) {
		t.Error("an existing .git was removed")
	}
}

// TestWallInheritedDescriptor: a descriptor the server holds on the vault
// root without close-on-exec does not reach the command.
func TestWallInheritedDescriptor(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	fd, err := syscall.Open(v.dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0) // no O_CLOEXEC, on purpose
	must(t, err)
	defer syscall.Close(fd)
	res := walled(t, v.tab, v.dir, fmt.Sprintf(`ls /proc/$$/fd; cat /proc/$$/fd/%d/h/f.txt /proc/self/fd/%d/h/f.txt; ls /proc/self/fd/%d/`, fd, fd, fd))
	if strings.Contains(res.Stdout, hiddenMark) {
		t.Errorf("hidden file read through an inherited descriptor: %s", res.Stdout)
	}
	for _, f := range strings.Fields(strings.Split(res.Stdout, "\n\n")[0]) {
		if n, _ := strconv.Atoi(f); n > 2 && n != 255 && n == fd {
			t.Errorf("descriptor %d inherited: %s", fd, res.Stdout)
		}
	}
}

// TestWallNoNetwork: no loopback connection to the server's host, and no
// UNIX socket outside the vault.
func TestWallNoNetwork(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	sock := filepath.Join(t.TempDir(), "s.sock")
	ul, err := net.Listen("unix", sock)
	must(t, err)
	defer ul.Close()
	var accepted sync.WaitGroup
	var got int
	var mu sync.Mutex
	for _, l := range []net.Listener{ln, ul} {
		accepted.Go(func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				got++
				mu.Unlock()
				c.Close()
			}
		})
	}
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf(`import socket
for fam, addr in [(socket.AF_INET, ("127.0.0.1", %d)), (socket.AF_UNIX, %q)]:
    s = socket.socket(fam)
    s.settimeout(2)
    try:
        s.connect(addr); print("CONNECTED", addr)
    except OSError as e:
        print("refused", e)
`, port, sock)
	res := walled(t, v.tab, v.dir, fmt.Sprintf("python3 -c %s; (exec 3<>/dev/tcp/127.0.0.1/%d) && echo CONNECTED bash", shellQuote(script), port))
	if strings.Contains(res.Stdout, "CONNECTED") {
		t.Errorf("a connection got out: %s", res.Stdout)
	}
	ln.Close()
	ul.Close()
	accepted.Wait()
	if got > 0 {
		t.Errorf("%d connections accepted", got)
	}
}

// TestWallForkBomb: a fork bomb stops at the call's process limit, the
// server can still start processes meanwhile, and the next call works.
func TestWallForkBomb(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	done := make(chan struct{})
	var hostErr error
	go func() {
		defer close(done)
		time.Sleep(1500 * time.Millisecond)
		hostErr = exec.Command("true").Run() // the user's other processes
	}()
	res := walled(t, v.tab, v.dir, `bomb() { bomb | bomb & }; bomb; sleep 3`, func(r *Request) { r.Timeout = 5 * time.Second })
	<-done
	if hostErr != nil {
		t.Errorf("the server could not start a process during the bomb: %v", hostErr)
	}
	if res.Duration > 15*time.Second {
		t.Errorf("the bomb held the call for %v", res.Duration)
	}
	next := walled(t, v.tab, v.dir, "echo next")
	if next.Stdout != "next\n" {
		t.Errorf("next call: %q %q", next.Stdout, next.Stderr)
	}
}

// TestWallTimeoutAndBackground: a timeout ends grandchildren in their own
// process group or session, and a background process does not outlive
// the call that started it.
func TestWallTimeoutAndBackground(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	marker := fmt.Sprintf("vgwall-%d", time.Now().UnixNano())
	gc := `bash -c 'touch w/$0.started; sleep 2; touch w/$0.survived' ` + marker
	cases := []struct {
		name, cmd string
		timeout   time.Duration
	}{
		{"setsid timeout", "setsid " + gc + " & set -m; " + gc + "-g & sleep 300", 1500 * time.Millisecond},
		{"background exit", "(setsid " + gc + "-b >/dev/null 2>&1 &); sleep 0.5", 20 * time.Second},
	}
	for _, c := range cases {
		res := walled(t, v.tab, v.dir, c.cmd, func(r *Request) { r.Timeout = c.timeout })
		if c.timeout < time.Second*2 && !res.TimedOut {
			t.Errorf("%s: did not time out: %+v", c.name, res)
		}
		if pids := withMarker(t, marker); len(pids) > 0 {
			t.Errorf("%s: processes %v outlived the call", c.name, pids)
		}
	}
	time.Sleep(2500 * time.Millisecond)
	ents, _ := os.ReadDir(filepath.Join(v.dir, "w"))
	started := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".survived") {
			t.Errorf("a grandchild survived: %s", e.Name())
		}
		if strings.HasSuffix(e.Name(), ".started") {
			started++
		}
	}
	if started < 3 {
		t.Errorf("only %d grandchildren started", started)
	}
}

// TestWallCantRemount: the command can't make a read-only mount writable,
// not even as root of a nested user namespace.
func TestWallCantRemount(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	before := snapshot(t, filepath.Join(v.dir, "p"))
	p := filepath.Join(v.dir, "p")
	res := walled(t, v.tab, v.dir, fmt.Sprintf(`
mount -o remount,rw %[1]q && echo REMOUNTED
umount %[1]q && echo UNMOUNTED
unshare -Ur sh -c 'mount -o remount,rw %[1]q && echo NESTED-REMOUNTED; umount %[1]q && echo NESTED-UNMOUNTED; echo x > %[1]q/f.txt && echo WROTE'
unshare -Urm sh -c 'mount -o remount,rw %[1]q && echo NESTED-REMOUNTED; umount -l %[1]q && echo NESTED-UNMOUNTED; ls %[1]q; echo x > %[1]q/f.txt && echo WROTE'
mount -t tmpfs none /tmp && echo MOUNTED
echo end`, p))
	for _, bad := range []string{"REMOUNTED", "WROTE", "MOUNTED\n"} {
		if strings.Contains(res.Stdout, bad) {
			t.Errorf("%s:\n%s\n%s", bad, res.Stdout, res.Stderr)
		}
	}
	if !strings.Contains(res.Stdout, "end") {
		t.Errorf("did not run: %q %q", res.Stdout, res.Stderr)
	}
	sameSnapshot(t, "protected", before, snapshot(t, p))
}

// TestWallBestEffortAndOff: best-effort with no layer at all still runs
// (contained, not walled); the plan says what it would bind.
func TestWallDescribe(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	w, err := BuildWall(&WallConfig{Zones: v.tab}, "/tmp/home")
	must(t, err)
	var b strings.Builder
	w.Describe(&b)
	for _, want := range []string{v.dir + " ", "edit", "/p ", "read-only", "/h ", "covered", "/w ", "remove", v.cfg} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Describe lacks %q:\n%s", want, b.String())
		}
	}
}

// TestWallHome: the call's home is an empty tmpfs of the wall's own,
// writable, and made nowhere on the host.
func TestWallHome(t *testing.T) {
	v := newZoneVault(t, zones.Edit, nil)
	res := walled(t, v.tab, v.dir, `echo "$HOME"; ls -A "$HOME" | wc -l; echo x > "$HOME/x" && cat "$HOME/x"`)
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "/tmp/vaultgate-home-") || strings.TrimSpace(lines[1]) != "0" || lines[2] != "x" {
		t.Fatalf("home: %q %q", res.Stdout, res.Stderr)
	}
	if _, err := os.Lstat(lines[0]); !os.IsNotExist(err) {
		t.Errorf("the call's home %s is on the host: %v", lines[0], err)
	}
}
