package audit

// The words a line is written in, typed, so that a misspelt one is a
// compile error rather than a line no reader counts.

// Decision is what the chain said of a call.
type Decision string

const (
	Allow Decision = "allow"
	Deny  Decision = "deny"
	Error Decision = "error" // the call could not be judged at all
)

// Outcome is what became of an allowed call that ran.
type Outcome string

const (
	OK     Outcome = "ok"
	Failed Outcome = "failed"
)

// Via is the entry point a call came through.
type Via string

const (
	ViaStdio Via = "stdio"
	ViaHTTP  Via = "http"
	ViaHook  Via = "hook"
	ViaCheck Via = "check" // a dry run: judged, never recorded
	ViaRun   Via = "run"   // the agent of a vaultgate run, over its socket
	// ViaExec is vaultgate exec: Claude Code's Bash as the hook rewrote it,
	// or a command a person runs.
	ViaExec Via = "exec"
	ViaCLI  Via = "cli" // the person at the command line (undo)
	// ViaPanel is the person in the web panel (vaultgate admin): an undo
	// confirmed there, through the same gate as the command line's.
	ViaPanel Via = "panel"
	// ViaStartUp is vaultgate's own act when a server starts: removing the
	// temporary names a stopped process of its own left in the vault.
	ViaStartUp Via = "start-up"
)

// Person reports whether a line is the person's own act (an undo, at the
// command line or in the panel), not an agent's call.
func (v Via) Person() bool { return v == ViaCLI || v == ViaPanel }
