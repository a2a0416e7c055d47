package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/zones"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "vault", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "vault.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSampleConfig(t *testing.T) {
	c, err := Load("../testdata/vault.toml")
	if err != nil {
		t.Fatal(err)
	}
	p := c.Policy(DefaultAgent)
	if p == nil || p.Lang != "en" || !p.ReadBeforeWrite || !p.Bash.Enabled || p.Bash.Wall != WallRequired {
		t.Fatalf("policy = %+v", p)
	}
	if p.Bash.Timeout != 2*time.Minute || p.Bash.MaxTimeout != 10*time.Minute {
		t.Errorf("bash timeouts = %v, %v", p.Bash.Timeout, p.Bash.MaxTimeout)
	}
	if p.Bash.MaxChangedFiles != 1000 || p.Bash.MaxChangedBytes != 64<<20 {
		t.Errorf("bash change caps = %d files, %d bytes; want the defaults", p.Bash.MaxChangedFiles, p.Bash.MaxChangedBytes)
	}
	if !strings.HasSuffix(c.Vault, "testdata/vault") || !filepath.IsAbs(c.AuditPath) {
		t.Errorf("vault %q, audit %q", c.Vault, c.AuditPath)
	}
	for path, want := range map[string]zones.Mode{
		"мета/бобер/x.md": zones.Write, "мета/x.md": zones.Protected, "💬 чаты/a.md": zones.Create,
		"notes/a.md": zones.Edit, ".obsidian/app.json": zones.Protected,
	} {
		if got := zoneOf(p.Zones, path); got != want {
			t.Errorf("zone of %s = %s, want %s", path, got, want)
		}
	}
	// The config file and the audit log are control paths wherever they lie.
	if got := zoneOf(p.Zones, c.File); !got.AtMost(zones.Protected) {
		t.Errorf("config file zone %s", got)
	}
	if got := zoneOf(p.Zones, c.AuditPath); !got.AtMost(zones.Hidden) {
		t.Errorf("audit zone %s", got)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	cases := []struct {
		body, key, text string
	}{
		{`vault = "vault"` + "\n" + `colour = "red"`, "colour", "unknown key"},
		{`vault = "vault"` + "\n[zones]\nwrtie = [\"a\"]", "zones.wrtie", "unknown key"},
		{`vault = "vault"` + "\n[zones]\nedit = [\"a\"]\nwrite = [\"a\"]", "zones.", "also listed"},
		{`vault = "vault"` + "\n[zones]\nedit = [\"../x\"]", "zones.edit", "leaves the vault"},
		{`vault = "missing"`, "vault", "missing"},
		{`lang = "en"`, "vault", "required"},
		{`vault = "vault"` + "\nlang = \"de\"", "lang", "must be"},
		{`vault = "vault"` + "\n[bash]\ntimeout = \"soon\"", "", "bad duration"},
		{`vault = "vault"` + "\n[bash]\nwall = \"maybe\"", "bash.wall", "must be"},
		{`vault = "vault"` + "\n[bash]\ntimeout = \"20m\"", "bash.max_timeout", "less than"},
		{`vault = "vault"` + "\n[audit]\nmax_size = \"lots\"", "", "bad size"},
		{`vault = "vault"` + "\n[bash]\nmax_changed_files = 0", "bash.max_changed_files", "positive"},
		{`vault = "vault"` + "\n[bash]\nmax_changed_bytes = \"0B\"", "bash.max_changed_bytes", "positive"},
		{`vault = "vault"` + "\n[agents.bot]\ntoken_env = \"T\"\n[agents.bot.bash]\nmax_changed_files = -3", "agents.bot.bash.max_changed_files", "positive"},
		{`vault = "vault"` + "\n[audit]\nmax_size = \"10 parsecs\"", "", "unknown unit"},
		{`vault = "vault"` + "\ncase_sensitive = \"maybe\"", "", "auto"},
		{`vault = "vault"` + "\n[history]\nmax_size = 0", "history.max_size", "more than 0"},
		{`vault = "vault"` + "\n[history]\nkeep = \"-1h\"", "history.keep", "more than 0"},
		{`vault = "vault"` + "\n[history]\nkeep = \"a month\"", "", "bad duration"},
		{`vault = "vault"` + "\n[history]\nkept = \"1h\"", "history.kept", "unknown key"},
		{`vault = "vault"` + "\n[[bash.secrets]]\nname = \"T\"\nfrom_env = \"X\"", "bash.secrets[0].commands", "name the programs"},
		{`vault = "vault"` + "\n[agents.bot]\nlang = \"ru\"", "agents.bot", "token"},
		{`vault = "vault"` + "\n[agents.bot]\ntoken_env = \"T\"\nfoo = 1", "agents.bot.foo", "unknown key"},
		{`vault = "vault"` + "\n[agents.bot]\ntoken_env = \"T\"\nlang = \"fr\"", "agents.bot.lang", "must be"},
		{`vault = "vault"` + "\n[zones]\nedit = [\"a\\u0000b\"]", "zones.edit", "NUL"},
		{`vault = "vault"` + "\n[zones]\nedit = [\"Notes\"]\nprotected = [\"notes\"]", "zones.protected", "also listed"},
	}
	for _, c := range cases {
		_, err := Load(writeConfig(t, c.body))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%q: error %v, want *config.Error", c.body, err)
			continue
		}
		if !strings.Contains(ce.Key, c.key) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%q: got key %q, %q; want key containing %q and text %q", c.body, ce.Key, err, c.key, c.text)
		}
	}
}

