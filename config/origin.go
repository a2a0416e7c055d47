package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// HTTP holds the [http] settings that are the server's rather than an
// agent's (each agent's token source is its Policy's).
type HTTP struct {
	// Origins are the Origins a request to `serve --http` may carry
	// besides the server's own ([http] origins), in the config's order.
	Origins []Origin
	// MaxBody ([http] max_body) is the most bytes one request body over
	// HTTP, or one message over stdio, may hold; a larger one is refused
	// as it arrives, before it is held whole.
	MaxBody int64
}

// DefaultMaxBody is [http] max_body's default. The largest legitimate
// message is a write of a big note: read returns a note whole up to 10 MiB,
// and JSON escaping (quotes, backslashes, control characters) makes the
// message longer than the note, so 16 MiB carries a write of any note read
// returns whole, with room, while a runaway body stops far short of memory.
const DefaultMaxBody = 16 << 20

// Origin is a web origin as RFC 6454 compares them: scheme, host and port,
// each in one spelling, so two equal origins are equal values.
type Origin struct {
	Scheme string // "http" or "https"
	Host   string // lower case; an IPv6 address without brackets, in its RFC 5952 form
	Port   int    // always set: 80 or 443 when the text gave none
}

// String is the origin with its port always written, IPv6 in brackets.
func (o Origin) String() string {
	host := o.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return o.Scheme + "://" + host + ":" + strconv.Itoa(o.Port)
}

// ParseOrigin reads an origin as a browser sends it in an Origin header and
// as [http] origins lists it: scheme://host[:port], the scheme http or
// https, nothing after the port. It is the one reader of an origin: the
// config's list, the request's Origin and the server's own (its Host) are
// all read by it, so they are compared in one spelling. "null" (an opaque
// origin) is no origin at all.
func ParseOrigin(s string) (Origin, error) {
	if s == "null" {
		return Origin{}, errors.New(`"null" is an opaque origin: it can't be told apart from any other`)
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Origin{}, fmt.Errorf("%q: want scheme://host[:port], as in \"http://localhost:6274\"", s)
	}
	var o Origin
	switch strings.ToLower(scheme) {
	case "http":
		o.Scheme, o.Port = "http", 80
	case "https":
		o.Scheme, o.Port = "https", 443
	default:
		return Origin{}, fmt.Errorf("%q: the scheme must be http or https", s)
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return Origin{}, fmt.Errorf("%q: an origin has no path, query or fragment (drop %q)", s, rest[i:])
	}
	host, port, err := splitHostPort(rest)
	if err != nil {
		return Origin{}, fmt.Errorf("%q: %w", s, err)
	}
	o.Host = host
	if port != "" {
		o.Port = port16(port)
		if o.Port == 0 {
			return Origin{}, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
	}
	return o, nil
}

// splitHostPort splits an origin's authority (a Host header's too) into its
// host, lower-cased and checked, and the port as written ("" when none).
func splitHostPort(a string) (host, port string, err error) {
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", "", errors.New("an IPv6 address without its closing ]")
		}
		ip, err := netip.ParseAddr(a[1:end])
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", "", fmt.Errorf("%q between [ ] is not an IPv6 address", a[1:end])
		}
		host, a = ip.String(), a[end+1:]
		if a != "" && !strings.HasPrefix(a, ":") {
			return "", "", fmt.Errorf("%q after the address: want :port", a)
		}
	} else {
		i := strings.IndexByte(a, ':')
		if i < 0 {
			i = len(a)
		}
		host, a = strings.ToLower(a[:i]), a[i:]
		if strings.Contains(a[min(1, len(a)):], ":") {
			return "", "", errors.New("an IPv6 address goes in brackets, as in http://[::1]:6274")
		}
		if host == "" {
			return "", "", errors.New("no host")
		}
		for _, c := range host {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
				return "", "", fmt.Errorf("%q is not a host name (write a name that is not ASCII as the browser does, in punycode)", host)
			}
		}
	}
	if a == "" {
		return host, "", nil
	}
	if a == ":" {
		return "", "", errors.New("a colon with no port after it")
	}
	return host, a[1:], nil
}

// port16 is a port number written in decimal digits only, or 0.
func port16(s string) int {
	if len(s) == 0 || len(s) > 5 {
		return 0
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
	}
	n, _ := strconv.Atoi(s)
	if n > 65535 {
		return 0
	}
	return n
}
