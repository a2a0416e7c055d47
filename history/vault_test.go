package history

import (
	"bytes"
	"testing"
)

// TestEntriesNameTheirVault: Meta.Vault reaches every entry of the call,
// read back from the log, from the pack it is sealed into, and after a
// reopen; an entry kept without one (as before vaults were named) has no
// "vault" key in its record and reads back with none.
func TestEntriesNameTheirVault(t *testing.T) {
	vault, state, s := logStore(t, Options{})
	put(t, vault, "a.md", []byte("a\n"))
	put(t, vault, "b.md", []byte("b\n"))
	for _, c := range []struct{ id, vault, path string }{{"call-named", "0123456789abcdef", "a.md"}, {"call-old", "", "b.md"}} {
		ch, err := s.Begin(c.id, Meta{Tool: "write", Vault: c.vault}, []Target{{Op: "modify", Path: c.path}, {Op: "create", Path: c.path + ".new"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ch.Done(); err != nil {
			t.Fatal(err)
		}
	}
	// The unnamed call's record is what a record before the field was.
	recs, err := readRecords(s.log, mustHead(t, s), headSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		b, err := r.encode()
		if err != nil {
			t.Fatal(err)
		}
		if has := bytes.Contains(b, []byte(`"vault"`)); has != (r.ID == "call-named") {
			t.Errorf("record of %s: vault key %v: %s", r.ID, has, b)
		}
	}
	check := func(s *Store, when string) {
		t.Helper()
		want := map[string]string{"call-named": "0123456789abcdef", "call-old": ""}
		for id, v := range want {
			es, err := s.Call(id)
			if err != nil || len(es) != 2 {
				t.Fatalf("%s: Call(%s) = %+v, %v", when, id, es, err)
			}
			for _, e := range es {
				if e.Vault != v {
					t.Errorf("%s: Call(%s): entry %s names vault %q, want %q", when, id, e.Path, e.Vault, v)
				}
			}
		}
		all, err := s.All()
		if err != nil || len(all) != 4 {
			t.Fatalf("%s: All = %+v, %v", when, all, err)
		}
		for _, e := range all {
			if e.Vault != want[e.ID] {
				t.Errorf("%s: All: entry %s of %s names vault %q", when, e.Path, e.ID, e.Vault)
			}
		}
	}
	check(s, "in the log")
	if err := s.exclusive(s.seal); err != nil {
		t.Fatal(err)
	}
	check(s, "sealed")
	s.Close()
	check(openAt(t, vault, state, Options{Recover: true}), "reopened")
}

func mustHead(t *testing.T, s *Store) logHead {
	t.Helper()
	h, err := s.readHead()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
