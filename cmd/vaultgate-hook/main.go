// Command vaultgate-hook is the Claude Code hook and nothing else: the same
// command as `vaultgate hook` (package internal/hookcmd), in a binary that
// links no MCP library, admin panel or browser driver, so that the start-up
// Claude Code waits for on every tool call is only the hook's own.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vaultgate/vaultgate/internal/hookcmd"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vaultgate-hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f hookcmd.Flags
	f.Register(fs)
	// Bash runs through the exec command of the vaultgate beside this one.
	f.Exec, f.ExecProblem = hookcmd.Beside()
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: vaultgate-hook %s\n\n%s\n\nflags:\n", hookcmd.Usage, hookcmd.Help)
		fs.PrintDefaults()
	}
	// Claude Code runs whatever the settings name, so even --help or a
	// mistyped flag is an answer it reads: exit 2 blocks the call, where
	// exit 0 would let it through.
	if err := fs.Parse(args); err != nil {
		return hookcmd.ExitDenied
	}
	return hookcmd.Run(f, stdin, stdout, stderr)
}
