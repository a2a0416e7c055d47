package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: the registry picks the config of the listed vault that holds
// the folder, the deepest of two; a folder in none, a registry inside a
// vault or open to others, an in-vault config changed since it was
// listed, and a config that serves another vault are each refused, with
// what to do.
func TestFind(t *testing.T) {
	home := t.TempDir()
	reg := filepath.Join(home, ".config", "vaultgate", RegistryFile)
	vault := func(name, body string) (string, string) {
		t.Helper()
		v := filepath.Join(home, name)
		os.MkdirAll(filepath.Join(v, "notes"), 0o755)
		cfg := filepath.Join(home, ".config", "vaultgate", filepath.Base(name)+".toml")
		os.MkdirAll(filepath.Dir(cfg), 0o700)
		os.WriteFile(cfg, []byte("vault = \""+v+"\"\n"+body), 0o600)
		if err := List(reg, v, cfg); err != nil {
			t.Fatal(err)
		}
		return v, cfg
	}
	notes, notesCfg := vault("Notes", "")
	work, workCfg := vault("Notes/work", "")
	find := func(cwd string) (string, error) {
		t.Helper()
		cfg, err := Find(reg, cwd)
		if err != nil {
			return "", err
		}
		return cfg.File, nil
	}
	if got, err := find(filepath.Join(notes, "notes")); err != nil || got != notesCfg {
		t.Errorf("inside Notes: %q %v", got, err)
	}
	if got, err := find(work); err != nil || got != workCfg {
		t.Errorf("inside Notes/work: %q %v, want the deeper vault's", got, err)
	}
	_, err := find(home)
	var nc *NoConfigError
	if !errors.As(err, &nc) || !strings.Contains(err.Error(), notes) || !strings.Contains(err.Error(), "--config FILE") {
		t.Errorf("outside every vault: %v", err)
	}
	// a config the person keeps inside the vault: trusted as init listed it
	inVault := filepath.Join(notes, "vaultgate.toml")
	os.WriteFile(inVault, []byte("vault = \""+notes+"\"\n"), 0o600)
	if err := List(reg, notes, inVault); err != nil {
		t.Fatal(err)
	}
	if got, err := find(notes); err != nil || got != inVault {
		t.Errorf("in-vault config as listed: %q %v", got, err)
	}
	os.WriteFile(inVault, []byte("vault = \""+notes+"\"\n[zones]\nwrite = [\".\"]\n"), 0o600)
	if _, err := find(notes); err == nil || !strings.Contains(err.Error(), "not what vaultgate init listed") {
		t.Errorf("in-vault config changed since: %v", err)
	}
	// a config that names another vault
	List(reg, notes, workCfg)
	if _, err := find(filepath.Join(notes, "notes")); err == nil || !strings.Contains(err.Error(), "serves "+work) {
		t.Errorf("a config of another vault: %v", err)
	}
	List(reg, notes, notesCfg)
	// a registry others may write
	os.Chmod(reg, 0o666)
	if _, err := find(notes); !errors.As(err, &nc) || !strings.Contains(err.Error(), "open to others") {
		t.Errorf("a registry open to others: %v", err)
	}
	os.Chmod(reg, 0o600)
	// a registry inside a vault it lists
	inside := filepath.Join(notes, ".config", RegistryFile)
	os.MkdirAll(filepath.Dir(inside), 0o700)
	b, _ := os.ReadFile(reg)
	os.WriteFile(inside, b, 0o600)
	if _, err := find(notes); err != nil {
		t.Fatalf("control: %v", err)
	}
	if _, err := Find(inside, notes); !errors.As(err, &nc) || !strings.Contains(err.Error(), "lies inside the vault") {
		t.Errorf("a registry inside a vault: %v", err)
	}
	// none at all
	if _, err := Find(filepath.Join(home, "none.toml"), notes); !errors.As(err, &nc) || !strings.Contains(err.Error(), "set up no vault yet") {
		t.Errorf("no registry: %v", err)
	}
}
