package main

import (
	"bytes"
	"github.com/vaultgate/vaultgate/claude"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

var (
	bundleOnce sync.Once
	bundlePath string
	bundleErr  error
)

// bundle builds vaultgate, vaultgate-hook and vaultgate-wall into one
// folder, as they are installed, once per test run.
func bundle(t *testing.T) string {
	t.Helper()
	bundleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vaultgate-bundle-")
		if err != nil {
			bundleErr = err
			return
		}
		bundlePath = dir
		for _, pkg := range []string{".", "../vaultgate-hook", "../vaultgate-wall"} {
			name := filepath.Base(pkg)
			if pkg == "." {
				name = "vaultgate"
			}
			if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
				bundleErr = err
				t.Logf("%s: %s", pkg, out)
				return
			}
		}
	})
	if bundleErr != nil {
		t.Fatal(bundleErr)
	}
	return bundlePath
}

// loneHook is vaultgate-hook copied into a folder of its own, with no
// vaultgate beside it.
func loneHook(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(bundle(t), "vaultgate-hook"))
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "vaultgate-hook")
	if err := os.WriteFile(alone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return alone
}

// heavy are the packages the small binaries must not link: each costs
// every hook call or walled bash call its init (jsonschema compiles its
// metaschemas), or is there for the server alone.
var heavy = []string{
	"github.com/mark3labs/mcp-go",
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/google/jsonschema-go",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/chromedp",
	"github.com/google/cel-go",
	"cel.dev/cel-go",
	"github.com/vaultgate/vaultgate/admin",
	"github.com/vaultgate/vaultgate/transport",
}

// TestLeanBinaries keeps the hook's and the wall helper's import graphs
// free of what they do not use.
func TestLeanBinaries(t *testing.T) {
	for pkg, banned := range map[string][]string{
		// The helper only builds the wall: not even the gate.
		"../vaultgate-wall": append(heavy, "github.com/vaultgate/vaultgate/server", "github.com/vaultgate/vaultgate/tools", "github.com/vaultgate/vaultgate/shell"),
	} {
		for _, d := range deps(t, pkg, "{{.ImportPath}}") {
			for _, b := range banned {
				if d == b || strings.HasPrefix(d, b+"/") {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
}

// TestHookLinksNothingButItsSocket: vaultgate-hook, which Claude Code
// starts for every tool call, links the standard library, x/sys,
// judgesock and the JSON string writer it shares with the audit log
// (jsonstr, which imports only the standard library), nothing else, and
// no cgo: a static binary, with no dynamic loader to run before main.
func TestHookLinksNothingButItsSocket(t *testing.T) {
	const pkg = "../vaultgate-hook"
	allowed := []string{"golang.org/x/sys/unix", "github.com/vaultgate/vaultgate/internal/judgesock", "github.com/vaultgate/vaultgate/internal/jsonstr", "github.com/vaultgate/vaultgate/cmd/vaultgate-hook"}
	for _, line := range deps(t, pkg, "{{.ImportPath}} {{.Standard}} {{len .CgoFiles}}") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("go list: %q", line)
		}
		if f[2] != "0" {
			t.Errorf("%s links %s, which has cgo", pkg, f[0])
		}
		if f[1] != "true" && !slices.Contains(allowed, f[0]) {
			t.Errorf("%s links %s", pkg, f[0])
		}
	}
}

// deps is `go list -deps -f format pkg`, a line for each package.
func deps(t *testing.T, pkg, format string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", format, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list -deps %s: only %v", pkg, lines)
	}
	return lines
}

// inits runs a binary with GODEBUG=inittrace=1 and returns the packages
// whose init ran.
func inits(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader("")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Run() // the exit status is not the point
	var pkgs []string
	for _, line := range strings.Split(errb.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			pkgs = append(pkgs, f[1])
		}
	}
	if len(pkgs) == 0 {
		t.Fatalf("%s: no init trace in %q", bin, errb.String())
	}
	return pkgs
}

// TestSmallBinariesSkipMCPInit: what the hook and the helper start up is
// theirs alone, while vaultgate itself still runs jsonschema's init (so
// the check can see it).
func TestSmallBinariesSkipMCPInit(t *testing.T) {
	dir := bundle(t)
	runsJSONSchema := func(pkgs []string) bool {
		for _, p := range pkgs {
			if strings.Contains(p, "jsonschema") || strings.HasPrefix(p, "github.com/mark3labs/") {
				return true
			}
		}
		return false
	}
	if !runsJSONSchema(inits(t, filepath.Join(dir, "vaultgate"), "--help")) {
		t.Fatal("vaultgate --help shows no jsonschema init: the trace check sees nothing")
	}
	for bin, args := range map[string][]string{
		"vaultgate-hook": {"--config", filepath.Join(t.TempDir(), "none.toml")},
		"vaultgate-wall": nil,
	} {
		if pkgs := inits(t, filepath.Join(dir, bin), args...); runsJSONSchema(pkgs) {
			t.Errorf("%s runs an MCP library's init: %v", bin, pkgs)
		}
	}
}

// TestZonesWallNamesItsHelper: zones --wall says which helper serve would
// start — vaultgate-wall beside the binary, or the binary itself.
func TestZonesWallNamesItsHelper(t *testing.T) {
	_, cfg, _ := sampleVault(t)
	dir := bundle(t)
	for bin, want := range map[string]string{
		filepath.Join(dir, "vaultgate"): "helper   " + filepath.Join(dir, "vaultgate-wall"),
		binary(t):                       "helper   self",
	} {
		out, err := exec.Command(bin, "zones", "--config", cfg, "--wall").Output()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("%s zones --wall: %v, want %q in\n%s", bin, err, want, out)
		}
	}
}

// TestInitNamesTheSmallHook: the settings init writes start vaultgate-hook
// where it is installed beside vaultgate, and `vaultgate hook` otherwise.
func TestInitNamesTheSmallHook(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "vaultgate")
	if bin, args := hookBinary(exe); bin != exe || args != "hook" {
		t.Errorf("alone: %q %q, want %q hook", bin, args, exe)
	}
	hook := filepath.Join(dir, "vaultgate-hook")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, args := hookBinary(exe)
	if bin != hook || args != "" {
		t.Errorf("beside vaultgate-hook: %q %q, want %q", bin, args, hook)
	}
	s := claude.Setup{Exe: exe, Hook: bin, HookArgs: args, Config: "/c.toml", ServerName: "vault"}
	_, settings := claude.Entries(s)
	if !strings.Contains(string(settings), `"command": "`+hook+` --config /c.toml || exit 2"`) {
		t.Errorf("settings:\n%s", settings)
	}
}
