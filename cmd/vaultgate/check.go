package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/visible"
)

func init() {
	var src source
	var agent string
	register(&command{
		name:    "check",
		summary: "dry-run a tool call: its effects, their zones, the decision",
		usage:   "[--config FILE | --vault DIR] TOOL [ARGS | KEY=VALUE...]",
		help: `Plans and judges one call without running it, and prints each effect with
its zone, then the decision and the reason. ARGS is the tool's JSON
arguments, e.g. '{"path":"мета/x.md"}', or the same as KEY=VALUE words,
e.g. path=мета/x.md (a number or true/false where the tool takes one:
depth=2 recursive=true), and may be left out for a tool without required
arguments (list). For bash it may be the command itself:
every word after "bash" (or after "bash --") is the command's, joined by
spaces, so "check bash rm -rf notes" needs no quotes; quote a command that
holds what your shell would expand (;, |, >, $).
The dry run starts a fresh session, so overwriting an existing file is
refused as unread (read_before_write), exactly as a first call would be.

Exit status: 0 allow, 1 deny, 2 bad usage (including a malformed call).`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&agent, "agent", config.DefaultAgent, "judge as this agent of the config")
		},
		// After "bash" every word is the command's, "-rf" too.
		flagsEnd: func(pos []string) bool { return len(pos) == 1 && pos[0] == "bash" },
		run: func(fs *flag.FlagSet, args []string) int {
			args = checkWords(args)
			if len(args) < 2 {
				return fail(exitUsage, "check takes a tool name and its arguments (see --help)")
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			p := cfg.Policy(agent)
			if p == nil {
				return fail(exitUsage, "no agent %q in the config", agent)
			}
			raw, err := checkArgs(args[0], args[1:])
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			g, err := server.OpenDryRun(cfg)
			if err != nil {
				return openFailed(err)
			}
			defer g.Close()
			if err := g.RuleError(); err != nil {
				return openFailed(err)
			}
			s := &policy.Session{ID: "check", Agent: p.Name, State: policy.NewState()}
			o := g.Call(context.Background(), server.Caller{Via: server.ViaCheck, Session: s, Policy: p}, args[0], raw, server.DryRun)
			printCheck(o)
			switch o.Decision {
			case server.Allow:
				return exitOK
			case server.Deny:
				return exitDeny
			}
			return exitUsage
		},
	})
}

// checkWords makes TOOL ARGS of the words after the flags: a tool without
// ARGS has none ("{}"); bash's words after the tool name, after an optional
// "--", are its command, joined by spaces.
func checkWords(args []string) []string {
	switch {
	case len(args) == 1:
		return []string{args[0], "{}"}
	case len(args) > 1 && args[0] == "bash":
		words := args[1:]
		if words[0] == "--" {
			words = words[1:]
		}
		if len(words) == 0 {
			return args[:1]
		}
		return []string{"bash", strings.Join(words, " ")}
	}
	return args
}

// checkArgs decodes ARGS: one JSON object, or KEY=VALUE words, each value
// typed as the tool's argument of that name is (an integer, a boolean,
// else a string); for bash a plain command is accepted as is.
func checkArgs(tool string, words []string) (any, error) {
	if tool == "bash" && len(words) == 1 && !strings.HasPrefix(strings.TrimSpace(words[0]), "{") {
		return map[string]any{"command": words[0]}, nil
	}
	if len(words) == 1 && !isKeyValue(words[0]) {
		var v any
		if err := json.Unmarshal([]byte(words[0]), &v); err != nil {
			return nil, fmt.Errorf("ARGS is not JSON (%v), nor KEY=VALUE", err)
		}
		return v, nil
	}
	types := map[string]string{}
	if t, ok := (&tools.Set{Lang: say.English}).Lookup(tool); ok {
		for _, p := range t.Params {
			types[p.Name] = p.Type
		}
	}
	m := map[string]any{}
	for _, w := range words {
		if !isKeyValue(w) {
			return nil, fmt.Errorf("%q: give the arguments as one JSON object, or as KEY=VALUE words", w)
		}
		k, v, _ := strings.Cut(w, "=")
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s= is given twice", k)
		}
		switch types[k] {
		case "integer":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: %s takes a whole number", k, v, k)
			}
			m[k] = n
		case "boolean":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: %s takes true or false", k, v, k)
			}
			m[k] = b
		default:
			m[k] = v
		}
	}
	return m, nil
}

// isKeyValue reports whether w is KEY=VALUE, KEY an argument's name.
func isKeyValue(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// printCheck prints effects in the shape the tests compare: "op path zone".
// Paths, reasons and errors name what the call names: each goes through
// the one escape (visible.Line), a reason line by line.
func printCheck(o *server.Outcome) {
	esc := visible.Line.Escape
	fmt.Fprintln(stdout, "effects:")
	if len(o.Record.Effects) == 0 {
		fmt.Fprintln(stdout, "  (none)")
	}
	for _, e := range o.Record.Effects {
		zone := e.Zone
		if zone == "" {
			zone = "-"
		}
		fmt.Fprintf(stdout, "  %-8s %-40s %s\n", esc(e.Op), esc(e.Path), esc(zone))
	}
	fmt.Fprintf(stdout, "decision: %s\n", esc(string(o.Decision)))
	switch {
	case o.Deny != nil:
		fmt.Fprintf(stdout, "rule:     %s\n", esc(o.Deny.Rule))
		for i, line := range strings.Split(o.Deny.Reason, "\n") {
			label := "reason:  "
			if i > 0 {
				label = "         "
			}
			fmt.Fprintf(stdout, "%s %s\n", label, esc(line))
		}
	case o.Err != nil:
		fmt.Fprintf(stdout, "error:    %s\n", esc(o.Err.Error()))
	}
}
