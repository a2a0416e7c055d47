package audit

import (
	"fmt"
	"strings"
	"time"
)

// ParseSince reads the --since of `vaultgate audit` and the admin panel: an
// RFC 3339 time ("2026-05-01T09:00:00Z"), a date ("2026-05-01", midnight
// UTC), "today" (the last midnight in now's time zone), or a duration
// back from now ("90m", "1h", "2d" — d is 24h). An empty s is the zero
// time, which matches everything.
func ParseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if s == "today" {
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	d, err := parseAgo(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("since %q: want an RFC 3339 time, a date, today or a duration such as 1h or 2d", s)
	}
	return now.Add(-d), nil
}

func parseAgo(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err != nil || n < 0 || fmt.Sprint(n) != days {
			return 0, fmt.Errorf("bad days")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration")
	}
	return d, nil
}
