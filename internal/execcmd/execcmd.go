// Package execcmd is what `vaultgate exec` comes to: one command run
// through a gate as the vault's bash tool, turned into the output and the
// exit status exec gives. The exec process runs it on a gate of its own,
// and a judge (hook-judge, serve) runs it on its open gate for an exec
// that handed the command over, so the two can't differ.
package execcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/visible"
)

// ExitRefused is exec's status when vaultgate, not the command, ends the
// call: refused before it ran, unable to run it, or none of its changes
// applied. As env(1) and timeout(1) do, 125 stays out of the way of the
// statuses a command itself gives (126, 127, 128+N).
const ExitRefused = 125

// Reply is what exec prints and the status it exits with.
type Reply struct {
	Stdout, Stderr []byte
	Code           int
}

// refused is a reply of vaultgate's own.
func refused(format string, a ...any) Reply {
	return Reply{Stderr: Reason(nil, format, a...), Code: ExitRefused}
}

// Reason appends to b a line of exec's own on stderr, "vaultgate exec:"
// and the message. What the message names (a path, a rule's reason) may be
// the agent's, so it goes through the one escape, its own lines kept
// (visible.Block); the command's own output around it is passed through
// as it is, as Claude Code expects of Bash.
func Reason(b []byte, format string, a ...any) []byte {
	b = append(b, "vaultgate exec: "...)
	b = append(b, visible.Block.Escape(fmt.Sprintf(format, a...))...)
	return append(b, '\n')
}

// Run runs req through g and says what exec gives for it: the command's
// output and status, or, when vaultgate ended the call, the reason on
// stderr and ExitRefused.
func Run(ctx context.Context, g *server.Gate, req server.ExecRequest) Reply {
	o := g.Exec(ctx, req)
	switch {
	case o.Deny != nil:
		return refused("refused: %s", o.Deny.Reason)
	case o.Err != nil:
		return refused("%v", o.Err)
	case o.Result == nil:
		return refused("the call came to nothing") // never: an allowed bash call has a result
	}
	res, _ := o.Result.Structured.(tools.BashOutput)
	r := Reply{Stdout: []byte(res.Stdout), Stderr: []byte(res.Stderr), Code: res.ExitCode}
	switch {
	case res.NotApplied != "":
		r.Stderr = Reason(r.Stderr, "%s", strings.TrimSpace(res.NotApplied))
		r.Code = ExitRefused
	case res.TimedOut:
		r.Stderr = Reason(r.Stderr, "the command timed out")
	}
	if r.Code < 0 || r.Code > 255 {
		r.Stderr = Reason(r.Stderr, "the command ended without an exit status")
		r.Code = ExitRefused
	}
	return r
}
