package zones

import "testing"

func BenchmarkZoneASCII(b *testing.B) {
	tab, _ := New(vault, []Entry{{".", Edit}, {"projects/work", Write}, {"archive", Protected}, {".obsidian", Protected}}, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if tab.Zone("projects/work/2026/q4/notes.md") != Write {
			b.Fatal("wrong zone")
		}
	}
}

func BenchmarkZoneCyrillic(b *testing.B) {
	tab := sample(b, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if tab.Zone("мета/бобер/проекты/2026/заметка.md") != Write {
			b.Fatal("wrong zone")
		}
	}
}
