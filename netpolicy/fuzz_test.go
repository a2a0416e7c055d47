package netpolicy

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range append(issueList, "", "*", "*.com", "[::1]:443", "::ffff:127.0.0.1", "127.1", "https://x.com/y", "münchen.de.", "a..b", "x.com:0443", "1.2.3.4/8", "[fe80::1%eth0]:1") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		p, err := Parse(entry)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "network allow entry ") {
				t.Fatalf("Parse(%q): error %q does not name the entry", entry, err)
			}
			return
		}
		s := p.String()
		if s == "" || strings.ContainsAny(s, " \t\n\r") {
			t.Fatalf("Parse(%q) = %q", entry, s)
		}
		again, err := Parse(s)
		if err != nil || again != p {
			t.Fatalf("Parse(%q) = %q, which reads back as %v, %v", entry, s, again, err)
		}
		if p.kind == Address && (p.addr.Is4In6() || p.addr.Zone() != "") {
			t.Fatalf("Parse(%q) kept a mapped or zoned address %s", entry, p.addr)
		}
	})
}

func FuzzJudge(f *testing.F) {
	list := strings.Join(issueList, ",")
	for _, c := range []struct {
		list, host string
		port       int
		addrs      string
	}{
		{list, "github.com", 443, public},
		{list, "github.com", 443, "127.0.0.1"},
		{list, "github.com", 8443, "127.0.0.1"},
		{list, "raw.githubusercontent.com", 443, "::ffff:10.0.0.1,8.8.8.8"},
		{list, "127.0.0.1", 8443, ""},
		{list, "::ffff:127.0.0.1", 8443, "127.0.0.1"},
		{list + ",*.example.com,10.0.0.1", "a.example.com", 443, "10.0.0.1"},
		{list, "127.1", 8443, ""},
		{list, "github.com", 443, "64:ff9b::a9fe:a9fe"},
		{"", "github.com", 443, public},
	} {
		f.Add(c.list, c.host, c.port, c.addrs)
	}
	f.Fuzz(func(t *testing.T, list, hostArg string, port int, addrList string) {
		var pats []Pattern
		for _, e := range strings.Split(list, ",") {
			if pt, err := Parse(e); err == nil {
				pats = append(pats, pt)
			}
		}
		var as []netip.Addr
		for _, s := range strings.Split(addrList, ",") {
			if a, err := netip.ParseAddr(s); err == nil {
				as = append(as, a)
			}
		}
		p := New(pats...)
		listed := func(a netip.Addr) bool {
			for _, pt := range pats {
				if pt.kind == Address && pt.addr == a.Unmap() && pt.allowsPort(port) {
					return true
				}
			}
			return false
		}
		for _, d := range []Decision{p.Judge(hostArg, port, as), p.JudgeName(hostArg, port), p.JudgeUDP(hostArg, port)} {
			if d.Reason == "" || strings.ContainsAny(d.Reason, "\n\r\x00") {
				t.Fatalf("reason %q", d.Reason)
			}
		}
		if d := p.JudgeUDP(hostArg, port); d.Allowed {
			t.Fatalf("UDP allowed: %s", d.Reason)
		}
		d := p.Judge(hostArg, port, as)
		if !d.Allowed {
			return
		}
		if port < 1 || port > 65535 {
			t.Fatalf("port %d allowed: %s", port, d.Reason)
		}
		if !strings.Contains(fmt.Sprint(pats), d.Pattern) || d.Pattern == "" {
			t.Fatalf("allowed by %q, which is not in %v", d.Pattern, pats)
		}
		h, err := readHost(hostArg)
		if err != nil {
			t.Fatalf("host %q allowed though it is no host: %v", hostArg, err)
		}
		if h.name == "" {
			if !listed(h.addr) {
				t.Fatalf("address %s allowed on %d though not listed as itself: %s", h.addr, port, d.Reason)
			}
			return
		}
		if len(as) == 0 {
			t.Fatalf("name %q allowed with no address", hostArg)
		}
		for _, a := range as {
			if a.Zone() != "" {
				t.Fatalf("zoned address %s allowed", a)
			}
			if oracleSpecial(a) && !listed(a) {
				t.Fatalf("%q allowed on %d to %s, a refused class not listed as itself: %s", hostArg, port, a, d.Reason)
			}
		}
	})
}

func BenchmarkJudge(b *testing.B) {
	entries := append([]string(nil), issueList...)
	for i := range 100 {
		entries = append(entries, fmt.Sprintf("host%d.example.com", i), fmt.Sprintf("*.zone%d.example.org", i))
	}
	p := mustList(b, entries...)
	pub, lo := addrs(public, "2606:50c0:8000::153"), addrs("127.0.0.1")
	for _, c := range []struct {
		name, host string
		port       int
		addrs      []netip.Addr
	}{
		{"name", "github.com", 443, pub},
		{"wildcard-deep", "a.b.c.d.zone77.example.org", 443, pub},
		{"address", "127.0.0.1", 8443, nil},
		{"refused-name", "evil.example.net", 443, pub},
		{"refused-rebind", "host5.example.com", 443, lo},
		{"unicode", "ＧＩＴＨＵＢ.com", 443, pub},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p.Judge(c.host, c.port, c.addrs)
			}
		})
	}
}
