package server

import (
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
