package config

import (
	"errors"
	"strings"
	"testing"
)

// TestRunAsNeedsRoot: run_as is honoured only by a root server, so with
// any other it is a start-up error naming the key; a missing user or root
// itself is one too.
func TestRunAsNeedsRoot(t *testing.T) {
	old := geteuid
	t.Cleanup(func() { geteuid = old })
	cases := []struct {
		euid       int
		user, text string
	}{
		{1000, "nobody", "needs the server to run as root"},
		{0, "no-such-user-vg", "unknown user"},
		{0, "root", "is root"},
	}
	for _, c := range cases {
		geteuid = func() int { return c.euid }
		_, err := Load(writeConfig(t, "vault = \"vault\"\n[bash]\nrun_as = \""+c.user+"\"\n"))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "bash.run_as" || !strings.Contains(err.Error(), c.text) {
			t.Errorf("euid %d run_as %q: %v, want bash.run_as: …%s", c.euid, c.user, err, c.text)
		}
	}
	geteuid = func() int { return 0 }
	c, err := Load(writeConfig(t, "vault = \"vault\"\n[bash]\nrun_as = \"nobody\"\n"))
	if err != nil || c.Policy(DefaultAgent).Bash.RunAs != "nobody" {
		t.Errorf("root server with run_as nobody: %v", err)
	}
}
