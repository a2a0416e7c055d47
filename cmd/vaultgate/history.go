package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/server"
	"github.com/vaultgate/vaultgate/vaultid"
	"github.com/vaultgate/vaultgate/visible"
)

// Exit codes of history, diff and undo: 0 done, 1 undo left a path alone
// (or a failure), 2 bad usage or an id the history does not know.
const exitFailed = 1

func openHistory(cfg *config.Config) (*history.Store, error) {
	return history.Open(history.Dir(cfg.StateDir), nil, history.Options{MaxSize: cfg.History.MaxSize, Keep: cfg.History.Keep, Recover: true})
}

// vaultScope is what of the state folder's history is the config's
// vault's (package vaultid): history and diff show nothing else.
func vaultScope(cfg *config.Config) (vaultid.Scope, error) {
	return vaultid.OpenScope(cfg.StateDir, cfg.Vault)
}

func init() {
	var src source
	var session, since string
	var asJSON, gc, raw bool
	register(&command{
		name:    "history",
		summary: "list the changes the agent made to the vault, newest first",
		usage:   "[--config FILE] [PATH] [--session S] [--since DUR] [--json] [--raw] | --gc",
		help: `Lists what vaultgate kept of each change to the config's vault (never
another's that shares its state folder), newest first: the
time, the call id (the audit line's id), agent, session, tool, operation,
path, and the size before and after ("-": absent; "N/": a folder of N
bytes). PATH keeps the changes of that path and of what is below it.
An entry whose state is "pending" was cut short (a crash) and "failed" one
whose change was not made.

--json prints one JSON object per line: id, vault (the vault's id; none
before vaults were named), session, agent, tool, op, path, from/to (a
move), time, state, and the before and after states.

A change made by Claude Code's Bash is kept under the id of the vaultgate
exec that ran it; it is shown with the hook's call that exec continues,
as the audit log joins them: its tool reads "bash (Bash TOOL_USE_ID)", and
--json adds "continues" (the hook's line id) and "tool_use_id".

Names and ids are the agent's choice: each is printed with every
character that could steer a terminal escaped (\x1b, \u202e; --json
keeps to JSON's \u escapes). --raw prints them as they are.

--gc prunes the history to [history] max_size and keep by hand (the
server also does at start-up): the oldest entries go first, then every
kept body no entry names.

Exit codes: 0 listed (even nothing), 1 the history could not be read,
2 bad usage.`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&session, "session", "", "only changes of this session id")
			fs.StringVar(&since, "since", "", "only changes since: an RFC 3339 time, a date, or a duration back (1h, 2d)")
			fs.BoolVar(&asJSON, "json", false, "one JSON object per line")
			fs.BoolVar(&raw, "raw", false, "print names as they are, terminal controls and all")
			fs.BoolVar(&gc, "gc", false, "prune the history to its bounds, then exit")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 1 {
				return fail(exitUsage, "history takes at most one PATH")
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			from, err := audit.ParseSince(since, time.Now())
			if err != nil {
				return fail(exitUsage, "--%v", err)
			}
			store, err := openHistory(cfg)
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			defer store.Close()
			if gc {
				if len(args) > 0 || session != "" || since != "" || asJSON || raw {
					return fail(exitUsage, "--gc takes no other flags or PATH")
				}
				p, err := store.GC(time.Now())
				if err != nil {
					return fail(exitFailed, "%v", err)
				}
				fmt.Fprintf(stdout, "pruned %d calls and %d bodies (%d bytes)\n", p.Calls, p.Blobs, p.Bytes)
				return exitOK
			}
			var under string
			if len(args) == 1 {
				under = path.Clean(strings.Trim(args[0], "/"))
			}
			scope, err := vaultScope(cfg)
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			all, err := store.All()
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			var shown []history.Entry
			unnamed := map[string]bool{}
			for _, e := range slices.Backward(all) {
				if !scope.Owns(e.Vault) {
					if e.Vault == "" {
						unnamed[e.ID] = true
					}
					continue
				}
				if (session == "" || e.Session == session) && (from.IsZero() || !e.Time.Before(from)) &&
					(under == "" || within(e.Path, under) || (e.From != "" && within(e.From, under))) {
					shown = append(shown, e)
				}
			}
			if len(unnamed) > 0 {
				fmt.Fprintf(stderr, "vaultgate: %d call(s) kept before vaults were named are not listed: the state folder %s serves several vaults, so whose they are can't be told\n",
					len(unnamed), visible.Line.Escape(cfg.StateDir))
			}
			calls, err := hookCalls(cfg.AuditPath, shown)
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			if asJSON {
				for _, e := range shown {
					b, err := json.Marshal(withHookCall(e, calls))
					if err != nil {
						return fail(exitFailed, "%v", err)
					}
					fmt.Fprintln(stdout, visible.JSON.Unless(raw).Escape(string(b)))
				}
				return exitOK
			}
			esc := visible.Line.Unless(raw).Escape
			tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tID\tAGENT\tSESSION\tTOOL\tOP\tPATH\tBEFORE\tAFTER\tSTATE")
			for _, e := range shown {
				p := esc(e.Path)
				if e.To != "" {
					p += " -> " + esc(e.To)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), esc(e.ID),
					esc(dash(e.Agent)), esc(dash(e.Session)), esc(toolOf(e, calls)), esc(string(e.Op)), p,
					esc(e.Before.SizeText()), esc(e.After.SizeText()), esc(e.State))
			}
			tw.Flush()
			return exitOK
		},
	})
}

