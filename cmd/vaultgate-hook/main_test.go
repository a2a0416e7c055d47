package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestFlagsNeverAllow: Claude Code reads any exit of this binary as an
// answer, so help and bad flags exit 2 (block), never 0 (let through).
func TestFlagsNeverAllow(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--confg", "x.toml"}, {"--config"}} {
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader("{}"), &out, &errOut); code != 2 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
	var out, errOut bytes.Buffer
	run([]string{"--help"}, strings.NewReader(""), &out, &errOut)
	if !strings.Contains(errOut.String(), "usage: vaultgate-hook --config FILE") {
		t.Errorf("help: %q", errOut.String())
	}
}
