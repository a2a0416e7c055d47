// Command vaultgate-hook-rules is the Claude Code hook for an agent with
// [[rules.deny]] in the config: vaultgate-hook with CEL linked. The small
// vaultgate-hook links no CEL, so that a hook call of an agent without
// rules pays nothing for it, and hands a call of an agent with rules to
// this binary beside it (or, without it, to `vaultgate hook`).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vaultgate/vaultgate/internal/hookcmd"
	"github.com/vaultgate/vaultgate/rules"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	hookcmd.Rules = rules.Chain
	hookcmd.RulesIn = rules.CachedChain // the hook keeps the rules' parses in the state folder
	fs := flag.NewFlagSet("vaultgate-hook-rules", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f hookcmd.Flags
	f.Register(fs)
	// Bash runs through the exec command of the vaultgate beside this one.
	f.Exec, f.ExecProblem = hookcmd.Beside()
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: vaultgate-hook-rules %s\n\n%s\n\nflags:\n", hookcmd.Usage, hookcmd.Help)
		fs.PrintDefaults()
	}
	// As vaultgate-hook: any exit but 0 blocks the call, so help and a
	// bad flag exit 2.
	if err := fs.Parse(args); err != nil {
		return hookcmd.ExitDenied
	}
	return hookcmd.Run(f, stdin, stdout, stderr)
}
