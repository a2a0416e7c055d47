package zones

import "testing"

func BenchmarkZoneASCII(b *testing.B) {
	tab, _ := New(vault, []Entry{{".", Edit}, {"projects/work", Write}, {"archive", Protected}, {".obsidian", Protected}}, Options{})
	p := at("projects/work/2026/q4/notes.md")
	b.ReportAllocs()
	for b.Loop() {
		if tab.Zone(p) != Write {
			b.Fatal("wrong zone")
		}
	}
}

func BenchmarkZoneCyrillic(b *testing.B) {
	tab := sample(b, Options{})
	p := at("мета/бобер/проекты/2026/заметка.md")
	b.ReportAllocs()
	for b.Loop() {
		if tab.Zone(p) != Write {
			b.Fatal("wrong zone")
		}
	}
}
