// Package admin serves vaultgate's audit panel: one web page, embedded in
// the binary, made for a person reading their agent's day. It reads, but
// for the person's one act, an undo (undo.go).
// It opens on today's counts, per agent and per session, and the day's
// calls, live as they are appended (server-sent events read from the
// index), with what needs a look (Look) marked and filterable,
// free-text search and filters kept in the page's URL (Query), one call's
// full record with its diff from the history, and counts over time, by
// tool and by rule.
//
// # The index
//
// The answers come from an in-memory index of the log (index.go): one
// small entry per line and its searchable text, built once when the
// panel starts and read on from where it stopped before each request,
// across rotations. A page is the index filtered, then only its lines
// read back by offset; BenchmarkPanel measures it over a million lines.
// The index is kept between starts in the state folder (persist.go,
// Options.Index), checked against the log before it is taken, so that a
// restart reads only what was appended.
//
// A row is a call, not a line: the index feeds every line, in order, to
// an audit.Joiner, as audit tail and audit stats do, and a line that
// continues a call (the exec that ran the hook's Bash, the hook's after
// line) becomes a part of that call's entry, linked to it; the call's
// entry is derived again from all its lines. So the panel's counts are
// audit stats' on the same log.
//
// # Authentication
//
// Every /api/ request needs "Authorization: Bearer TOKEN"; the token is
// compared in constant time (through SHA-256, so its length leaks
// nothing). The page itself and its script hold nothing from the log and
// are served to anyone; the page asks for the token once, keeps it in
// sessionStorage, and sends it as a header on every fetch. The live
// stream is read with fetch too, not EventSource: EventSource cannot set
// a header, and the alternatives put a credential where it leaks (a token
// in a URL lands in history and logs) or where the browser sends it by
// itself (a cookie invites cross-site requests). A header the page must
// add by hand is never sent by anyone else's page.
//
// # Undo
//
// POST /api/undo is the one request that changes anything: the person's
// undo of a call or a session, previewed first (dry_run), then confirmed.
// The panel does not act itself: it hands the request to Options.Undo,
// a person's gate (server.OpenPerson, Gate.Undo), so the plan, the
// conflict rules, the words and the audit line (via "panel") are
// vaultgate undo's. It takes the token from the header alone, JSON alone,
// from its own origin alone.
//
// # What it must never do
//
// It must never write to the log or act in the vault by itself: it
// answers GET and HEAD, and POST at /api/undo alone, which goes through
// the gate. It must never start without a token, and must never let
// text from the log become markup: the script inserts everything with
// textContent, and every response carries a Content-Security-Policy that
// allows no inline script or style and, through Trusted Types, makes an
// assignment to innerHTML throw.
package admin