func within(p, under string) bool {
	return under == "." || p == under || strings.HasPrefix(p, under+"/")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func init() {
	var src source
	var session, since string
	var raw bool
	register(&command{
		name:    "diff",
		summary: "show what one call changed, as a unified diff",
		usage:   "[--config FILE] [--raw] ID",
		help: `Prints a unified diff of each text file the call ID changed (the id of its
audit line, as vaultgate history lists it): a file written, edited,
moved, deleted, or every file of a folder deleted. A binary file, a link
or anything else is told in one line.

--session S prints the diff of every call of that session, and --since
DUR (an RFC 3339 time, a date, or a duration back: 1h, 2d) of every call
made since then, oldest first, each under a line naming the call:
"call ID: TOOL at TIME by AGENT". Your own undos are calls too, and show.

Names and contents are the agent's: every character in them that could
steer a terminal (an escape sequence, a carriage return, a bidi override)
is printed escaped, as \x1b or \u202e, newlines and tabs of a file kept.
--raw prints the bytes as they are.

Only a call of the config's vault is shown: one recorded for another
vault that shares the state folder is refused, and --session and --since
select only the config's vault's calls.

Exit codes: 0 printed (nothing, for a call that changed nothing; a line
saying so for a session or a time that matched no change), 1 the history
could not be read, 2 bad usage, an id the history does not know, or a
call of another vault.`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&session, "session", "", "the diff of every call of this session")
			fs.StringVar(&since, "since", "", "the diff of every call since: an RFC 3339 time, a date, or a duration back (1h, 2d)")
			fs.BoolVar(&raw, "raw", false, "print names and contents as they are, terminal controls and all")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			selecting := session != "" || since != ""
			switch {
			case selecting && len(args) > 0:
				return fail(exitUsage, "diff takes one call ID, or --session or --since, not both")
			case !selecting && len(args) != 1:
				return fail(exitUsage, "diff takes one call ID (or --session S, --since DUR)")
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			from, err := audit.ParseSince(since, time.Now())
			if err != nil {
				return fail(exitUsage, "--%v", err)
			}
			store, err := openHistory(cfg)
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			defer store.Close()
			scope, err := vaultScope(cfg)
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			write := store.Diff
			if raw {
				write = store.DiffRaw
			}
			if selecting {
				return diffCalls(cfg, store, scope, session, since, from, write, raw)
			}
			es, err := store.Call(args[0])
			if err == nil {
				for _, e := range es {
					if err := scope.Check(args[0], e.Vault, "diff"); err != nil {
						return fail(exitUsage, "%v", err)
					}
				}
				err = write(stdout, args[0])
			}
			if err != nil {
				if errors.Is(err, history.ErrUnknownID) {
					return fail(exitUsage, "%s: no change of that id is kept", args[0])
				}
				return fail(exitFailed, "%v", err)
			}
			return exitOK
		},
	})
}

// diffCalls prints the diff of each call of a session or since a time,
// oldest first, each under a line naming it: the calls undo would take
// (server.SelectCalls), the person's own undos included, since they
// changed the vault too.
func diffCalls(cfg *config.Config, store *history.Store, scope vaultid.Scope, session, since string, from time.Time,
	write func(io.Writer, string) error, raw bool) int {
	sel, err := server.SelectCalls(store, scope, session, from, true)
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	esc := visible.Line.Unless(raw).Escape
	if len(sel.Unnamed) > 0 {
		fmt.Fprintf(stderr, "vaultgate: %d call(s) kept before vaults were named are not shown: the state folder %s serves several vaults, so whose they are can't be told\n",
			len(sel.Unnamed), esc(cfg.StateDir))
	}
	if len(sel.IDs) == 0 {
		what := "since " + since
		if session != "" {
			what = "of session " + session
		}
		fmt.Fprintf(stdout, "no change %s in this vault\n", esc(what))
		return exitOK
	}
	var heads []history.Entry // each call's first entry, for its line
	for _, id := range sel.IDs {
		es, err := store.Call(id)
		if err != nil {
			return fail(exitFailed, "%v", err)
		}
		if len(es) > 0 {
			heads = append(heads, es[0])
		}
	}
	calls, err := hookCalls(cfg.AuditPath, heads)
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	for _, e := range heads {
		fmt.Fprintf(stdout, "call %s: %s at %s by %s\n", esc(e.ID), esc(toolOf(e, calls)), e.Time.Local().Format(time.DateTime), esc(dash(e.Agent)))
		if err := write(stdout, e.ID); err != nil {
			return fail(exitFailed, "%v", err)
		}
	}
	return exitOK
}

