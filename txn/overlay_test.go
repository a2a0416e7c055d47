//go:build linux

package txn

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// mountFailed is the exit code of the mount script when the kernel would not mount the overlay.
const mountFailed = 97

// overlayMode is how a test mounts the overlay: as real root, or in a user namespace
// (of root, or of a non-root server's uid, which then owns the vault and the layer).
type overlayMode struct {
	name       string
	privileged bool
	uid        int
}

var (
	asRoot       = overlayMode{"root", true, 0}
	overlayModes = []overlayMode{asRoot, {"userns", false, 0}, {"nonroot", false, 65534}}
)

// missingFeature stops a test that the kernel cannot run: a failure in CI, where every
// feature must be there, a skip with the reason elsewhere.
func missingFeature(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// testBase is a fresh folder whose path holds no comma or colon, which mount options can't carry.
func testBase(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "txn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// newTestVault makes a vault folder and fills it by running setup (sh) inside it.
func newTestVault(t testing.TB, base, setup string) string {
	t.Helper()
	vault := filepath.Join(base, "vault")
	if err := os.Mkdir(vault, 0o755); err != nil {
		t.Fatal(err)
	}
	runShell(t, vault, setup)
	return vault
}

func runShell(t testing.TB, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -ec %q: %v\n%s", script, err, out)
	}
}

// changeThroughOverlay mounts vault as the lower layer of l in a private mount namespace
// (a user namespace too when !privileged), runs script in the merged view as a program
// would, and unmounts: the namespace ends with the script.
func changeThroughOverlay(t testing.TB, base, vault string, l *Layer, mode overlayMode, script string) {
	t.Helper()
	privileged := mode.privileged
	if _, err := exec.LookPath("unshare"); err != nil {
		missingFeature(t, "no unshare(1) to make a mount namespace: %v", err)
	}
	merged := filepath.Join(base, "merged")
	if err := os.MkdirAll(merged, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := "lowerdir=" + vault + ",upperdir=" + l.Upper + ",workdir=" + l.Work
	args := []string{"-m", "--propagation", "private"}
	if privileged {
		opts += ",redirect_dir=on,index=off,metacopy=off"
	} else {
		opts += ",userxattr"
		args = append(args, "-Ur")
	}
	wrapper := `mount -t overlay overlay -o "$TXN_OPTS" "$TXN_MERGED" || exit ` + "97" + `
cd "$TXN_MERGED"
sh -ec "$TXN_SCRIPT"`
	argv := append([]string{"unshare"}, append(args, "sh", "-c", wrapper)...)
	env := append(os.Environ(), "TXN_OPTS="+opts, "TXN_MERGED="+merged, "TXN_SCRIPT="+script)
	if mode.uid != 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			missingFeature(t, "no setpriv(1) to run as uid %d: %v", mode.uid, err)
		}
		// A non-root server owns its vault and its state folder; the programs it runs
		// are the system's (a python3 under /root is out of its reach).
		for _, p := range []string{vault, filepath.Dir(l.Dir), l.Dir, merged} {
			if out, err := exec.Command("chown", "-R", strconv.Itoa(mode.uid)+":"+strconv.Itoa(mode.uid), p).CombinedOutput(); err != nil {
				t.Fatalf("chown %s: %v\n%s", p, err, out)
			}
		}
		for _, p := range []string{base, filepath.Dir(filepath.Dir(l.Dir))} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		id := strconv.Itoa(mode.uid)
		argv = append([]string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups"}, argv...)
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == mountFailed {
		missingFeature(t, "the kernel would not mount the overlay (%s): %s", opts, out.String())
	}
	if err != nil {
		if !privileged && strings.Contains(out.String(), "unshare failed") {
			missingFeature(t, "no user namespaces: %s", out.String())
		}
		t.Fatalf("script %q in the overlay: %v\n%s", script, err, out.String())
	}
}

func newTestLayer(t testing.TB, base string) *Layer {
	t.Helper()
	l, err := NewLayer(filepath.Join(base, "state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Remove() })
	return l
}
