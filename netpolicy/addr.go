package netpolicy

import "net/netip"

// special is a range of addresses a name may not lead to unless the list
// names the address itself: each reaches this machine, its network, or
// nowhere on the internet, which is where a rebinding name would point a
// command. IPv4 is judged by this list (nearly all of its space is
// global); IPv6 only within 2000::/3, the global unicast space, by the
// same list (addressClass).
type special struct {
	prefix netip.Prefix
	what   string // worded to follow "a" or "an": "a loopback address"
}

var specials = func() []special {
	rows := []struct{ prefix, what string }{
		// The cloud metadata service comes first, so a reason names it
		// rather than its link-local range.
		{"169.254.169.254/32", "cloud metadata address"},
		{"0.0.0.0/8", `"this network" address`},
		{"10.0.0.0/8", "private address (RFC 1918)"},
		{"100.64.0.0/10", "carrier-grade NAT address (RFC 6598)"},
		{"127.0.0.0/8", "loopback address"},
		{"169.254.0.0/16", "link-local address"},
		{"172.16.0.0/12", "private address (RFC 1918)"},
		{"192.0.0.0/24", "IETF protocol address (RFC 6890)"},
		{"192.0.2.0/24", "documentation address"},
		{"192.88.99.0/24", "6to4 relay address"},
		{"192.168.0.0/16", "private address (RFC 1918)"},
		{"198.18.0.0/15", "benchmarking address"},
		{"198.51.100.0/24", "documentation address"},
		{"203.0.113.0/24", "documentation address"},
		{"224.0.0.0/4", "multicast address"},
		{"240.0.0.0/4", "reserved or broadcast address"},
		{"::/128", "unspecified address"},
		{"::1/128", "loopback address"},
		{"fc00::/7", "private address (unique local, fc00::/7)"},
		{"fe80::/10", "link-local address"},
		{"ff00::/8", "multicast address"},
		{"64:ff9b:1::/48", "local NAT64 address"},
		{"2001::/32", "Teredo address"},
		{"2001::/23", "IETF protocol address (RFC 6890)"},
		{"2001:db8::/32", "documentation address"},
		{"2002::/16", "6to4 address, which carries an IPv4 address inside"},
		{"3fff::/20", "documentation address"},
	}
	out := make([]special, len(rows))
	for i, r := range rows {
		out[i] = special{netip.MustParsePrefix(r.prefix), r.what}
	}
	return out
}()

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	global6    = netip.MustParsePrefix("2000::/3")
	unspecific = "address outside the global internet"
)

// addressClass says why a name may not lead to a, or "" when a is an
// ordinary global address. a must be unmapped and have no zone.
func addressClass(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid address"
	}
	for _, s := range specials {
		if s.prefix.Contains(a) {
			return s.what
		}
	}
	if a.Is4() {
		return ""
	}
	// The well-known NAT64 prefix carries an IPv4 address in its last
	// four bytes, which a gateway reaches on the command's behalf: judge
	// that address.
	if nat64.Contains(a) {
		b := a.As16()
		in := netip.AddrFrom4([4]byte(b[12:]))
		if c := addressClass(in); c != "" {
			return "NAT64 form of " + in.String() + ", " + article(c) + " " + c
		}
		return ""
	}
	// Outside 2000::/3 IPv6 is not global unicast (IPv4-compatible
	// ::a.b.c.d, discard-only 100::/64, the deprecated site-local
	// fec0::/10 and what is not yet assigned).
	if !global6.Contains(a) {
		return unspecific
	}
	return ""
}

// article is "a" or "an" for a class's wording.
func article(what string) string {
	switch what[0] {
	case 'a', 'e', 'i', 'o', 'u', 'I':
		return "an"
	}
	return "a"
}
