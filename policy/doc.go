// Package policy judges tool calls. A call is first reduced to effects (what
// it would do to which path); an ordered chain of rules then looks at the
// effects, never at raw arguments, so one zone logic guards every tool and
// every entry point. The first deny is the answer; a rule that panics denies.
//
// This package decides; it never touches the disk, and it knows no tool by
// name: planners (package tools) supply the effects, with their zones
// filled in and marked with what they need (NeedsFreshRead, Confined), and
// a tool's own rule reads what only it needs from ToolCall.Facts.
package policy
