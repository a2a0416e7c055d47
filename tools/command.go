package tools

import "github.com/vaultgate/vaultgate/policy"

// EffectCommand is what the config's rules see as effect.command: for an
// effect of a bash command, the command word that causes it ("rm", "sed",
// ">" for a bare redirect, the program that runs for exec; "bash" for
// what a command on the overlay really changed), taken from the bash
// plan's facts; "" for every other tool's effects.
func EffectCommand(e *policy.Effect) string {
	switch f := e.Fact.(type) {
	case BashPart:
		return f.Command
	case RealPart:
		return "bash"
	}
	return ""
}
