package zones

import (
	"encoding/json"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestNormalizedZone: the spelling of a path never decides its zone.
func TestNormalizedZone(t *testing.T) {
	tab := sample(t, Options{})
	for raw, want := range map[string]Mode{
		"notes/../мета/x":           Protected,
		"/home/u/Notes/мета/./x":    Protected,
		"мета/бобер/../x":           Protected,
		"мета/../мета/бобер//x":     Write,
		"../Notes/секрет/a":         Hidden,
		norm.NFD.String("мета/й/x"): Protected,
	} {
		p, err := Normalize(vault, raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := tab.Zone(p); got != want {
			t.Errorf("Zone(Normalize(%q)) = %s, want %s", raw, got, want)
		}
	}
	if got := tab.Zone(Path{}); got != NoZone {
		t.Errorf("the zero Path is in zone %s, want none", got)
	}
}

func TestPathMethods(t *testing.T) {
	in, out := at("a/b"), at("/etc/x")
	if in.Outside() || !out.Outside() || VaultRoot().Outside() || !VaultRoot().IsRoot() {
		t.Error("Outside or IsRoot is wrong")
	}
	if in.Abs(vault) != "/home/u/Notes/a/b" || out.Abs(vault) != "/etc/x" || VaultRoot().Abs(vault) != vault {
		t.Error("Abs is wrong")
	}
	for p, want := range map[Path]string{in: "a", at("a"): ".", VaultRoot(): ".", out: "/etc", at("/"): "/"} {
		if got := p.Parent().String(); got != want {
			t.Errorf("Parent(%s) = %s, want %s", p, got, want)
		}
	}
	for _, c := range []struct {
		dir  Path
		name string
		want string
	}{{VaultRoot(), "x", "x"}, {in, "c", "a/b/c"}, {at("/"), "tmp", "/tmp"}, {out, "y", "/etc/x/y"}, {in, norm.NFD.String("й"), "a/b/й"}} {
		got, err := c.dir.Child(c.name)
		if err != nil || got.String() != c.want {
			t.Errorf("Child(%s, %q) = %q, %v; want %q", c.dir, c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "/", "a\x00"} {
		if got, err := in.Child(bad); err == nil {
			t.Errorf("Child(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := (Path{}).Child("x"); err == nil {
		t.Error("a child of no path")
	}
	if !at("a/b/c").Within(in) || at("a/bc").Within(in) || !in.Within(VaultRoot()) || out.Within(VaultRoot()) || !out.Within(at("/")) {
		t.Error("Within is wrong")
	}
	b, err := json.Marshal(struct {
		P Path `json:"p"`
		Q Path `json:"q"`
	}{at("мета/x"), Path{}})
	if err != nil || string(b) != `{"p":"мета/x","q":""}` {
		t.Errorf("JSON = %s, %v", b, err)
	}
}
