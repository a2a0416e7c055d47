package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/rules"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/visible"
)

func init() {
	var src source
	var agent string
	register(&command{
		name:    "rules",
		summary: "list an agent's rules in order and run their examples",
		usage:   "[--config FILE | --vault DIR] [--agent NAME]",
		help: `Lists the rules each agent's calls go through, in the order they run: the
built-in ones, then the config's [[rules.deny]] (the top level's, unless the
agent sets rules.inherit = false, then its own), each with its expression
and reason. Every rule is compiled and every example is judged against the
vault, as serve does at start-up; nothing runs and nothing is recorded.

Exit status: 0 every rule compiles and every example holds, 1 an example
fails, 2 a rule does not compile or bad usage.`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&agent, "agent", "", "only this agent (default: every agent of the config)")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "rules takes no arguments (got %q)", args[0])
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			names := slices.Sorted(maps.Keys(cfg.Agents))
			if agent != "" {
				if cfg.Policy(agent) == nil {
					return fail(exitUsage, "no agent %q in the config", agent)
				}
				names = []string{agent}
			}
			// A rule that does not compile is reported below, with the
			// others; the gate opens anyway (OpenDryRun).
			g, err := server.OpenDryRun(cfg)
			if err != nil {
				return fail(1, "%v", err)
			}
			defer g.Close()
			code := exitOK
			for i, name := range names {
				if i > 0 {
					fmt.Fprintln(stdout)
				}
				code = max(code, listRules(g, cfg.Policy(name)))
			}
			return code
		},
	})
}

// listRules prints one agent's chain and the verdict on each example;
// it returns the exit status its rules give. What the config and the
// examples say goes through the one escape: each field on its line
// (visible.Line), an error with its own lines (visible.Block), an
// example's arguments as JSON (visible.JSON).
func listRules(g *server.Gate, p *config.Policy) int {
	esc := visible.Line.Escape
	fmt.Fprintf(stdout, "agent %s:\n", esc(p.Name))
	n := 0
	for _, r := range server.Builtins(p) {
		n++
		fmt.Fprintf(stdout, "  %2d. %-24s built-in\n", n, esc(r.Name))
	}
	code := exitOK
	plan := g.ExamplePlanner(p)
	for i := range p.Rules {
		d := &p.Rules[i]
		n++
		where := d.Key
		if d.Pos.Line > 0 {
			where = fmt.Sprintf("%s, line %d", d.Key, d.Pos.Line)
		}
		fmt.Fprintf(stdout, "  %2d. %-24s %s\n", n, esc(d.Name), esc(where))
		fmt.Fprintf(stdout, "        when:   %s\n", esc(oneLine(d.When)))
		fmt.Fprintf(stdout, "        reason: %s\n", esc(d.ReasonIn(string(p.Lang))))
		r, err := rules.Compile(d, rules.Options{Command: tools.EffectCommand})
		if err != nil {
			fmt.Fprintf(stdout, "        error:  %s\n", visible.Block.Escape(err.Error()))
			code = exitUsage
			continue
		}
		for j := range d.Examples {
			ex := &d.Examples[j]
			verdict := "allow"
			if ex.Deny {
				verdict = "deny"
			}
			args, _ := json.Marshal(ex.Args)
			status := "ok"
			if err := r.CheckExample(ex, plan); err != nil {
				var re *rules.Error
				if errors.As(err, &re) {
					status = "FAILED: " + re.Msg
				} else {
					status = "FAILED: " + err.Error()
				}
				code = max(code, exitDeny)
			}
			fmt.Fprintf(stdout, "        example %-5s %s %s: %s\n", verdict, esc(ex.Tool), visible.JSON.Escape(string(args)), esc(status))
		}
	}
	return code
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
