package netpolicy

import (
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		entry, want string
		kind        Kind
		port        int
	}{
		{"github.com", "github.com", Name, 0},
		{"GitHub.COM", "github.com", Name, 0},
		{"github.com.", "github.com", Name, 0},
		{"ＧＩＴＨＵＢ.com", "github.com", Name, 0}, // full-width letters fold
		{"api.anthropic.com:443", "api.anthropic.com:443", Name, 443},
		{"münchen.de", "xn--mnchen-3ya.de", Name, 0},
		{"XN--MNCHEN-3YA.de", "xn--mnchen-3ya.de", Name, 0},
		{"a。b.example", "a.b.example", Name, 0}, // ideographic full stop
		{"localhost", "localhost", Name, 0},
		{"*.githubusercontent.com", "*.githubusercontent.com", Wildcard, 0},
		{"*.Example.com.:8080", "*.example.com:8080", Wildcard, 8080},
		{"*.münchen.de", "*.xn--mnchen-3ya.de", Wildcard, 0},
		{"127.0.0.1", "127.0.0.1", Address, 0},
		{"127.0.0.1:8443", "127.0.0.1:8443", Address, 8443},
		{"::1", "::1", Address, 0},
		{"[::1]", "::1", Address, 0},
		{"[::1]:443", "[::1]:443", Address, 443},
		{"::1:443", "::1:443", Address, 0}, // a bare IPv6 address has no port
		{"::ffff:127.0.0.1", "127.0.0.1", Address, 0},
		{"[::ffff:7f00:1]:8443", "127.0.0.1:8443", Address, 8443},
		{"2001:DB8::1", "2001:db8::1", Address, 0},
		{"x.com:65535", "x.com:65535", Name, 65535},
		{"x.com:1", "x.com:1", Name, 1},
	} {
		p, err := Parse(c.entry)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.entry, err)
			continue
		}
		if p.String() != c.want || p.Kind() != c.kind || p.Port() != c.port {
			t.Errorf("Parse(%q) = %q kind %d port %d, want %q kind %d port %d", c.entry, p, p.Kind(), p.Port(), c.want, c.kind, c.port)
		}
		again, err := Parse(p.String())
		if err != nil || again != p {
			t.Errorf("Parse(%q) does not read back %q: %v, %v", p, c.entry, again, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ entry, says string }{
		{"", "is empty"},
		{"  ", "is empty"},
		{" github.com", "spaces"},
		{"https://github.com", "scheme (https://)"},
		{"github.com/owner", "a path"},
		{"10.0.0.0/8", "ranges are not allowed"},
		{"fc00::/7", "ranges are not allowed"},
		{"user@github.com", "a URL"},
		{"github.com?x", "a URL"},
		{"a..b.com", "empty label"},
		{".github.com", "empty label"},
		{"github.com..", "empty label"},
		{"*", "every host"},
		{"*.com", "top-level domain"},
		{"*.internal", "top-level domain"},
		{"*.co.uk", "public suffix"},
		{"*.", "no host"},
		{"a.*.com", "first label"},
		{"*github.com", "first label"},
		{"*.*.github.com", "second wildcard"},
		{"gith*b.com", "first label"},
		{"github.com:0", "out of range"},
		{"github.com:65536", "out of range"},
		{"github.com:99999999999999999999", "out of range"},
		{"github.com:", "no port"},
		{"github.com:https", "not a number"},
		{"github.com:+443", "not a number"},
		{"github.com:0443", "leading zero"},
		{"[::1]:0", "out of range"},
		{"[::1", "without its ]"},
		{"[::1]443", "not a :port"},
		{"[127.0.0.1]", "not an IPv6 address"},
		{"fe80::1%eth0", "zone"},
		{"[fe80::1%25eth0]", "zone"},
		{"127.1", "four decimal numbers"},
		{"2130706433", "four decimal numbers"},
		{"0x7f.1", "four decimal numbers"},
		{"0x7F000001", "four decimal numbers"},
		{"0177.0.0.1", "four decimal numbers"},
		{"127.0.0.1.", "four decimal numbers"},
		{"１２７．０．０．１", "four decimal numbers"},
		{"1.2.3.4.5", "four decimal numbers"},
		{"*.1.2.3", "four decimal numbers"},
		{"a_b.example.com", "not a valid host name"},
		{"-a.example.com", "not a valid host name"},
		{"xn--zz.com", "not a valid host name"},
		{"a\nb.com", "not a valid host name"},
		{strings.Repeat("a", 64) + ".com", "the most is 63"},
		{strings.Repeat("abcdefghi.", 26) + "com", "the most is 253"},
		{"1:2:3", "not an IPv6 address"},
		{"0\xff.com", "not UTF-8"},
	} {
		_, err := Parse(c.entry)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error saying %q", c.entry, c.says)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.says) {
			t.Errorf("Parse(%q) = %q, want it to say %q", c.entry, msg, c.says)
		}
		if !strings.Contains(msg, strconv.Quote(c.entry)) {
			t.Errorf("Parse(%q) = %q, which does not name the entry", c.entry, msg)
		}
	}
}

func TestZeroPatternMatchesNothing(t *testing.T) {
	var z Pattern
	if z.String() != "" {
		t.Errorf("zero Pattern reads %q", z)
	}
	p := New(z)
	if d := p.JudgeName("github.com", 443); d.Allowed {
		t.Errorf("a policy of the zero Pattern allowed: %s", d.Reason)
	}
	if len(p.Patterns()) != 0 {
		t.Errorf("the zero Pattern is listed: %v", p.Patterns())
	}
}
