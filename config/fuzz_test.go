package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad feeds Load arbitrary TOML. It must never panic; what it refuses
// comes back as an *Error naming the file, and what it accepts is a whole
// policy: every agent with a zone table, a language the catalogue has, and
// bash timeouts that make sense.
func FuzzLoad(f *testing.F) {
	sample, err := os.ReadFile("../testdata/vault.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(sample))
	f.Add(`vault = "v"`)
	f.Add("vault = \"v\"\n[zones]\nwrite = [\".\"]\nhidden = [\"a\", \"A\"]\n")
	f.Add("vault = \"v\"\nlang = \"ru\"\n[agents.x]\nlang = \"en\"\n[agents.x.zones]\nedit = [\"notes\"]\n")
	f.Add("vault = \"v\"\n[bash]\nenabled = true\ntimeout = \"1s\"\nmax_timeout = \"0s\"\n")
	f.Add("vault = \"/\"\n[zones]\nprotected = [\"../x\", \"/etc\"]\n")
	f.Add(strings.ReplaceAll(ruleConfig, `"vault"`, `"v"`)) // [[rules.deny]], examples, agents' rules
	f.Fuzz(func(t *testing.T, body string) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "v", "notes"), 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "vault.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(p)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.File == "" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		if !filepath.IsAbs(c.Vault) || !filepath.IsAbs(c.AuditPath) || c.File == "" {
			t.Fatalf("paths not absolute: %+v", c)
		}
		if c.Policy(DefaultAgent) == nil {
			t.Fatalf("no %q agent", DefaultAgent)
		}
		for name, pol := range c.Agents {
			if pol.Zones == nil || (pol.Lang != "en" && pol.Lang != "ru") {
				t.Fatalf("agent %q: zones %v, lang %q", name, pol.Zones, pol.Lang)
			}
			if pol.Bash.Enabled && (pol.Bash.Timeout <= 0 || pol.Bash.Timeout > pol.Bash.MaxTimeout) {
				t.Fatalf("agent %q: bash timeout %v, max %v", name, pol.Bash.Timeout, pol.Bash.MaxTimeout)
			}
		}
	})
}
