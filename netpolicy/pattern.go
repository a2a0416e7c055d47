package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// webPorts are the ports a pattern without a port matches. Not every
// port: a host's other services (a mail relay, an open proxy, a database)
// can carry data further than the host the person meant to trust, and a
// proxy in the field does the same (Squid lets CONNECT reach 443 alone by
// default). A person who means git over ssh writes github.com:22.
var webPorts = [...]int{80, 443}

// Kind is what a pattern names.
type Kind uint8

const (
	// Name is one host name: github.com.
	Name Kind = iota + 1
	// Wildcard is every name below a domain, at any depth:
	// *.githubusercontent.com. Never the domain itself.
	Wildcard
	// Address is one IP address: 127.0.0.1, ::1.
	Address
)

// Pattern is one entry of an allow-list, as Parse reads it. Its zero value
// matches nothing.
type Pattern struct {
	kind Kind
	name string     // Name: the host; Wildcard: the domain below "*."; ASCII, lower case, no trailing dot
	addr netip.Addr // Address: unmapped, no zone
	port int        // 0: the web ports
}

// Kind says what the pattern names.
func (p Pattern) Kind() Kind { return p.kind }

// Port is the one port the pattern allows, or 0 when it allows the web
// ports (80 and 443).
func (p Pattern) Port() int { return p.port }

// String is the pattern's canonical form, which Parse reads back as the
// same pattern: names in their IDNA ASCII form (punycode), so two
// spellings of one name read alike and a look-alike letter shows.
func (p Pattern) String() string {
	var host string
	switch p.kind {
	case Name:
		host = p.name
	case Wildcard:
		host = "*." + p.name
	case Address:
		host = p.addr.String()
		if p.addr.Is6() && p.port != 0 {
			host = "[" + host + "]"
		}
	default:
		return ""
	}
	if p.port != 0 {
		return fmt.Sprintf("%s:%d", host, p.port)
	}
	return host
}

// ports words the ports a pattern allows, for a reason.
func (p Pattern) ports() string {
	if p.port != 0 {
		return fmt.Sprintf("port %d", p.port)
	}
	return "ports 80 and 443"
}

// allowsPort says whether the pattern lets a connection reach port.
func (p Pattern) allowsPort(port int) bool {
	if p.port != 0 {
		return port == p.port
	}
	for _, w := range webPorts {
		if port == w {
			return true
		}
	}
	return false
}

// Parse reads one allow-list entry: a host name, "*." and a domain, or an
// IP address, each with an optional ":port" (an IPv6 address takes a port
// only in brackets, "[::1]:443", since "::1:443" is itself an address). The
// error names the entry and says what is wrong with it.
func Parse(entry string) (Pattern, error) {
	p, err := parse(entry)
	if err != nil {
		return Pattern{}, fmt.Errorf("network allow entry %q: %w", entry, err)
	}
	return p, nil
}

func parse(entry string) (Pattern, error) {
	if strings.TrimSpace(entry) == "" {
		return Pattern{}, errors.New("is empty")
	}
	if strings.TrimSpace(entry) != entry {
		return Pattern{}, errors.New("has spaces around it")
	}
	if i := strings.Index(entry, "://"); i >= 0 {
		return Pattern{}, fmt.Errorf("has a scheme (%s://); write the host alone, as in github.com", entry[:i])
	}
	if strings.Contains(entry, "/") {
		if _, err := netip.ParsePrefix(entry); err == nil {
			return Pattern{}, errors.New("is an address range; ranges are not allowed, list each address by itself")
		}
		return Pattern{}, errors.New("has a path; write the host alone, as in github.com")
	}
	if strings.ContainsAny(entry, "@?#") {
		return Pattern{}, errors.New("is a URL, not a host; write the host alone, as in github.com")
	}
	host, port, err := splitPort(entry)
	if err != nil {
		return Pattern{}, err
	}
	if host == "*" {
		return Pattern{}, errors.New(`is "*", which would allow every host; that is network = "host", not a pattern`)
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		if strings.Contains(rest, "*") {
			return Pattern{}, errors.New("has a second wildcard; a wildcard may only be the whole first label, as in *.example.com")
		}
		name, err := normalName(rest)
		if err != nil {
			return Pattern{}, err
		}
		if !strings.Contains(name, ".") {
			return Pattern{}, fmt.Errorf("has a wildcard over the top-level domain %q, which would allow most of the internet", name)
		}
		if ps, icann := publicsuffix.PublicSuffix(name); icann && ps == name {
			return Pattern{}, fmt.Errorf("has a wildcard over the public suffix %q, under which anyone can register a name", name)
		}
		return Pattern{kind: Wildcard, name: name, port: port}, nil
	}
	if strings.Contains(host, "*") {
		return Pattern{}, errors.New("has a wildcard that is not the whole first label; a wildcard may only be written *.example.com")
	}
	h, err := readHost(host)
	if err != nil {
		return Pattern{}, err
	}
	if h.name == "" {
		return Pattern{kind: Address, addr: h.addr, port: port}, nil
	}
	return Pattern{kind: Name, name: h.name, port: port}, nil
}