func init() {
	var src source
	var session, since string
	var force, dryRun, withUndos bool
	register(&command{
		name:    "undo",
		summary: "put back what calls changed, as it was before them",
		usage:   "[--config FILE] ID... | --session S | --since DUR [--force]",
		help: `Puts back each path the given calls changed as it was before them, newest
call first: a file written or edited gets its old content and mode back,
a created one goes, a deleted file or folder tree comes back whole, a
move is moved back. Each file is put back atomically (a temporary file in
its folder, synced, then renamed over it). Each path is named as it goes:
"put back PATH", or "removed PATH" for what the calls had made.

--dry-run prints what undo would do, path by path ("would put back",
"would remove", and the paths it would leave alone), and changes nothing:
no file, no audit line, no history. It is the plan the undo carries out,
and the one the panel shows before its undo button asks for a confirmation.

A path that changed since the call (by the agent or anyone: it no longer
holds what the call left) is not touched: undo names it and exits 1.
--force puts it back all the same. A path that already holds what it
held before the call (an undo done before, or a hand, put it back) is
neither: there is nothing to put back, and undo says the call is undone
already.

--since leaves your own undos out (those made with vaultgate undo or in
the panel): "undo --since 1h" takes back what the agent did in the last
hour, not the undo you made ten minutes ago. --include-undos takes them
too. --session takes every call of that session, yours included.

Undo acts on the config's vault alone: --session and --since select only
its calls, and an id recorded for another vault that shares the state
folder is refused (exit 2). A call kept before vaults were named is its
own only when the state folder serves no other vault; otherwise it is
left alone, and said so (exit 1).

The zones don't bind undo: it is your act, not the agent's. It is an
audit line of its own (via "cli", tool "undo") with its own history, so
"vaultgate undo ID-OF-THE-UNDO" takes it back.

Exit codes: 0 done (or nothing to do: an id that changed nothing, or
whose change is undone already, says so), 1 a path was left alone (with
--dry-run: would be) or the undo failed, 2 bad usage, an id neither the
history nor the audit log knows, or a call of another vault (then nothing
is done).`,
		flags: func(fs *flag.FlagSet) {
			src.flags(fs)
			fs.StringVar(&session, "session", "", "undo every change of this session")
			fs.StringVar(&since, "since", "", "undo every change since: an RFC 3339 time, a date, or a duration back (1h, 2d)")
			fs.BoolVar(&force, "force", false, "put back paths that changed since the call too")
			fs.BoolVar(&dryRun, "dry-run", false, "print what undo would do, path by path, and change nothing")
			fs.BoolVar(&withUndos, "include-undos", false, "with --since, take back your own undos made since then too")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) == 0 && session == "" && since == "" {
				return fail(exitUsage, "undo needs call IDs, --session S or --since DUR")
			}
			if withUndos && since == "" {
				return fail(exitUsage, "--include-undos goes with --since (--session and ids take your undos as they are)")
			}
			cfg, err := src.load()
			if err != nil {
				return fail(exitUsage, "%v", err)
			}
			from, err := audit.ParseSince(since, time.Now())
			if err != nil {
				return fail(exitUsage, "--%v", err)
			}
			// Undo is the person's, not an agent's call: the config's
			// rules are not compiled for it (nor can a broken one stop it).
			g, err := server.OpenPerson(cfg)
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			defer g.Close()
			u, err := g.Undo(server.UndoRequest{IDs: args, Session: session, Since: from, SinceText: since,
				Force: force, WithUndos: withUndos, DryRun: dryRun, Via: server.ViaCLI})
			if errors.Is(err, history.ErrUnknownID) || errors.Is(err, vaultid.ErrOtherVault) {
				return fail(exitUsage, "%v (nothing was undone)", err)
			}
			if u != nil {
				// What the panel shows, in the same words (Undone.Lines);
				// paths are the agent's, ids what was typed.
				for _, l := range u.Lines() {
					if l.Problem {
						fmt.Fprintf(stderr, "vaultgate: %s\n", visible.Line.Escape(l.Text))
					} else {
						fmt.Fprintln(stdout, visible.Line.Escape(l.Text))
					}
				}
			}
			if err != nil {
				return fail(exitFailed, "%v", err)
			}
			if len(u.Conflicts) > 0 || len(u.Unnamed) > 0 {
				return exitFailed
			}
			return exitOK
		},
	})
}
