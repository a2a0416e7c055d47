package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHelperBeside(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "vaultgate")
	helper := filepath.Join(dir, HelperBinary)
	if got := helperBeside(exe); got != "" {
		t.Errorf("no helper beside: got %q", got)
	}
	must(t, os.WriteFile(helper, []byte("#!/bin/false\n"), 0o644))
	if got := helperBeside(exe); got != "" {
		t.Errorf("a helper that is not executable: got %q", got)
	}
	must(t, os.Chmod(helper, 0o755))
	if got := helperBeside(exe); got != helper {
		t.Errorf("helper beside: got %q, want %q", got, helper)
	}
	must(t, os.Remove(helper))
	must(t, os.Mkdir(helper, 0o755))
	if got := helperBeside(exe); got != "" {
		t.Errorf("a folder of the helper's name: got %q", got)
	}
}

func TestHelperName(t *testing.T) {
	for helper, want := range map[string]string{
		"":                         "self",
		selfHelper:                 "self",
		"/usr/bin/" + HelperBinary: HelperBinary,
		"/opt/vg/bin/other-helper": "other-helper",
	} {
		if got := HelperName(helper); got != want {
			t.Errorf("HelperName(%q) = %q, want %q", helper, got, want)
		}
	}
}
