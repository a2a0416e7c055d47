package main

import (
	"flag"
	"os"

	"github.com/vaultgate/vaultgate/internal/hookcmd"
	"github.com/vaultgate/vaultgate/rules"
)

// The hook is the same command here and in vaultgate-hook, which links no
// MCP library and so starts faster: both run hookcmd.
func init() {
	hookcmd.Rules = rules.Chain         // this binary links CEL: it evaluates the config's rules itself
	hookcmd.RulesIn = rules.CachedChain // the hook keeps the rules' parses in the state folder
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
