package judgesock

import (
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ExecArgs are vaultgate exec's arguments, as both its commands read them:
// `vaultgate exec` itself, and the lean client `vaultgate-hook exec`,
// which the hook's rewrite of a Claude Code Bash names so that the call
// pays for a small binary's start and a socket, not the vaultgate binary's
// start. One parser, so the two can't read a command differently.
type ExecArgs struct {
	Config, Vault string
	Agent         string
	Session       string        // a label for a session of its own
	Call          string        // the call id the hook issued
	Timeout       time.Duration // 0: [bash] timeout
	CommandB64    string
}

// Register defines exec's flags on fs.
func (a *ExecArgs) Register(fs *flag.FlagSet) {
	fs.StringVar(&a.Config, "config", "", "the policy file (TOML)")
	fs.StringVar(&a.Vault, "vault", "", "run in this folder with the default policy, when there is no config")
	fs.StringVar(&a.Agent, "agent", DefaultAgent, "run as this agent of the config")
	fs.StringVar(&a.Session, "session", "", "a label for the audit line's session (not an identity); default exec-<id>")
	fs.StringVar(&a.Call, "call", "", "the call id the hook issued for this command (its rewrite of a Claude Code Bash)")
	fs.DurationVar(&a.Timeout, "timeout", 0, "the command's timeout (rounded up to whole seconds), within [bash] max_timeout; default [bash] timeout")
	fs.StringVar(&a.CommandB64, "command-b64", "", "the command, base64-encoded (instead of the words after --)")
}

// ErrExecUsage is a fault of exec's arguments (exit 2).
var ErrExecUsage = errors.New("exec")

// Command is the command to run: --command-b64 decoded, or the words
// after "--" joined by single spaces, as ssh joins them.
func (a *ExecArgs) Command(words []string) (string, error) {
	switch {
	case a.Call != "" && a.Session != "":
		return "", fmt.Errorf("%w: give --call or --session, not both (a call id names its session)", ErrExecUsage)
	case a.Timeout < 0:
		return "", fmt.Errorf("%w: --timeout %v is negative", ErrExecUsage, a.Timeout)
	case a.CommandB64 != "" && len(words) > 0:
		return "", fmt.Errorf("%w: give the command after -- or as --command-b64, not both", ErrExecUsage)
	case a.CommandB64 != "":
		b, err := base64.StdEncoding.Strict().DecodeString(a.CommandB64)
		if err != nil {
			return "", fmt.Errorf("%w: --command-b64: %v", ErrExecUsage, err)
		}
		return string(b), nil
	case len(words) == 0:
		return "", fmt.Errorf("%w: no command: give it after -- (vaultgate exec --config FILE -- 'ls -la')", ErrExecUsage)
	}
	return strings.Join(words, " "), nil
}

// Seconds is --timeout in the bash tool's whole seconds, rounded up; 0
// for none given.
func (a *ExecArgs) Seconds() int {
	return int((a.Timeout + time.Second - 1) / time.Second)
}

// ExecCwd is the folder exec runs from: the current one, links resolved.
func ExecCwd() (string, error) {
	cwd, err := os.Getwd()
	if err == nil {
		cwd, err = filepath.EvalSymlinks(cwd)
	}
	if err != nil {
		return "", fmt.Errorf("the current folder: %w", err)
	}
	return cwd, nil
}

// Args are the bash tool's arguments for the call.
func (c *ExecCall) Args() map[string]any {
	args := map[string]any{"command": c.Command}
	if c.Timeout > 0 {
		args["timeout"] = c.Timeout
	}
	return args
}
