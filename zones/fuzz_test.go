package zones

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

var fuzzSeeds = []string{
	".", "..", "/", "notes/x.md", "notes/../мета/x", "мета/бобер/../../секрет", "/home/u/Notes/мета",
	"/home/u/Notes2/x", "./a//b/./c/", "МЕТА/x", ".obſidian/app.json", "sub/.GIT/config", "💬 чаты/x",
	norm.NFD.String("мета/й.md"), "K/\u212a", "a\x00b", "", "/etc/../etc/passwd", "секрет/../../Notes/секрет/x",
}

// FuzzNormalize checks what every caller of Normalize relies on: a Path is
// clean, NFC, and a fixed point, and Outside says whether it left the vault.
func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := Normalize(vault, raw)
		if err != nil {
			if !p.IsZero() {
				t.Fatalf("Normalize(%q) failed with a path %q", raw, p)
			}
			return
		}
		s := p.String()
		if s == "" || (utf8.ValidString(raw) && !norm.NFC.IsNormalString(s)) {
			t.Fatalf("Normalize(%q) = %q: empty or not NFC", raw, s)
		}
		if p.Outside() != strings.HasPrefix(s, "/") {
			t.Fatalf("Normalize(%q) = %q: Outside is %v", raw, s, p.Outside())
		}
		if !p.Outside() && !p.IsRoot() {
			for _, c := range strings.Split(s, "/") {
				if c == "" || c == "." || c == ".." {
					t.Fatalf("Normalize(%q) = %q: component %q", raw, s, c)
				}
			}
		}
		if p.Outside() && (s == vault || strings.HasPrefix(s, vault+"/")) {
			t.Fatalf("Normalize(%q) = %q: inside the vault but outside", raw, s)
		}
		for _, again := range []string{s, p.Abs(vault)} {
			if q, err := Normalize(vault, again); err != nil || q != p {
				t.Fatalf("Normalize(%q) = %q, but Normalize(%q) = %q, %v", raw, s, again, q, err)
			}
		}
	})
}

// FuzzZone checks the zone table's promises on any path: a path's zone is
// that of its normalised spelling, never freer than its folded one, and a
// control name or a hidden folder caps it whatever the entries say.
func FuzzZone(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	tab := sample(f, Options{Protect: []string{"vault.toml"}, Hide: []string{"logs/audit.jsonl"}})
	folding := sample(f, Options{FoldOnly: true, Protect: []string{"vault.toml"}, Hide: []string{"logs/audit.jsonl"}})
	secret := at("секрет")
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := Normalize(vault, raw)
		if err != nil {
			return
		}
		z := tab.Zone(p)
		if q, _ := Normalize(vault, p.Abs(vault)); tab.Zone(q) != z {
			t.Fatalf("Zone(%q) = %s, but its absolute spelling is in %s", p, z, tab.Zone(q))
		}
		if fz := folding.Zone(p); !z.AtMost(fz) {
			t.Fatalf("Zone(%q) = %s is freer than its folded zone %s", p, z, fz)
		}
		if p.Outside() && z != NoZone {
			t.Fatalf("Zone(%q) = %s outside the vault with no absolute entry", p, z)
		}
		folded := Fold(p.String())
		for _, c := range strings.Split(folded, "/") {
			if IsControlName(c) && !z.AtMost(Protected) {
				t.Fatalf("Zone(%q) = %s under control name %q", p, z, c)
			}
		}
		if ControlWhy(p) != "" && !p.Outside() && !z.AtMost(Protected) {
			t.Fatalf("Zone(%q) = %s, a control path", p, z)
		}
		if (p.Within(secret) || strings.HasPrefix(folded, "секрет/") || folded == "секрет") && !z.AtMost(Hidden) {
			t.Fatalf("Zone(%q) = %s inside a hidden folder", p, z)
		}
		if d := tab.Zone(p); d != z {
			t.Fatalf("Zone(%q) is %s, then %s", p, z, d)
		}
	})
}
