package server

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
)

// loadConfig writes body to a temp file and loads it, with the sample
// vault's relative path made absolute.
func loadConfig(t testing.TB, body string) *config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.toml")
	abs, _ := filepath.Abs("../testdata/vault")
	body = strings.Replace(body, `"../testdata/vault"`, `"`+abs+`"`, 1)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// The gates of these tests are opened as the binaries open theirs, by
// the constructor of the role the test is about, on the vault's real
// files through the production file system (vaultfs.Open); each
// is closed when its test ends.

// serverGate opens cfg's vault as `vaultgate serve` (or run, or
// hook-judge) does: start-up and all, every agent's rules compiled.
func serverGate(t testing.TB, cfg *config.Config) *Gate {
	t.Helper()
	g, err := OpenServer(cfg, io.Discard)
	return opened(t, g, err)
}

// callGate opens cfg's vault as one hook or exec call of agent does.
func callGate(t testing.TB, cfg *config.Config, agent string) *Gate {
	t.Helper()
	g, err := OpenCall(cfg, agent)
	return opened(t, g, err)
}

// dryRunGate opens cfg's vault as check does: no audit log, no history.
func dryRunGate(t testing.TB, cfg *config.Config) *Gate {
	t.Helper()
	g, err := OpenDryRun(cfg)
	return opened(t, g, err)
}

// personGate opens cfg's vault as the person's history, diff and undo do.
func personGate(t testing.TB, cfg *config.Config) *Gate {
	t.Helper()
	g, err := OpenPerson(cfg)
	return opened(t, g, err)
}

func opened(t testing.TB, g *Gate, err error) *Gate {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// undo is the person's `vaultgate undo` beside the gate g that served the
// calls: a gate of its own (OpenPerson) on g's config, closed at once.
func undo(t testing.TB, g *Gate, req UndoRequest) (*Undone, error) {
	t.Helper()
	p, err := OpenPerson(g.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	return p.Undo(req)
}

// stderrOf runs fn and returns what it wrote to os.Stderr, where a hook's
// or exec's gate (OpenCall, OpenPerson) says what its opening did. The
// tests of this package don't run in parallel, so the swap is theirs.
func stderrOf(t testing.TB, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = old }()
	fn()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
