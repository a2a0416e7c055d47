// Package netpolicy decides whether a walled command may open a
// connection: the one place that reads a network allow-list and judges a
// host, a port and the addresses the host resolved to against it.
//
// It is the foundation of issue 31 (the network as an effect). Nothing in
// vaultgate uses it yet: the proxy that will ask it, the config keys that
// will hold the list, the connect effect and its audit come later. So it
// imports nothing of vaultgate's, does no I/O and resolves no name; the
// caller resolves, and asks twice: JudgeName before it resolves (so a
// refused name never reaches a resolver, which would carry it out as a
// query), then Judge with every address the name resolved to (so a name
// allowed by its pattern can't be pointed at loopback or the LAN:
// DNS rebinding).
//
// The pattern language and each decision, with why, are in docs/network.md.
// In short: a name (github.com), a wildcard over the names below one
// (*.githubusercontent.com, any depth, never the bare name), or an IP
// address (127.0.0.1, ::1, [::1]:443); an optional port, without which
// only the web ports 80 and 443 match. Names compare as their IDNA ASCII
// form, case-folded, a trailing dot dropped. Loopback, private, link-local,
// CGNAT, multicast, unspecified and other non-global addresses are reached
// only when the list names that address itself. UDP is refused.
//
// Every refusal says why and what the list allows, in plain English, for
// the model to read.
package netpolicy
