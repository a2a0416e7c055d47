package main

import (
	"flag"
	"os"

	"github.com/vaultgate/vaultgate/internal/hookcmd"
)

// The hook is the same command here and in vaultgate-hook, which links no
// MCP library and so starts faster: both run hookcmd.
func init() {
	var f hookcmd.Flags
	register(&command{
		name:    "hook",
		summary: hookcmd.Summary,
		usage:   hookcmd.Usage,
		help:    hookcmd.Help + "\n\nvaultgate-hook, beside this binary, is the same command on its own.",
		flags:   f.Register,
		run: func(fs *flag.FlagSet, args []string) int {
			// Bash runs through this binary's exec command.
			f.Exec, f.ExecProblem = hookcmd.Self()
			return hookcmd.Run(f, os.Stdin, stdout, stderr)
		},
	})
}
