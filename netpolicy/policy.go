package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Decision is the answer to one connection: allowed or not, and why, in
// words the model reads.
type Decision struct {
	Allowed bool
	// Reason says what allowed the connection, or why it was refused and
	// where the command may connect instead.
	Reason string
	// Pattern is the canonical form of the entry that allowed the
	// connection; empty when it was refused.
	Pattern string
}

// Policy is an allow-list, read once and asked many times. Its zero value
// and a nil *Policy allow nothing.
type Policy struct {
	patterns  []Pattern
	names     map[string][]Pattern     // Name patterns by name
	wildcards map[string][]Pattern     // Wildcard patterns by the domain below "*."
	addrs     map[netip.Addr][]Pattern // Address patterns by address
}

// New makes a policy of patterns, in the order given (the order reasons
// list them in).
func New(patterns ...Pattern) *Policy {
	p := &Policy{
		names:     map[string][]Pattern{},
		wildcards: map[string][]Pattern{},
		addrs:     map[netip.Addr][]Pattern{},
	}
	for _, pt := range patterns {
		switch pt.kind {
		case Name:
			p.names[pt.name] = append(p.names[pt.name], pt)
		case Wildcard:
			p.wildcards[pt.name] = append(p.wildcards[pt.name], pt)
		case Address:
			p.addrs[pt.addr] = append(p.addrs[pt.addr], pt)
		default:
			continue // the zero Pattern matches nothing
		}
		p.patterns = append(p.patterns, pt)
	}
	return p
}