// splitPort splits an entry into its host and port (0 when it has none).
func splitPort(entry string) (string, int, error) {
	if rest, ok := strings.CutPrefix(entry, "["); ok {
		inner, after, ok := strings.Cut(rest, "]")
		if !ok {
			return "", 0, errors.New("has a [ without its ]")
		}
		if after == "" {
			return "[" + inner + "]", 0, nil
		}
		p, ok := strings.CutPrefix(after, ":")
		if !ok {
			return "", 0, errors.New("has something after ] that is not a :port")
		}
		port, err := parsePort(p)
		return "[" + inner + "]", port, err
	}
	switch strings.Count(entry, ":") {
	case 0:
		return entry, 0, nil
	case 1:
		host, p, _ := strings.Cut(entry, ":")
		port, err := parsePort(p)
		return host, port, err
	default:
		// A bare IPv6 address: it has no port.
		return entry, 0, nil
	}
}

// parsePort reads a port as plain decimal, 1 to 65535: no sign, no
// leading zero, nothing a reader could take for another number.
func parsePort(s string) (int, error) {
	if s == "" {
		return 0, errors.New("has a : with no port after it")
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("has the port %q, which is not a number", s)
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			return 0, fmt.Errorf("has the port %s, out of range (1 to 65535)", s)
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("has the port %s, out of range (1 to 65535)", s)
	}
	if s[0] == '0' {
		return 0, fmt.Errorf("has the port %q with a leading zero; write %d", s, n)
	}
	return n, nil
}

// host is a host as readHost reads it: an address, or a name.
type host struct {
	addr netip.Addr // set when the host is an IP address
	name string     // set when it is a name: IDNA ASCII, lower case, no trailing dot
}

// readHost reads a host, a pattern's or a connection's: an IP address
// (IPv6 bare or in brackets, an IPv4-mapped IPv6 address as its IPv4
// address) or a name. It is the one reading of a host, so a pattern and a
// connection can't read one host two ways.
func readHost(s string) (host, error) {
	if inner, ok := strings.CutPrefix(s, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return host{}, errors.New("has a [ without its ]")
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return host{}, fmt.Errorf("has %q in brackets, which is not an IPv6 address", inner)
		}
		return addrHost(a)
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return addrHost(a)
	}
	if strings.Contains(s, ":") {
		return host{}, fmt.Errorf("has %q, which is not an IPv6 address", s)
	}
	name, err := normalName(s)
	if err != nil {
		return host{}, err
	}
	return host{name: name}, nil
}

func addrHost(a netip.Addr) (host, error) {
	if a.Zone() != "" {
		return host{}, fmt.Errorf("has the IPv6 zone %%%s, which names an interface of this machine; write the address alone", a.Zone())
	}
	return host{addr: a.Unmap()}, nil
}

// normalName makes a host name comparable: its IDNA ASCII form (UTS 46
// lookup: case folded, Unicode and punycode spellings alike, width
// variants and ideographic full stops mapped), one trailing dot dropped.
// It refuses what is no host name: an empty label, a label longer than 63
// bytes or a name longer than 253, a character a host name can't hold
// (UTS 46's STD3 rules: letters, digits and hyphens), and a name whose
// last label is a number, which programs read as an IPv4 address in a
// short, octal, hex or whole-number form (127.1, 0x7f.1, 2130706433).
func normalName(s string) (string, error) {
	if s == "" {
		return "", errors.New("has no host")
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("has %q, which is not UTF-8", s)
	}
	a, err := idna.Lookup.ToASCII(s)
	if err != nil {
		return "", fmt.Errorf("has %q, which is not a valid host name (%v)", s, err)
	}
	// The ASCII form must be its own ASCII form, or a pattern's canonical
	// form would read as another name, or as none.
	if again, err := idna.Lookup.ToASCII(a); err != nil || again != a {
		return "", fmt.Errorf("has %q, which is not a valid host name (its ASCII form %q does not read back)", s, a)
	}
	a = strings.TrimSuffix(a, ".")
	if len(a) > 253 {
		return "", fmt.Errorf("has a host name of %d characters; the most is 253", len(a))
	}
	labels := strings.Split(a, ".")
	for _, l := range labels {
		if l == "" {
			return "", fmt.Errorf("has %q, a host name with an empty label", s)
		}
		if len(l) > 63 {
			return "", fmt.Errorf("has a label of %d characters in %q; the most is 63", len(l), s)
		}
	}
	if numeric(labels[len(labels)-1]) {
		return "", fmt.Errorf("has %q, which some programs read as an IPv4 address in a short, octal, hex or whole-number form; write the address as four decimal numbers, as in 127.0.0.1", s)
	}
	return a, nil
}

// numeric says whether a label is a number as the WHATWG URL parser's
// "ends in a number" reads one: decimal digits, or 0x and hex digits. No
// top-level domain is one, and a name ending so is an address in disguise.
func numeric(l string) bool {
	if h, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return l != "" && strings.Trim(l, "0123456789") == ""
}
