package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestZonesReady: a protected or hidden entry that names nothing on the
// disk (a typo, another case, a decomposed spelling on the config's side
// is the same name in NFC) keeps a server from starting, with a "did you
// mean"; one marked expected later (?), one that narrows nothing, a name
// pattern and a symlink's target are told apart.
func TestZonesReady(t *testing.T) {
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	for _, d := range []string{"Archive", "мета", "notes/Projects", "real"} {
		if err := os.MkdirAll(filepath.Join(vault, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("real", filepath.Join(vault, "link"))
	load := func(zones string) *Config {
		t.Helper()
		p := filepath.Join(dir, "v.toml")
		os.WriteFile(p, []byte("vault = \"vault\"\n[zones]\n"+zones), 0o644)
		c, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, c := range []struct {
		zones string
		ready bool
		want  []string // in the error
	}{
		{`edit = ["."]` + "\n" + `protected = ["Archive", "мета", "notes/Projects"]`, true, nil},
		{`edit = ["."]` + "\n" + `protected = ["Archve"]`, false, []string{`zones.protected: "Archve" does not exist`, `did you mean "Archive"?`}},
		{`edit = ["."]` + "\n" + `protected = ["archive"]`, false, []string{`did you mean "Archive"?`}},
		{`edit = ["."]` + "\n" + `hidden = ["notes/projects"]`, false, []string{`zones.hidden: "notes/projects"`, `did you mean "notes/Projects"?`}},
		{`edit = ["."]` + "\n" + `protected = ["notes/Projetcs/old"]`, false, []string{`did you mean "notes/Projects/old"?`}},
		{`edit = ["."]` + "\n" + `protected = ["` + norm.NFD.String("мета") + `"]`, true, nil},
		{`edit = ["."]` + "\n" + `protected = ["Archve?", ".trash?"]`, true, nil},
		{`edit = ["."]` + "\n" + `hidden = ["**/.env", "**/nothing-*"]`, true, nil},
		{`edit = ["."]` + "\n" + `write = ["inbox"]`, true, nil},           // a write zone opens nothing while it is missing
		{`edit = ["notes"]` + "\n" + `protected = ["nowhere"]`, true, nil}, // no zone above it: nothing to open
		{`edit = ["."]` + "\n" + `create = ["chats"]`, false, []string{`zones.create: "chats" does not exist`}},
		{`edit = ["."]` + "\n" + `protected = ["link"]`, false, []string{`symbolic link link`}},
		{`edit = ["."]` + "\n" + `protected = ["/nonexistent-vaultgate-x"]`, true, nil}, // outside the vault, no zone above
	} {
		cfg := load(c.zones)
		err := cfg.ZonesReady()
		if (err == nil) != c.ready {
			t.Errorf("%s: ZonesReady = %v, want ready %v", c.zones, err, c.ready)
			continue
		}
		var ze *ZonesError
		if err != nil && !errors.As(err, &ze) {
			t.Errorf("%s: %T, want *ZonesError", c.zones, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwants %q", c.zones, err, w)
			}
		}
	}
	// what is missing but opens nothing is still listed, for doctor
	missing := load(`edit = ["."]` + "\n" + `write = ["inbox"]` + "\n" + `protected = [".trash?"]`).MissingZones()
	if len(missing) != 2 || missing[0].Opens || missing[1].Opens || !missing[1].Later && !missing[0].Later {
		t.Errorf("MissingZones = %+v", missing)
	}
}

// TestNoConfigStartsBare: the default policy (and a config without
// [zones]) protects .obsidian and .trash, expected later, so a fresh
// vault starts.
func TestNoConfigStartsBare(t *testing.T) {
	vault := t.TempDir()
	c, err := Default(vault)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ZonesReady(); err != nil {
		t.Errorf("a fresh vault: %v", err)
	}
	if got := zoneOf(c.Policy(DefaultAgent).Zones, ".trash/x.md"); got.String() != "protected" {
		t.Errorf(".trash: %s", got)
	}
}

// TestLaterMarkAlone: a ? with no folder before it names nothing.
func TestLaterMarkAlone(t *testing.T) {
	p := writeConfig(t, "vault = \"vault\"\n[zones]\nedit = [\".\"]\nprotected = [\"?\"]\n")
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "zones.protected") {
		t.Errorf("Load = %v", err)
	}
}

// TestZonesReadyPerAgent: an agent's zones replace the top level's, so an
// entry marked expected later at the top level is still missing for an
// agent that names it without the mark.
func TestZonesReadyPerAgent(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "vault", "Archive"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "v.toml")
	os.WriteFile(p, []byte(`vault = "vault"
[zones]
edit = ["."]
protected = ["Archve?"]
[agents.bot]
token_env = "BOT_TOKEN"
[agents.bot.zones]
edit = ["."]
protected = ["Archve"]
`), 0o644)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ZonesReady(); err == nil || !strings.Contains(err.Error(), "Archive") {
		t.Errorf("ZonesReady = %v; want bot's Archve refused, with a did you mean", err)
	}
}
