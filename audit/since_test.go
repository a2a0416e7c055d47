package audit

import (
	"testing"
	"time"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 5, 2, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "", want: time.Time{}},
		{in: "2026-05-01T09:00:00Z", want: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)},
		{in: "2026-05-01T09:00:00+03:00", want: time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)},
		{in: "2026-05-01", want: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "1h", want: now.Add(-time.Hour)},
		{in: "2d", want: now.Add(-48 * time.Hour)},
		{in: "today", want: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)},
		{in: "-1h", bad: true},
		{in: "1.5d", bad: true},
		{in: "d", bad: true},
		{in: "yesterday", bad: true},
	} {
		got, err := ParseSince(c.in, now)
		if (err != nil) != c.bad || (!c.bad && !got.Equal(c.want)) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v (bad %v)", c.in, got, err, c.want, c.bad)
		}
	}
}
