package sandbox

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMask(t *testing.T) {
	secrets := []Secret{
		{Name: "SHORT", Value: "abc"},
		{Name: "LONG", Value: "abcdef"},
		{Name: "EMPTY", Value: ""},
	}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"nothing here", "nothing here"},
		{"x abc y", "x ***SHORT*** y"},
		{"abcdef", "***LONG***"}, // the longer value is masked whole
		{"abcabcdef", "***SHORT******LONG***"},
	} {
		if got := Mask(tc.in, secrets); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Mask("abc", nil); got != "abc" {
		t.Errorf("Mask with no secrets = %q", got)
	}
}

// feed writes s into a capture in chunks of the given size.
func feed(max, chunk int, s string, secrets []Secret) (string, int64) {
	c := newCapture(max, maxSecretLen(secrets)+utf8.UTFMax)
	for i := 0; i < len(s); i += chunk {
		c.Write([]byte(s[i:min(i+chunk, len(s))]))
	}
	return c.text(secrets)
}

func TestCaptureHeadAndTail(t *testing.T) {
	stream := func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%07d\n", i)
		}
		return b.String()[:n]
	}
	for _, max := range []int{1, 2, 15, 16, 1000} {
		for _, n := range []int{0, 1, max - 1, max, max + 1, 3 * max, 10000} {
			for _, chunk := range []int{1, 7, 4096, 1 << 20} {
				if n < 0 {
					continue
				}
				s := stream(n)
				got, cut := feed(max, chunk, s, nil)
				if n <= max {
					if got != s || cut != 0 {
						t.Errorf("max %d n %d chunk %d: kept %q cut %d, want all", max, n, chunk, got, cut)
					}
					continue
				}
				head, tail := max-max/2, max/2
				want := s[:head] + cutNotice(int64(n-head-tail)) + s[n-tail:]
				if got != want || cut != int64(n-head-tail) {
					t.Errorf("max %d n %d chunk %d:\n got %q cut %d\nwant %q", max, n, chunk, got, cut, want)
				}
			}
		}
	}
}

func TestCaptureKeepsRunesWhole(t *testing.T) {
	s := strings.Repeat("жё😀", 500)
	for _, max := range []int{10, 11, 12, 13, 101} {
		got, cut := feed(max, 3, s, nil)
		if !utf8.ValidString(got) {
			t.Errorf("max %d: cut splits a rune: %q", max, got)
		}
		if kept := len(got) - len(cutNotice(cut)); int64(kept)+cut != int64(len(s)) || kept > max {
			t.Errorf("max %d: kept %d + cut %d != %d", max, kept, cut, len(s))
		}
	}
}

// TestCaptureMasksAcrossCut puts a secret across the head's end and across
// the tail's start: no piece of it may be left on either side of the notice.
func TestCaptureMasksAcrossCut(t *testing.T) {
	const secret = "ghp_Z9q8W7e6R5t4"
	secrets := []Secret{{Name: "GITHUB_TOKEN", Value: secret}}
	const max, n = 100, len(secret)
	head, tail := max-max/2, max/2
	for shift := 1; shift < n; shift++ {
		// A whole secret first; then one that starts shift bytes before
		// the head's end; then one that ends shift bytes after the tail's
		// start; then a whole one last.
		s := secret + strings.Repeat(".", head-n-shift) + secret + strings.Repeat(".", 300)
		s += secret + strings.Repeat(".", tail-2*n+shift) + secret
		for _, chunk := range []int{1, 13, 1 << 20} {
			got, _ := feed(max, chunk, s, secrets)
			for i := 0; i+3 <= len(secret); i++ {
				if strings.Contains(got, secret[i:i+3]) {
					t.Fatalf("shift %d chunk %d: piece %q of the secret left in %q", shift, chunk, secret[i:i+3], got)
				}
			}
			if n := strings.Count(got, "***GITHUB_TOKEN***"); n < 2 {
				t.Errorf("shift %d chunk %d: %d masks in %q, want the two whole ones at least", shift, chunk, n, got)
			}
		}
	}
}
