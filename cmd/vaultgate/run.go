package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vaultgate/vaultgate/agentrun"
	"github.com/vaultgate/vaultgate/sandbox"
)

func init() {
	var src source
	var agent, cwd string
	var claude bool
	register(&command{
		name:    "run",
		summary: "start the agent itself (Claude Code, any MCP client) inside the boundary",
		usage:   "--config FILE [--agent NAME] [--cwd DIR] [--claude] -- COMMAND [ARGS...]",
		help: `Starts COMMAND as the agent, behind the same wall as the bash tool: as the
[run] user (required when vaultgate runs as root; otherwise your own uid in
a user namespace), with no supplementary groups, no_new_privs and no
capabilities; with only the variables [run] env names (default PATH, LANG,
LC_*, TERM, TZ) and the [[run.secrets]] entries; in a view of the system
where the vault, the config, the state folder and the audit log are not
there, your home is covered, the agent's own home ([run] home) is writable
and kept between runs, and the system is read-only; in a pid namespace of
its own, so everything it starts ends with it.

Its only way to the vault is this run's server: vaultgate serves the vault
on a unix socket only the agent can reach, and gives it an MCP config in
Claude Code's .mcp.json format at $VAULTGATE_MCP_CONFIG. Every call is
audited with via "run" and the run's id.

With --claude, COMMAND is Claude Code ("claude" when no COMMAND is given, or
when ARGS begin with a dash: they are Claude Code's): run adds --mcp-config,
--strict-mcp-config, --settings (its file built-ins not offered, the vault's
tools instead; a call of one anyway is refused and audited) and
--permission-mode bypassPermissions.

The program is looked for in the agent's PATH, then in npm's global prefix,
~/.local/bin, ~/.local/node_modules/.bin and nvm's node versions; the view
shows it read-only, and only it: its own npm package folder (or the file
alone) and, for a script, its interpreter.

run prints the run's id: vaultgate audit tail, history, diff and undo take
it as --session ID, for every call of the run.

Exits with the agent's status; non-zero with the reason, and nothing
started, when the user, the home, a secret, the program or a layer of the
wall is missing.`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&agent, "agent", "", "hold the agent to this [agents.NAME]'s policy (default: the top level)")
			fs.StringVar(&cwd, "cwd", "", "the agent's working folder inside its view (default: its home)")
			fs.BoolVar(&claude, "claude", false, "COMMAND is Claude Code: add the MCP config, the settings and a permission mode that asks nothing")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			args = claudeCommand(args, claude)
			if len(args) == 0 {
				return fail(exitUsage, "run: give the agent's command after --, e.g. vaultgate run --config vault.toml -- claude")
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fail(1, "run: this binary's path: %v", err)
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer signal.Stop(sigs)
			winch := make(chan os.Signal, 1)
			signal.Notify(winch, syscall.SIGWINCH)
			defer signal.Stop(winch)
			code, err := agentrun.Run(context.Background(), agentrun.Options{
				Config: cfg, Agent: agent, Command: args, Cwd: cwd, Claude: claude,
				Environ: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
				Exe: exe, Helper: sandbox.HelperBeside(), Signals: sigs, Forward: winch, Log: stderr,
			})
			if err != nil {
				fail(1, "%v", err)
				var re *agentrun.Error
				if errors.As(err, &re) && re.Step == "server" && code != 0 {
					return code
				}
				return 1
			}
			return code
		},
	})
}

// claudeCommand is run's command: with --claude, Claude Code's own name
// when none is given, or before arguments that are Claude Code's own (a
// program's name does not begin with a dash).
func claudeCommand(args []string, isClaude bool) []string {
	if isClaude && (len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		return append([]string{"claude"}, args...)
	}
	return args
}
