// Package sandbox runs one bash command for the agent's bash tool: it builds
// the child's environment from a whitelist, hands a configured secret only to
// a command whose analysis calls one of its programs, bounds the call with a
// timeout that ends every process the command started, and caps what the
// command prints.
//
// The command runs as `bash --noprofile --norc -c CMD` from /bin/bash (never
// found through the child's PATH), in the vault root, with stdin at /dev/null.
// Its processes are contained by a new pid namespace, so that when bash ends,
// or is killed on a timeout, the kernel kills everything it left behind, even
// processes that started their own process group or session. Where no pid
// namespace can be had, Run falls back to a sweep over /proc (see Result.
// Isolation, and the limits in contain_linux.go).
//
// What this package must never do:
//   - pass the server's own environment through: only whitelisted names are
//     passed, and never the names that change how bash or the C library
//     start (BASH_ENV, ENV, LD_*, exported functions, …) or that look like
//     the server's credentials (DATABASE_URL, *TOKEN*, *_KEY, …), whatever
//     the whitelist says (see Blocked);
//   - put a secret in argv, where every process can read it, or give it to a
//     command that does not call one of its programs;
//   - return a secret's value in the output (see Mask), even when the output
//     cap cuts through it;
//   - let a process of a call outlive the call, or let one that holds the
//     output pipes open make Run hang;
//   - hold more than a bounded amount of a command's output in memory.
//
// With Request.Wall set, the command runs inside the OS wall (wall.go: the
// plan, built from the zone table as data; helper_linux.go: the helper
// that builds the new root, applies Landlock (landlock_linux.go, the one
// place the plan becomes kernel rules), drops privileges and execs bash).
// The helper is the binary WallConfig.Helper names (cmd/vaultgate-wall,
// which is nothing else), or else the running binary re-executed, which
// must then call Helper when IsHelper says it was started as one
// (cmd/vaultgate/wall.go, and TestMain here). The
// wall must never build anything outside namespaces of its own, never run
// bash with a layer the plan asked for missing, and never fall back to an
// unwalled run by itself: best effort is the caller's choice (Probe.For).
//
// With WallConfig.Overlay the vault inside the wall is an overlay
// (overlay_linux.go): the vault itself is the read-only lower layer and the
// call's upper folder receives every change, so nothing a command does
// reaches the vault until the server has judged the upper folder; the
// protected, hidden and no-zone parts are covered on top of it as without
// it, and zones outside the vault are bound directly.
//
// This package does not judge commands: the analysis (package shell) and the
// rule chain decide what may run; sandbox only runs it.
package sandbox
