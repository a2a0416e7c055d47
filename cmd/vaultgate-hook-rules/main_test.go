package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestFlagsNeverAllow: as for vaultgate-hook, help and bad flags exit 2
// (block), never 0 (let through).
func TestFlagsNeverAllow(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"--confg", "x.toml"}, {"--config"}, {}} {
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader("{}"), &out, &errOut); code != 2 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
}
