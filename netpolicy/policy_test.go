package netpolicy

import (
	"net/netip"
	"os"
	"strings"
	"testing"
)

// issueList is the allow-list issue 31's Interface gives.
var issueList = []string{"github.com", "*.githubusercontent.com", "api.anthropic.com:443", "127.0.0.1:8443"}

func mustList(t testing.TB, entries ...string) *Policy {
	t.Helper()
	p, err := ParseList(entries)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

const public = "140.82.112.3" // an ordinary global address

func TestJudge(t *testing.T) {
	p := mustList(t, append(issueList, "[::1]:443", "10.1.2.3", "ssh.example.com:22", "münchen.de")...)
	for _, c := range []struct {
		host  string
		port  int
		addrs []netip.Addr
		allow bool
		says  string // in the reason
	}{
		// names
		{"github.com", 443, addrs(public), true, "allowed by github.com"},
		{"GitHub.com.", 80, addrs(public), true, "allowed by github.com"},
		{"github.com", 22, addrs(public), false, "ports 80 and 443 only"},
		{"api.github.com", 443, addrs(public), false, "api.github.com is not on the network allow-list"},
		{"evil.com", 443, addrs(public), false, "Allowed: github.com (ports 80 and 443); *.githubusercontent.com (ports 80 and 443); api.anthropic.com:443;"},
		{"api.anthropic.com", 443, addrs(public), true, "allowed by api.anthropic.com:443"},
		{"api.anthropic.com", 80, addrs(public), false, "port 443 only"},
		{"ssh.example.com", 22, addrs(public), true, ""},
		{"ssh.example.com", 443, addrs(public), false, "port 22 only"},
		{"xn--mnchen-3ya.de", 443, addrs(public), true, "allowed by xn--mnchen-3ya.de"},
		{"MÜNCHEN.de", 443, addrs(public), true, ""},
		// wildcards: any depth below, never the bare domain
		{"raw.githubusercontent.com", 443, addrs(public), true, "allowed by *.githubusercontent.com"},
		{"a.b.c.githubusercontent.com", 443, addrs(public), true, ""},
		{"githubusercontent.com", 443, addrs(public), false, "not on the network allow-list"},
		{"evilgithubusercontent.com", 443, addrs(public), false, "not on the network allow-list"},
		{"githubusercontent.com.evil.com", 443, addrs(public), false, ""},
		// a name must resolve, and each address is judged
		{"github.com", 443, nil, false, "resolved to no address"},
		{"github.com", 443, addrs(public, "127.0.0.1"), false, "127.0.0.1, a loopback address"},
		{"github.com", 443, addrs("10.0.0.5"), false, "private address"},
		{"github.com", 443, addrs("192.168.1.1"), false, "private address"},
		{"github.com", 443, addrs("172.31.255.255"), false, "private address"},
		{"github.com", 443, addrs("100.64.0.1"), false, "carrier-grade NAT"},
		{"github.com", 443, addrs("169.254.169.254"), false, "cloud metadata address"},
		{"github.com", 443, addrs("169.254.1.1"), false, "link-local"},
		{"github.com", 443, addrs("0.0.0.0"), false, "this network"},
		{"github.com", 443, addrs("224.0.0.1"), false, "multicast"},
		{"github.com", 443, addrs("255.255.255.255"), false, "broadcast"},
		{"github.com", 443, addrs("::"), false, "unspecified"},
		{"github.com", 80, addrs("::1"), false, "::1, a loopback address"}, // listed as [::1]:443 only
		{"github.com", 443, addrs("fd00::1"), false, "unique local"},
		{"github.com", 443, addrs("fe80::1"), false, "link-local"},
		{"github.com", 443, addrs("fe80::1%eth0"), false, "one interface"},
		{"github.com", 443, addrs("ff02::1"), false, "multicast"},
		{"github.com", 443, addrs("::ffff:127.0.0.1"), false, "127.0.0.1, a loopback address"},
		{"github.com", 443, addrs("::ffff:169.254.169.254"), false, "metadata"},
		{"github.com", 443, addrs("::127.0.0.1"), false, "outside the global internet"}, // IPv4-compatible
		{"github.com", 443, addrs("64:ff9b::7f00:1"), false, "NAT64 form of 127.0.0.1, a loopback address"},
		{"github.com", 443, addrs("64:ff9b::8c52:7003"), true, ""}, // NAT64 of a public address
		{"github.com", 443, addrs("2002:7f00:1::"), false, "6to4"},
		{"github.com", 443, addrs("2001::1"), false, "Teredo"},
		{"github.com", 443, addrs("fec0::1"), false, "outside the global internet"},
		{"github.com", 443, addrs("2606:50c0:8000::153"), true, ""},
		{"github.com", 443, []netip.Addr{{}}, false, "invalid address"},
		// a special address is reached by name only when listed as itself, port included
		{"localhost", 8443, addrs("127.0.0.1"), false, "localhost is not on the network allow-list"},
		{"x.githubusercontent.com", 8443, addrs("127.0.0.1"), false, "ports 80 and 443 only"},
		{"x.githubusercontent.com", 443, addrs("127.0.0.1"), false, "(as 127.0.0.1:443)"},
		{"x.githubusercontent.com", 443, addrs("::1"), true, ""},
		{"x.githubusercontent.com", 443, addrs("::ffff:10.1.2.3"), true, ""},
		// addresses as the host: listed as themselves, whatever their class
		{"127.0.0.1", 8443, nil, true, "allowed by 127.0.0.1:8443"},
		{"127.0.0.1", 8443, addrs("127.0.0.1"), true, ""},
		{"::ffff:127.0.0.1", 8443, nil, true, ""},
		{"[::ffff:127.0.0.1]", 8443, nil, true, ""},
		{"127.0.0.1", 8080, nil, false, "port 8443 only"},
		{"127.0.0.2", 8443, nil, false, "127.0.0.2 is not on the network allow-list"},
		{"127.0.0.1", 8443, addrs("10.1.2.3"), false, "would reach 10.1.2.3"},
		{"::1", 443, nil, true, "allowed by [::1]:443"},
		{"[::1]", 443, nil, true, ""},
		{"0:0:0:0:0:0:0:1", 443, nil, true, ""},
		{"::1", 80, nil, false, "port 443 only"},
		{"10.1.2.3", 80, nil, true, ""},
		{"10.1.2.3", 8080, nil, false, "ports 80 and 443 only"},
		{public, 443, nil, false, "not on the network allow-list"},
		{"fe80::1%eth0", 443, nil, false, "zone"},
		// odd forms of an address are no host
		{"127.1", 8443, nil, false, "four decimal numbers"},
		{"2130706433", 8443, nil, false, "four decimal numbers"},
		{"0x7f.0.0.1", 8443, nil, false, "four decimal numbers"},
		{"0177.0.0.1", 8443, nil, false, "four decimal numbers"},
		{"１２７．０．０．１", 8443, nil, false, "four decimal numbers"},
		{"127.0.0.1.", 8443, nil, false, "four decimal numbers"},
		// malformed
		{"", 443, nil, false, "no host"},
		{"github.com", 0, addrs(public), false, "out of range"},
		{"github.com", 65536, addrs(public), false, "out of range"},
		{"github.com", -1, addrs(public), false, "out of range"},
		{"git\nhub.com", 443, addrs(public), false, `"git\nhub.com":443`},
		{"a..github.com", 443, addrs(public), false, "empty label"},
		{"*.githubusercontent.com", 443, addrs(public), false, "not a valid host name"},
	} {
		d := p.Judge(c.host, c.port, c.addrs)
		if d.Allowed != c.allow || !strings.Contains(d.Reason, c.says) {
			t.Errorf("Judge(%q, %d, %v) = %v %q, want %v and a reason saying %q", c.host, c.port, c.addrs, d.Allowed, d.Reason, c.allow, c.says)
		}
		if d.Allowed != (d.Pattern != "") {
			t.Errorf("Judge(%q, %d, %v): allowed %v but pattern %q", c.host, c.port, c.addrs, d.Allowed, d.Pattern)
		}
		if strings.ContainsAny(d.Reason, "\n\r\x00") {
			t.Errorf("Judge(%q): reason %q holds a control", c.host, d.Reason)
		}
		if !d.Allowed && !strings.Contains(d.Reason, "Allowed: github.com") {
			t.Errorf("Judge(%q, %d): refusal %q does not say where it may connect", c.host, c.port, d.Reason)
		}
	}
}

func TestJudgeName(t *testing.T) {
	p := mustList(t, issueList...)
	for _, c := range []struct {
		host  string
		port  int
		allow bool
	}{
		{"github.com", 443, true},
		{"raw.githubusercontent.com", 443, true},
		{"evil.com", 443, false}, // never resolved
		{"github.com", 22, false},
		{"127.0.0.1", 8443, true},
		{"127.0.0.1", 443, false},
		{"127.1", 8443, false},
	} {
		if d := p.JudgeName(c.host, c.port); d.Allowed != c.allow {
			t.Errorf("JudgeName(%q, %d) = %v %q, want %v", c.host, c.port, d.Allowed, d.Reason, c.allow)
		}
	}
	// Allowed by name is not allowed: the addresses are judged after.
	if d := p.Judge("github.com", 443, addrs("127.0.0.1")); d.Allowed {
		t.Errorf("a rebinding name was allowed: %s", d.Reason)
	}
}

func TestEmptyAndNilPolicyAllowNothing(t *testing.T) {
	for name, p := range map[string]*Policy{"nil": nil, "zero": {}, "empty": New(), "empty list": mustList(t)} {
		for _, d := range []Decision{p.Judge("github.com", 443, addrs(public)), p.JudgeName("github.com", 443), p.Judge("127.0.0.1", 80, nil), p.JudgeUDP("github.com", 53)} {
			if d.Allowed || !strings.Contains(d.Reason, "allow-list is empty") {
				t.Errorf("%s policy: %v %q", name, d.Allowed, d.Reason)
			}
		}
	}
}

func TestJudgeUDP(t *testing.T) {
	p := mustList(t, issueList...)
	for _, h := range []string{"github.com", "127.0.0.1", "8.8.8.8"} {
		for _, port := range []int{53, 443, 8443} {
			d := p.JudgeUDP(h, port)
			if d.Allowed || !strings.Contains(d.Reason, "UDP") || !strings.Contains(d.Reason, "Allowed: github.com") {
				t.Errorf("JudgeUDP(%q, %d) = %v %q", h, port, d.Allowed, d.Reason)
			}
		}
	}
}

func TestParseListNamesEveryBadEntry(t *testing.T) {
	_, err := ParseList([]string{"github.com", "https://x.com", "ok.com", "a..b", "*"})
	if err == nil {
		t.Fatal("a list with bad entries parsed")
	}
	for _, e := range []string{`"https://x.com"`, `"a..b"`, `"*"`} {
		if !strings.Contains(err.Error(), e) {
			t.Errorf("error %q does not name %s", err, e)
		}
	}
	if strings.Contains(err.Error(), "ok.com") {
		t.Errorf("error %q names a good entry", err)
	}
}

func TestReasonListIsBounded(t *testing.T) {
	var entries []string
	for i := range 50 {
		entries = append(entries, "h"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+".example.com")
	}
	d := mustList(t, entries...).Judge("evil.com", 443, addrs(public))
	if !strings.Contains(d.Reason, "and 30 more") || strings.Count(d.Reason, ";") != 20 {
		t.Errorf("reason lists %d entries: %q", strings.Count(d.Reason, ";"), d.Reason)
	}
}

// TestSpecialsAgreeWithNetip holds the table to the standard library's
// own classes: every address netip calls loopback, private, link-local,
// multicast or unspecified is one a name may not lead to.
func TestSpecialsAgreeWithNetip(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "127.255.255.254", "10.0.0.0", "172.16.0.1", "192.168.255.255", "169.254.0.1", "224.0.0.251", "239.255.255.250", "0.0.0.0", "::", "::1", "fc00::1", "fdff::1", "fe80::abcd", "ff05::2", "ff01::1"} {
		a := netip.MustParseAddr(s)
		if !oracleSpecial(a) {
			t.Fatalf("the oracle misses %s", a)
		}
		if addressClass(a) == "" {
			t.Errorf("%s is ordinary to addressClass", a)
		}
	}
	for _, s := range []string{public, "8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001::200e"} {
		if c := addressClass(netip.MustParseAddr(s)); c != "" {
			t.Errorf("%s is %q, want ordinary", s, c)
		}
	}
}

// oracleSpecial says, by netip's predicates and the two ranges netip has
// none for, whether an address is one the issue names as refused to a
// name. It is independent of the package's table, for the fuzz test.
func oracleSpecial(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() ||
		netip.MustParsePrefix("100.64.0.0/10").Contains(a) || a == netip.MustParseAddr("169.254.169.254") ||
		netip.MustParsePrefix("0.0.0.0/8").Contains(a)
}

// TestDocsExample holds docs/network.md's example refusal to the words
// Judge says.
func TestDocsExample(t *testing.T) {
	want := "connection to github.com:22 refused: github.com is allowed on ports 80 and 443 only (by github.com), not on port 22. Allowed: github.com (ports 80 and 443); api.anthropic.com:443."
	if d := mustList(t, "github.com", "api.anthropic.com:443").Judge("github.com", 22, addrs(public)); d.Reason != want {
		t.Errorf("reason %q, want %q", d.Reason, want)
	}
	doc, err := os.ReadFile("../docs/network.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "    "+want+"\n") {
		t.Error("docs/network.md does not show the reason Judge gives")
	}
}