// ParseList reads every entry of a list into a policy. An entry that does
// not parse fails the whole list, never drops out of it: the error names
// every bad entry.
func ParseList(entries []string) (*Policy, error) {
	var pats []Pattern
	var errs []error
	for _, e := range entries {
		pt, err := Parse(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		pats = append(pats, pt)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return New(pats...), nil
}

// Patterns are the policy's patterns, in order.
func (p *Policy) Patterns() []Pattern {
	if p == nil {
		return nil
	}
	return append([]Pattern(nil), p.patterns...)
}

// JudgeName answers whether a TCP connection to host and port may be
// made, before the host's name is resolved: a name the list does not
// allow must not reach a resolver at all, whose query would carry the
// name (and whatever a command encoded in it) out. Allowed here is not
// allowed: the connection still needs Judge, with the addresses.
func (p *Policy) JudgeName(host string, port int) Decision {
	return p.judge(host, port, nil, false)
}

// Judge answers whether a TCP connection to host and port may be made,
// host having resolved to addrs: the host must match a pattern with the
// port, and every address must be one the host may lead to. A name with
// no address is refused (there is nothing to connect to, and nothing
// checked). An IP address as the host needs no addrs; any given must be
// that address.
func (p *Policy) Judge(host string, port int, addrs []netip.Addr) Decision {
	return p.judge(host, port, addrs, true)
}

// JudgeUDP answers a UDP datagram: always refused. The proxy carries TCP
// streams, whose one connect is judged once; datagrams have no connect to
// judge, and UDP out is how DNS leaks data, so names are resolved by
// vaultgate, never by the command.
func (p *Policy) JudgeUDP(host string, port int) Decision {
	return Decision{Reason: fmt.Sprintf("UDP to %s refused: only TCP connections to the allowed hosts are made, and names are resolved for the command. %s", target(host, port), p.allowedList())}
}

func (p *Policy) judge(hostArg string, port int, addrs []netip.Addr, resolved bool) Decision {
	if p == nil {
		p = &Policy{}
	}
	h, herr := readHost(hostArg)
	to := wordTarget(h, herr, hostArg, port)
	refuse := func(format string, a ...any) Decision {
		return Decision{Reason: "connection to " + to + " refused: " + fmt.Sprintf(format, a...) + " " + p.allowedList()}
	}
	if port < 1 || port > 65535 {
		return refuse("the port %d is out of range (1 to 65535).", port)
	}
	if herr != nil {
		return refuse("its host %s.", herr)
	}
	if h.name == "" {
		return p.judgeAddress(h.addr, port, addrs, refuse)
	}
	match, portless := p.matchName(h.name, port)
	if match.kind == 0 {
		if portless.kind != 0 {
			return refuse("%s is allowed on %s only (by %s), not on port %d.", h.name, portless.ports(), portless, port)
		}
		return refuse("%s is not on the network allow-list.", h.name)
	}
	if !resolved {
		return Decision{Allowed: true, Reason: fmt.Sprintf("%s may be resolved: allowed by %s", h.name, match), Pattern: match.String()}
	}
	if len(addrs) == 0 {
		return refuse("%s resolved to no address.", h.name)
	}
	for _, a := range addrs {
		if a.Zone() != "" {
			return refuse("%s resolved to %s, an address scoped to one interface of this machine.", h.name, a)
		}
		a = a.Unmap()
		c := addressClass(a)
		if c == "" {
			continue
		}
		if lit := p.matchAddress(a, port); lit.kind == 0 {
			return refuse("%s resolved to %s, %s %s, which a name may lead to only when the allow-list names that address itself (as %s).", h.name, a, article(c), c, Pattern{kind: Address, addr: a, port: port})
		}
	}
	return Decision{Allowed: true, Reason: fmt.Sprintf("connection to %s allowed by %s", to, match), Pattern: match.String()}
}

// judgeAddress judges a connection whose host is an IP address: allowed
// only when listed as itself, whatever its class.
func (p *Policy) judgeAddress(a netip.Addr, port int, addrs []netip.Addr, refuse func(string, ...any) Decision) Decision {
	for _, b := range addrs {
		if b.Unmap() != a || b.Zone() != "" {
			return refuse("the host is the address %s, but the connection would reach %s.", a, b)
		}
	}
	lit := p.matchAddress(a, port)
	if lit.kind == 0 {
		if other := p.addrs[a]; len(other) > 0 {
			return refuse("the address %s is allowed on %s only (by %s), not on port %d.", a, other[0].ports(), other[0], port)
		}
		return refuse("the address %s is not on the network allow-list; an address is allowed only when the list names it.", a)
	}
	return Decision{Allowed: true, Reason: fmt.Sprintf("connection to %s allowed by %s", netip.AddrPortFrom(a, uint16(port)), lit), Pattern: lit.String()}
}

// matchName finds the pattern that allows name on port: an exact name
// first, then wildcards from the nearest domain up. When none does, the
// second result is one that matches the name on another port, for the
// reason.
func (p *Policy) matchName(name string, port int) (match, portless Pattern) {
	try := func(ps []Pattern) bool {
		for _, pt := range ps {
			if pt.allowsPort(port) {
				match = pt
				return true
			}
			if portless.kind == 0 {
				portless = pt
			}
		}
		return false
	}
	if try(p.names[name]) {
		return match, Pattern{}
	}
	// A wildcard matches a name with at least one label more than its
	// domain: each dot of the name starts a domain it may be under.
	for i := strings.IndexByte(name, '.'); i >= 0; {
		if try(p.wildcards[name[i+1:]]) {
			return match, Pattern{}
		}
		j := strings.IndexByte(name[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return Pattern{}, portless
}

// matchAddress finds the Address pattern that allows a (unmapped) on port.
func (p *Policy) matchAddress(a netip.Addr, port int) Pattern {
	for _, pt := range p.addrs[a] {
		if pt.allowsPort(port) {
			return pt
		}
	}
	return Pattern{}
}

// maxListed is how many entries a reason lists before it counts the rest:
// a reason is read on every refusal, and a long list would drown it.
const maxListed = 20

// allowedList says where a command may connect, for a refusal.
func (p *Policy) allowedList() string {
	if p == nil || len(p.patterns) == 0 {
		return "The network allow-list is empty: no connection may be made."
	}
	var b strings.Builder
	b.WriteString("Allowed: ")
	for i, pt := range p.patterns {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more", len(p.patterns)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(pt.String())
		if pt.port == 0 {
			b.WriteString(" (ports 80 and 443)")
		}
	}
	b.WriteString(".")
	return b.String()
}

// target words host and port as a connection's target: the host as it
// is judged (a name in its ASCII form, so a look-alike letter shows), or
// quoted when it is no host, so that nothing the command wrote (a newline,
// a control) reaches the reason as it stands.
func target(hostArg string, port int) string {
	h, err := readHost(hostArg)
	return wordTarget(h, err, hostArg, port)
}

func wordTarget(h host, err error, hostArg string, port int) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%q:%d", hostArg, port)
	case h.name != "":
		return fmt.Sprintf("%s:%d", h.name, port)
	case h.addr.Is6():
		return fmt.Sprintf("[%s]:%d", h.addr, port)
	default:
		return fmt.Sprintf("%s:%d", h.addr, port)
	}
}
