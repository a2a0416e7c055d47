package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/visible"
	"github.com/vaultgate/vaultgate/zones"
)

func init() {
	var src source
	var agent string
	var depth int
	var colour string
	var wall bool
	register(&command{
		name:    "zones",
		summary: "show the vault as a tree of folders, each labelled with its zone",
		usage:   "[--config FILE | --vault DIR] [--depth N]",
		help: `Prints the vault's folders as a tree, each with its zone and what that zone
allows, so a person can see the boundary the agent works in. A folder whose
zone is the same as its parent's is shown plainly; a change of zone is
labelled. Hidden and no-zone folders are shown to you (not to the agent).

With --wall it prints instead the OS wall a bash call would run in: what
is bound read-only, what is covered, and what Landlock allows where.`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&agent, "agent", config.DefaultAgent, "show this agent's zones")
			fs.IntVar(&depth, "depth", 4, "how many folder levels to show")
			fs.StringVar(&colour, "colour", "auto", "auto, always or never")
			fs.BoolVar(&wall, "wall", false, "print the OS wall around bash for these zones instead")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "zones takes no arguments")
			}
			if colour != "auto" && colour != "always" && colour != "never" {
				return fail(exitUsage, "--colour %q: want auto, always or never", colour)
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			p := cfg.Policy(agent)
			if p == nil {
				return fail(exitUsage, "no agent %q in the config", agent)
			}
			if wall {
				return printWall(p)
			}
			useColour := colour == "always" || (colour == "auto" && isTerminal(os.Stdout) && os.Getenv("NO_COLOR") == "")
			printZones(cfg.Vault, p.Zones, depth, useColour)
			printMissing(cfg.MissingZones(), useColour)
			return exitOK
		},
	})
}

func printZones(vault string, t *zones.Table, depth int, colour bool) {
	label := func(m zones.Mode) string {
		s := fmt.Sprintf("[%s: %s]", m, say.ZoneAllows{Mode: m}.Text(say.English))
		if colour {
			return visible.Paint(m.Colour().ANSI, s)
		}
		return s
	}
	fmt.Fprintf(stdout, "%s  %s\n", visible.Line.Escape(vault), label(t.Zone(zones.VaultRoot())))
	// rel is the folder as the file system spells it, at as the zones
	// judge it.
	var walk func(rel string, at zones.Path, indent string, level int, parent zones.Mode)
	walk = func(rel string, at zones.Path, indent string, level int, parent zones.Mode) {
		ents, err := os.ReadDir(filepath.Join(vault, filepath.FromSlash(rel)))
		if err != nil {
			fmt.Fprintf(stdout, "%s(unreadable: %s)\n", indent, visible.Line.Escape(err.Error()))
			return
		}
		var dirs []string
		for _, e := range ents {
			if e.IsDir() {
				dirs = append(dirs, e.Name())
			}
		}
		slices.Sort(dirs)
		for i, name := range dirs {
			p := path.Join(rel, name)
			branch, next := "├── ", "│   "
			if i == len(dirs)-1 {
				branch, next = "└── ", "    "
			}
			child, err := at.Child(name)
			if err != nil {
				continue
			}
			m := t.Zone(child)
			line := indent + branch + visible.Line.Escape(name) + "/"
			if m != parent || t.IsAnchor(child) {
				line += "  " + label(m)
			}
			fmt.Fprintln(stdout, line)
			if level < depth && name != ".git" {
				walk(p, child, indent+next, level+1, m)
			}
		}
	}
	walk(".", zones.VaultRoot(), "", 1, t.Zone(zones.VaultRoot()))
	// Name patterns cover paths wherever they are: listed after the tree,
	// those of one zone together.
	var modes []zones.Mode
	byMode := map[zones.Mode][]string{}
	for _, e := range t.Patterns() {
		if byMode[e.Mode] == nil {
			modes = append(modes, e.Mode)
		}
		byMode[e.Mode] = append(byMode[e.Mode], visible.Line.Escape(e.Path.String()))
	}
	for _, m := range modes {
		fmt.Fprintf(stdout, "%s  by name, wherever they match:\n", label(m))
		line := " "
		for _, p := range byMode[m] {
			if len(line) > 1 && len(line)+len(p) > 76 {
				fmt.Fprintln(stdout, line)
				line = " "
			}
			line += " " + p
		}
		fmt.Fprintln(stdout, line)
	}
	// Absolute zones live outside the vault (bash only): list them too.
	for _, e := range t.Entries() {
		if e.Path.Outside() {
			fmt.Fprintf(stdout, "%s  %s  (outside the vault, bash only)\n", visible.Line.Escape(e.Path.String()), label(t.Zone(e.Path)))
		}
	}
}

// printMissing lists, after the tree, the zone entries that name nothing
// on the disk (config.MissingZones): the tree can't show them.
func printMissing(missing []config.MissingZone, colour bool) {
	for _, m := range missing {
		label := fmt.Sprintf("[%s: %s]", m.Mode, say.ZoneAllows{Mode: m.Mode}.Text(say.English))
		if colour {
			label = visible.Paint(m.Mode.Colour().ANSI, label)
		}
		why := "not there yet: expected later"
		switch {
		case m.Opens:
			why = m.String() + ": serve refuses to start"
		case !m.Later:
			why = m.String()
		}
		fmt.Fprintf(stdout, "%s  %s  (%s)\n", visible.Line.Escape(m.Entry), label, visible.Line.Escape(why))
	}
}

// printWall prints the wall plan built from the agent's zones, as a call
// would get it now (the plan is data: this is what the helper enforces).
func printWall(p *config.Policy) int {
	cfg := &sandbox.WallConfig{
		Zones: p.Zones, Network: p.Bash.Network, RunAs: p.Bash.RunAs, Required: p.Bash.Wall == config.WallRequired,
		Helper: sandbox.HelperBeside(), // as serve starts it
	}
	// A call's vault is an overlay wherever the kernel can mount one.
	if sandbox.ProbeWall(cfg.Helper).Layers.Overlay {
		cfg.Layers.Mount, cfg.Layers.Overlay = true, true
		cfg.Overlay = &sandbox.Overlay{Upper: "(a fresh layer per call, in the state folder)"}
	}
	w, err := sandbox.BuildWall(cfg, "(a fresh home per call)")
	if err != nil {
		return fail(1, "%v", err)
	}
	// The plan names the zones' folders, and the vault's names: through
	// the one escape, its own lines kept.
	var b strings.Builder
	w.Describe(&b)
	io.WriteString(stdout, visible.Block.Escape(b.String()))
	return exitOK
}
