// Package policy judges tool calls. A call is first reduced to effects (what
// it would do to which path); an ordered chain of rules then looks at the
// effects, never at raw arguments, so one zone logic guards every tool and
// every entry point. The first deny is the answer; a rule that panics denies.
//
// This package decides; it never touches the disk. Planners (package tools,
// the bash analysis, the hook) supply effects with their zones filled in.
package policy
