package main

import (
	"fmt"
	"os"
	"os/user"
	"strings"

	"github.com/vaultgate/vaultgate/agentrun"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/visible"
)

// The starter config's [run] section, and what init says of it: enough
// for `vaultgate run --claude` to start Claude Code behind the wall with
// no edit — run finds the program where npm, ~/.local or nvm put it, so
// there is no read_only to write; the model's key and base URL come
// through [[run.secrets]], optional, so that a subscription's login (kept
// in the agent's home) needs neither.

// The launcher's variables the starter config hands the agent as its
// model's key and address.
const (
	agentKeyEnv = "VAULTGATE_AGENT_ANTHROPIC_API_KEY"
	agentURLEnv = "VAULTGATE_AGENT_ANTHROPIC_BASE_URL"
)

// starterRun is the starter config's [run] section. As root, run needs a
// user of the agent's own, which it names; otherwise the agent runs as the
// person in a user namespace, and a user named there would stop it.
func starterRun() string {
	userLine := fmt.Sprintf("user    = %q      # the agent's own user: vaultgate runs as root (create it: %s)", agentrun.DefaultUser, agentrun.UserAdd(agentrun.DefaultUser))
	if os.Geteuid() != 0 {
		userLine = fmt.Sprintf("user    = \"\"                     # as root, the agent's own user, e.g. %q (create it: %s)", agentrun.DefaultUser, agentrun.UserAdd(agentrun.DefaultUser))
	}
	return `
[run]
# vaultgate run --claude starts Claude Code itself behind the wall, with the
# vault's tools as its only way to the notes (docs/run.md). It finds Claude
# Code where npm, ~/.local or nvm installed it, and shows the agent that
# program's own folder, read-only; nothing else of yours.
` + userLine + `
home    = "~/.local/share/vaultgate/agent-home"   # the agent's home (its settings, its login), kept between runs
env     = ["PATH", "LANG", "LC_*", "TERM", "TZ"]
network = "host"           # it reaches its model's API

# The model's key and address reach Claude Code only through these: set
# the from_env variables when you start vaultgate run. Unset, they are left
# out — for a Claude subscription, log in once inside the agent's home
# (/login in Claude Code under vaultgate run).
[[run.secrets]]
name     = "ANTHROPIC_API_KEY"
from_env = "` + agentKeyEnv + `"
optional = true

[[run.secrets]]
name     = "ANTHROPIC_BASE_URL"
from_env = "` + agentURLEnv + `"
optional = true
`
}

// runHints says how to start Claude Code under vaultgate run with the
// config at cfgPath: its secrets, the subscription's login, and as root
// the agent's user. "" when the config does not load (a dry run).
func runHints(cfgPath string) string {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return ""
	}
	var b strings.Builder
	run := "vaultgate run --config " + shellQuote(cfgPath) + " --claude"
	fmt.Fprintf(&b, "\nRun Claude Code itself behind the wall, the vault's tools its only way in (docs/run.md):\n")
	if len(cfg.Run.Secrets) == 0 {
		fmt.Fprintf(&b, "  %s\n", run)
	} else {
		fmt.Fprintf(&b, "  %s=sk-ant-… %s\n", visible.Line.Escape(cfg.Run.Secrets[0].FromEnv), run)
		fmt.Fprintf(&b, "It hands Claude Code only these variables of yours ([[run.secrets]]):\n")
		for _, s := range cfg.Run.Secrets {
			when := "required"
			if s.Optional {
				when = "when set"
			}
			fmt.Fprintf(&b, "  %s as %s (%s)\n", visible.Line.Escape(s.FromEnv), visible.Line.Escape(s.Name), when)
		}
	}
	fmt.Fprintf(&b, "With a Claude subscription instead, start it without a key and log in once with /login:\nthe login stays in the agent's home, %s.\n", visible.Line.Escape(cfg.Run.Home))
	if os.Geteuid() == 0 {
		switch name := cfg.Run.User; {
		case name == "":
			fmt.Fprintf(&b, "As root, run needs [run] user, the agent's own (e.g. %q); create it:\n  %s\n", agentrun.DefaultUser, agentrun.UserAdd(agentrun.DefaultUser))
		default:
			if _, err := user.Lookup(name); err != nil {
				fmt.Fprintf(&b, "As root, run starts Claude Code as the user %s, which does not exist yet; create it:\n  %s\n", visible.Line.Escape(name), visible.Line.Escape(agentrun.UserAdd(name)))
			} else {
				fmt.Fprintf(&b, "As root, run starts Claude Code as the user %s.\n", visible.Line.Escape(name))
			}
		}
	}
	return b.String()
}
