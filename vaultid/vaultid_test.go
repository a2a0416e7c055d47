package vaultid

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func mkdir(t *testing.T, p string) string {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenKeepsOneIDPerVault(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state", "deep") // made by Open
	a, b := mkdir(t, filepath.Join(dir, "a")), mkdir(t, filepath.Join(dir, "b"))

	idA, err := Open(state, a)
	if err != nil {
		t.Fatal(err)
	}
	if !validID(idA) {
		t.Fatalf("id %q is not 16 hex digits", idA)
	}
	if again, err := Open(state, a); err != nil || again != idA {
		t.Fatalf("second Open: %q, %v; want %q", again, err, idA)
	}
	// The same vault through a symlink is the same vault.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	if viaLink, err := Open(state, link); err != nil || viaLink != idA {
		t.Fatalf("Open through a symlink: %q, %v; want %q", viaLink, err, idA)
	}
	if shared, err := Shared(state); err != nil || shared {
		t.Fatalf("one vault: Shared = %v, %v", shared, err)
	}
	idB, err := Open(state, b)
	if err != nil {
		t.Fatal(err)
	}
	if idB == idA {
		t.Fatalf("two vaults got one id %s", idA)
	}
	if shared, err := Shared(state); err != nil || !shared {
		t.Fatalf("two vaults: Shared = %v, %v", shared, err)
	}
	vs, err := Vaults(state)
	if err != nil || len(vs) != 2 || vs[idA] != a || vs[idB] != b {
		t.Fatalf("Vaults = %v, %v", vs, err)
	}
	fi, err := os.Stat(filepath.Join(state, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o, want 600", FileName, fi.Mode().Perm())
	}
	names, _ := filepath.Glob(filepath.Join(state, FileName+".tmp-*"))
	if len(names) > 0 {
		t.Errorf("temporary files left: %v", names)
	}
	// A moved vault is a new one (documented).
	moved := filepath.Join(dir, "a-moved")
	if err := os.Rename(a, moved); err != nil {
		t.Fatal(err)
	}
	if idM, err := Open(state, moved); err != nil || idM == idA || idM == idB {
		t.Fatalf("moved vault: %q, %v", idM, err)
	}
}

func TestOpenRefusesAMissingVault(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "state"), filepath.Join(dir, "nowhere"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "nowhere")) {
		t.Fatalf("Open of a missing vault: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", FileName)); err == nil {
		t.Error("a registry was written for a vault that does not exist")
	}
	if _, err := Open("", dir); err == nil {
		t.Error("Open with no state folder succeeded")
	}
}

// Many openers at once, of two vaults, each agree on one id per vault.
func TestOpenAtOnceAgrees(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	roots := []string{mkdir(t, filepath.Join(dir, "a")), mkdir(t, filepath.Join(dir, "b"))}
	const n = 16
	ids := make([]string, 2*n)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := Open(state, roots[i%2])
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for i := range ids {
		if ids[i] != ids[i%2] {
			t.Fatalf("opener %d got %q, opener %d %q", i, ids[i], i%2, ids[i%2])
		}
	}
	if ids[0] == ids[1] {
		t.Fatal("two vaults share an id")
	}
	vs, err := Vaults(state)
	if err != nil || len(vs) != 2 {
		t.Fatalf("Vaults = %v, %v", vs, err)
	}
}

func TestDamagedRegistryIsAnError(t *testing.T) {
	dir := t.TempDir()
	vault := mkdir(t, filepath.Join(dir, "v"))
	for name, body := range map[string]string{
		"not json":     "{",
		"other format": `{"version":2,"vaults":{}}`,
		"bad id":       `{"version":1,"vaults":{"/x":"XYZ"}}`,
		"relative":     `{"version":1,"vaults":{"x":"0123456789abcdef"}}`,
		"one id twice": `{"version":1,"vaults":{"/x":"0123456789abcdef","/y":"0123456789abcdef"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			state := mkdir(t, filepath.Join(t.TempDir(), "state"))
			reg := filepath.Join(state, FileName)
			if err := os.WriteFile(reg, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(state, vault); err == nil || !strings.Contains(err.Error(), reg) {
				t.Errorf("Open: %v, want an error naming %s", err, reg)
			}
			if _, err := Shared(state); err == nil {
				t.Error("Shared read a damaged registry")
			}
			if _, err := ScopeOf(state, "0123456789abcdef"); err == nil {
				t.Error("ScopeOf read a damaged registry")
			}
			if got, _ := os.ReadFile(reg); string(got) != body {
				t.Errorf("the damaged registry was rewritten: %q", got)
			}
		})
	}
}

func TestScope(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	a, b := mkdir(t, filepath.Join(dir, "a")), mkdir(t, filepath.Join(dir, "b"))

	sa, err := OpenScope(state, a)
	if err != nil {
		t.Fatal(err)
	}
	// Alone in its state folder: unnamed records are its own.
	if !sa.Unnamed || !sa.Owns("") || !sa.Owns(sa.ID) || sa.Owns("0123456789abcdef") {
		t.Fatalf("single-vault scope %+v", sa)
	}
	if err := sa.Check("c1", "", "undo"); err != nil {
		t.Fatalf("Check of an unnamed call, one vault: %v", err)
	}
	sb, err := OpenScope(state, b)
	if err != nil {
		t.Fatal(err)
	}
	if sa, err = ScopeOf(state, sa.ID); err != nil {
		t.Fatal(err)
	}
	// Shared: unnamed records are no one's.
	for _, s := range []Scope{sa, sb} {
		if s.Unnamed || s.Owns("") {
			t.Errorf("shared scope %+v owns unnamed records", s)
		}
	}
	if !sa.Owns(sa.ID) || sa.Owns(sb.ID) || !sb.Owns(sb.ID) || sb.Owns(sa.ID) {
		t.Fatalf("scopes a %+v, b %+v", sa, sb)
	}
	err = sa.Check("c2", sb.ID, "undo")
	if !errors.Is(err, ErrOtherVault) || !strings.Contains(err.Error(), sb.ID) || !strings.Contains(err.Error(), b) ||
		!strings.Contains(err.Error(), "c2") || !strings.Contains(err.Error(), "run undo with that vault's config") {
		t.Errorf("Check of b's call in a: %v", err)
	}
	err = sa.Check("c3", "", "diff")
	if !errors.Is(err, ErrOtherVault) || !strings.Contains(err.Error(), "names no vault") || !strings.Contains(err.Error(), state) {
		t.Errorf("Check of an unnamed call, shared: %v", err)
	}
	err = sa.Check("c4", "fedcba9876543210", "undo")
	if !errors.Is(err, ErrOtherVault) || !strings.Contains(err.Error(), "does not name") {
		t.Errorf("Check of an unknown vault's call: %v", err)
	}
	// A scope with no id owns nothing.
	none, err := ScopeOf(state, "")
	if err != nil || none.Owns("") || none.Owns(sa.ID) {
		t.Errorf("empty scope %+v, %v", none, err)
	}
}
