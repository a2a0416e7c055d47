package rules

import (
	"os"
	"path/filepath"
	"testing"

	"cel.dev/cel-go/cel"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
)

func init() {
	// A test binary's build information lists no modules: stand in for
	// the CEL version, so the cache is exercised.
	celVersion = func() string { return "cel.dev/cel-go@test\n" }
}

func noPlan(*config.Example) (*policy.ToolCall, error) { return theCall(), nil }

// judgeCached compiles decl through the cache in dir, as a hook process
// does, and judges theCall.
func judgeCached(t *testing.T, dir string, decl []config.DenyRule) *policy.Deny {
	t.Helper()
	chain, err := CachedChain(dir)(decl, command, noPlan)
	if err != nil {
		t.Fatal(err)
	}
	return chain[0].Check(theCall())
}

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, cachePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestCacheSameDecisions: a set compiled from kept parses judges as one
// compiled from the text, whatever the file holds: written fresh, read
// back, of other rules (a stale cache after the rules changed), cut
// short, garbled, or empty; a damaged file is written anew.
func TestCacheSameDecisions(t *testing.T) {
	dir := t.TempDir()
	decl := []config.DenyRule{
		{Name: "never", When: `effect.path == "nowhere"`, Reason: "0"},
		{Name: "reads_session", When: `effect.op == "delete" && "notes/n.md" in session.read`, Reason: "1"},
		{Name: "any_read", When: `effect.op == "read"`, Reason: "3"},
	}
	want := func(decl []config.DenyRule) string {
		set, err := CompileSet(decl, Options{Command: command})
		if err != nil {
			t.Fatal(err)
		}
		if d := set.Check(theCall()); d != nil {
			return d.Rule
		}
		return ""
	}
	got := func(decl []config.DenyRule) string {
		if d := judgeCached(t, dir, decl); d != nil {
			return d.Rule
		}
		return ""
	}
	if g, w := got(decl), want(decl); g != w || w != "reads_session" {
		t.Fatalf("first: %q, want %q", g, w)
	}
	files := cacheFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("cache files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v", fi, err)
	}
	if c := openParseCache(dir, decl); c == nil || !c.loaded {
		t.Fatal("the written cache does not read back")
	}
	if g := got(decl); g != "reads_session" {
		t.Errorf("from the cache: %q", g)
	}
	// The rules change: the kept parses of the old text are not used.
	changed := append([]config.DenyRule(nil), decl...)
	changed[1].When = `effect.op == "delete" && "elsewhere.md" in session.read`
	if g, w := got(changed), want(changed); g != w || w != "any_read" {
		t.Errorf("changed rules: %q, want %q", g, w)
	}
	// A file of the old rules put in the new rules' place is refused.
	old, _ := os.ReadFile(files[0])
	newFile := openParseCache(dir, changed).file
	if err := os.WriteFile(newFile, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if g := got(changed); g != "any_read" {
		t.Errorf("a file of other rules: %q", g)
	}
	// Damage of every kind: parsed again, same decision, file rewritten.
	good, _ := os.ReadFile(files[0])
	for name, bad := range map[string][]byte{
		"cut":     good[:len(good)-3],
		"empty":   nil,
		"garbled": append(append([]byte(nil), good[:70]...), []byte("\xff\xff\xff\x7fxxxx")...),
		"longer":  append(append([]byte(nil), good...), 1, 0, 0, 0, 8),
	} {
		if err := os.WriteFile(files[0], bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if c := openParseCache(dir, decl); c.loaded {
			t.Errorf("%s: loaded", name)
		}
		if g := got(decl); g != "reads_session" {
			t.Errorf("%s: %q", name, g)
		}
		if again, _ := os.ReadFile(files[0]); string(again) != string(good) {
			t.Errorf("%s: not rewritten", name)
		}
	}
}

// TestCacheNeverSkipsTheCheck: a kept parse is type-checked in every
// process, so a rule with a typo fails closed with the text's own error
// even when its parse is kept (the parse of a typo is fine; the check is
// what refuses it), and after rules that compiled are changed into one
// with a typo; and a kept tree that does not check as bool in a bool
// rule's place is parsed again from the text.
func TestCacheNeverSkipsTheCheck(t *testing.T) {
	dir := t.TempDir()
	good := []config.DenyRule{{Name: "a", When: `effect.op == "read"`, Reason: "r", Key: "rules.deny[0]"}}
	if d := judgeCached(t, dir, good); d == nil || d.Rule != "a" {
		t.Fatalf("deny %+v", d)
	}
	bad := []config.DenyRule{{Name: "a", When: `efect.op == "read"`, Reason: "r", Key: "rules.deny[0]"}}
	_, want := CompileSet(bad, Options{})
	if want == nil {
		t.Fatal("the typo compiles")
	}
	if _, err := CachedChain(dir)(bad, command, noPlan); err == nil || err.Error() != want.Error() {
		t.Errorf("changed into a typo: %v, want %v", err, want)
	}
	// The typo's own parse kept: still checked, still the same error.
	kept := openParseCache(dir, bad)
	kept.trees[0] = mustParse(t, bad[0].When)
	kept.save(cacheKey(bad))
	if c := openParseCache(dir, bad); !c.loaded {
		t.Fatal("the kept typo does not load")
	}
	if _, err := CachedChain(dir)(bad, command, noPlan); err == nil || err.Error() != want.Error() {
		t.Errorf("kept typo: %v, want %v", err, want)
	}
	// A tree of type string kept in a bool rule's place.
	boolRule := []config.DenyRule{{Name: "b", When: `effect.path == "notes/n.md"`, Reason: "r"}}
	sc := openParseCache(dir, boolRule)
	sc.trees[0] = mustParse(t, `effect.path`)
	sc.save(cacheKey(boolRule))
	if d := judgeCached(t, dir, boolRule); d == nil || d.Rule != "b" {
		t.Errorf("a swapped tree: deny %+v", d)
	}
}

func mustParse(t *testing.T, when string) *cel.Ast {
	t.Helper()
	e, err := env()
	if err != nil {
		t.Fatal(err)
	}
	a, iss := e.Parse(when)
	if iss != nil && iss.Err() != nil {
		t.Fatal(iss.Err())
	}
	return a
}

// TestCacheWithoutFolder: no state folder, no cache, the same rules.
func TestCacheWithoutFolder(t *testing.T) {
	decl := []config.DenyRule{{Name: "a", When: `effect.op == "read"`, Reason: "r"}}
	if d := judgeCached(t, "", decl); d == nil || d.Rule != "a" {
		t.Errorf("deny %+v", d)
	}
	if d := judgeCached(t, filepath.Join(t.TempDir(), "missing"), decl); d == nil || d.Rule != "a" {
		t.Errorf("deny %+v", d)
	}
}
