package main

import "github.com/vaultgate/vaultgate/sandbox"

// wallHelper runs the OS wall's helper when the sandbox re-executed this
// binary as one (argv[1] is sandbox.HelperArg), which it does when no
// vaultgate-wall lies beside it: it builds the call's wall and execs bash,
// and must run before anything else reads the arguments, the environment
// or a config. It is not a command, so --help does not list it. It returns
// only on failure, with the exit status.
func wallHelper(args []string) (int, bool) {
	if len(args) == 0 || args[0] != sandbox.HelperArg {
		return 0, false
	}
	return sandbox.Helper(), true
}