func TestChangeCaps(t *testing.T) {
	c, err := Load(writeConfig(t, "vault = \"vault\"\n[bash]\nmax_changed_files = 20\nmax_changed_bytes = \"2MiB\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b := c.Policy(DefaultAgent).Bash; b.MaxChangedFiles != 20 || b.MaxChangedBytes != 2<<20 {
		t.Errorf("caps = %d files, %d bytes; want 20 and 2 MiB", b.MaxChangedFiles, b.MaxChangedBytes)
	}
}

func TestZonesTableReplacesDefaults(t *testing.T) {
	c, err := Load(writeConfig(t, "vault = \"vault\"\n[zones]\nedit = [\"notes\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	z := c.Policy(DefaultAgent).Zones
	if got := zoneOf(z, "other.md"); got != zones.NoZone {
		t.Errorf("a path outside the configured zones is %s, want none", got)
	}
	if got := zoneOf(z, "notes/a"); got != zones.Edit {
		t.Errorf("notes/a = %s", got)
	}
}

func TestDefaultPolicy(t *testing.T) {
	dir := t.TempDir()
	c, err := Default(dir)
	if err != nil {
		t.Fatal(err)
	}
	z := c.Policy(DefaultAgent).Zones
	for path, want := range map[string]zones.Mode{"a.md": zones.Edit, ".obsidian/x": zones.Protected, ".trash/x": zones.Protected, ".git/config": zones.Protected} {
		if got := zoneOf(z, path); got != want {
			t.Errorf("default zone of %s = %s, want %s", path, got, want)
		}
	}
	if c.History.MaxSize != 1<<30 || c.History.Keep != 30*24*time.Hour {
		t.Errorf("default history = %+v, want 1 GiB and 30 days", c.History)
	}
	b := c.Policy(DefaultAgent).Bash
	if !b.Enabled || b.Wall != WallRequired {
		t.Errorf("default bash = %+v", b)
	}
	if _, err := Default(filepath.Join(dir, "nope")); err == nil {
		t.Error("Default accepted a missing vault")
	}
}

func TestAgentsInherit(t *testing.T) {
	c, err := Load(writeConfig(t, `vault = "vault"
lang = "ru"
[bash]
timeout = "30s"
[agents.bot]
token_env = "BOT_TOKEN"
[agents.bot.bash]
network = true
[agents.bot.zones]
protected = ["."]
`))
	if err != nil {
		t.Fatal(err)
	}
	bot := c.Policy("bot")
	if bot.Lang != "ru" || bot.Bash.Timeout != 30*time.Second || !bot.Bash.Network || bot.Token.Env != "BOT_TOKEN" {
		t.Errorf("bot = %+v", bot)
	}
	if got := zoneOf(bot.Zones, "notes/x"); got != zones.Protected {
		t.Errorf("bot's zones should replace the top level's: notes/x is %s", got)
	}
	if def := c.Policy(DefaultAgent); def.Bash.Network || zoneOf(def.Zones, "notes/x") != zones.Edit {
		t.Errorf("the default agent changed: %+v", def.Bash)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100MiB": 100 << 20, "1KB": 1000, "512": 512, "2 GiB": 2 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
}

func TestCaseProbe(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Note.md"), nil, 0o644)
	fold, err := probeFolding(dir)
	if err != nil || fold {
		t.Errorf("ext4/tmpfs probe: fold=%v err=%v (want a case-sensitive file system)", fold, err)
	}
	empty := t.TempDir()
	if fold, err := probeFolding(empty); err != nil || fold {
		t.Errorf("empty root probe: fold=%v err=%v", fold, err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("probe left %v behind", ents)
	}
}

// zoneOf is the zone of p, spelled as a caller would, in t.
func zoneOf(t *zones.Table, p string) zones.Mode {
	np, err := zones.Normalize(t.Vault(), p)
	if err != nil {
		return zones.NoZone
	}
	return t.Zone(np)
}

// drop is a kind defined only by this test: a write-only inbox.
var drop, dropErr = zones.Define(zones.KindSpec{Name: "drop", Allows: zones.Ops(zones.OpCreate, zones.OpMoveIn), English: "drop only", Russian: "только класть"})

// A kind defined by a library (here, only by this test) is a config name
// like the built-ins.
func TestDefinedKindIsAZoneName(t *testing.T) {
	if dropErr != nil {
		t.Fatal(dropErr)
	}
	c, err := Load(writeConfig(t, "vault = \"vault\"\n[zones]\nedit = [\".\"]\ndrop = [\"inbox\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := zoneOf(c.Policy(DefaultAgent).Zones, "inbox/x"); got != drop {
		t.Errorf("inbox/x is %s, want drop", got)
	}
	_, err = Load(writeConfig(t, "vault = \"vault\"\n[zones]\nedit = [\"a\"]\ndrop = [\"a\"]\n"))
	if err == nil || !strings.Contains(err.Error(), "zones.drop") {
		t.Errorf("a folder in edit and drop: %v, want it reported under zones.drop", err)
	}
}

// TestZonePatterns: a zone entry with a '*' is a name pattern, kept as
// written for the zone table; a bad one, or one listed twice, is an
// error naming the key.
func TestZonePatterns(t *testing.T) {
	dir := t.TempDir()
	p := writeConfig(t, "vault = \""+dir+"\"\n[zones]\nedit = [\".\"]\nhidden = [\"**/.env\", \"**/*.pem\", \"notes/**/*.tmp\"]\n")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Policy(DefaultAgent).Zones.Patterns() {
		got = append(got, r.Path.String()+"="+r.Mode.String())
	}
	if strings.Join(got, " ") != "**/.env=hidden **/*.pem=hidden notes/**/*.tmp=hidden" {
		t.Errorf("patterns %v", got)
	}
	for _, bad := range []string{`hidden = ["**/[x"]`, `hidden = ["/abs/*.pem"]`, `hidden = ["**/.env"]` + "\nprotected = [\"**/.ENV\"]"} {
		p := writeConfig(t, "vault = \""+dir+"\"\n[zones]\nedit = [\".\"]\n"+bad+"\n")
		var ce *Error
		if _, err := Load(p); !errors.As(err, &ce) || !strings.HasPrefix(ce.Key, "zones") {
			t.Errorf("%s: %v, want an error naming the zones", bad, err)
		}
	}
}
