// Package audit writes and reads vaultgate's audit log: one JSON object per
// tool call, one call per line, each line carrying the hash of the line
// before it.
//
// The person who owns the vault never answers prompts; they read this log
// instead, so it must say truthfully what the agent asked for and what
// vaultgate decided, and it must show when it has been tampered with.
//
// # Files
//
// Beside the log at PATH (say audit.jsonl) live:
//
//   - PATH.lock — an empty file that every writer flocks around each append,
//     so several servers and hooks can share one log;
//   - PATH.head — {"lines":N,"hash":"…","size":S,"crc":"…"}, padded with
//     spaces to a fixed width: how many lines the chain holds, the sha256
//     of the last one, the size of PATH after it, and a CRC-32C of those
//     three, rewritten in place after each append with the lock held
//     (readers take it too); the checksum tells a write torn by a power
//     cut from a head;
//   - PATH.1, PATH.2, … — rotated files, oldest first (PATH.1 is the oldest),
//     made when PATH would grow past Options.MaxSize. The chain runs on
//     through them: the first line of each file points at the last line of
//     the file before.
//
// A line's "seq" is its number in the whole chain (1-based, across rotated
// files) and its "prev" is the hex sha256 of the previous line's bytes
// without the newline; the first line's prev is "". [Verify] walks the
// chain and names the first line that is not what the chain recorded.
//
// The chain is evidence against accidents and casual edits, not against
// someone who can rewrite the log and the head file together: they can
// recompute every hash. Keep a copy of the head elsewhere to guard against that.
//
// # What it must never do
//
// It must never log a file body, an edit string or a secret. Callers pass
// [Body] in place of contents and redact Args before [Writer.Write]; the
// writer masks every Options.Mask value wherever it would still appear in
// the line (as [masked], inside JSON strings only, so the line stays valid).
// A failed write is an error, never a silent drop: the caller then refuses
// the call (fail closed). Write returns once write(2) has put the line in the
// kernel; Options.Sync adds an fsync per line for power cuts.
//
// # Calls
//
// One call of the agent can leave more than one line: Claude Code's Bash
// leaves the hook's judgement, the line of the vaultgate exec that ran it
// (whose Continues names the hook's line) and the hook's line after it
// ran. The log keeps the lines as written; a [Joiner] joins them into one
// [Call] where they are read, and every reader that shows or counts calls
// reads through it ([ReadCalls], [SummariseFile], [Filter.MatchCall]).
//
// Text from the log is agent-chosen: print it through package visible's
// escape (visible.Mode.Escape) so a file name cannot repaint a terminal.
package audit
