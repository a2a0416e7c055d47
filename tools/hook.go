package tools

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// HookCall is what a hook set knows of the Claude Code call it judges,
// besides the tool's own input.
type HookCall struct {
	// After is PostToolUse: Claude Code has run the tool, and the plan is
	// of what vaultgate records about it.
	After bool
	// Cwd is the session's working directory: relative paths and Bash
	// start there; "" is the vault root for paths, and refuses a Bash call.
	Cwd string
	// ServerName is [hook] server_name: mcp__<ServerName>__* are the vault
	// server's own tools.
	ServerName string
	// Exec names vaultgate exec, through which an allowed Bash runs (see
	// hookexec.go); nil refuses every Bash, for ExecProblem's reason.
	Exec        *claude.Exec
	ExecProblem string
	// Sandbox, when not "", says Claude Code's own sandbox is on: the
	// settings file that turns it on.
	Sandbox string
	// ToolUseID is Claude Code's id of the tool call, carried to the
	// audit lines; "" from a Claude Code too old to send it.
	ToolUseID string
	// Home is Claude Code's home, where "~" in a path of its tools leads:
	// the HOME of the hook process, which Claude Code started with its own
	// environment (see claudePath). "" when unknown, and then such a path
	// is refused.
	Home string
}

// Claude Code's built-in tools, as its hooks see them. They are planned and
// judged like the vault's own tools, but vaultgate never runs them: Claude
// Code does. Before a call (PreToolUse) each is planned by what it would do;
// its run only stamps a file Read is about to read. After it (PostToolUse)
// the tools that read or wrote a file plan a read of it as it is now, whose
// run stamps it for read_before_write; the others leave nothing to record.
//
// Their arguments are Claude Code's (file_path, notebook_path, pattern, …),
// read leniently: Claude Code adds fields of its own (description,
// run_in_background) that have no bearing on what is touched.
func hookTools(after bool) []Tool {
	str := func(name string, required bool) Param { return Param{Name: name, Type: "string", Required: required} }
	phase := func(before planner, file string) planner {
		switch {
		case !after:
			return before
		case file != "":
			return hookSeen(file)
		}
		return hookRan
	}
	ts := []Tool{
		{Name: "Read", Params: []Param{str("file_path", true)}, plan: hookSeen("file_path")},
		{Name: "Write", Params: []Param{str("file_path", true), str("content", false)}, plan: phase(hookWrite("file_path"), "file_path")},
		{Name: "Edit", Params: []Param{str("file_path", true), str("old_string", false), str("new_string", false)}, plan: phase(hookEdit, "file_path")},
		{Name: "MultiEdit", Params: []Param{str("file_path", true)}, plan: phase(hookWrite("file_path"), "file_path")},
		{Name: "NotebookEdit", Params: []Param{str("notebook_path", true)}, plan: phase(hookWrite("notebook_path"), "notebook_path")},
		{Name: "Glob", Params: []Param{str("pattern", true), str("path", false)}, plan: phase(hookFind, "")},
		{Name: "Grep", Params: []Param{str("pattern", true), str("path", false), str("glob", false)}, plan: phase(hookFind, "")},
		{Name: "Bash", Params: []Param{str("command", true), {Name: "timeout", Type: "integer"}}, plan: phase(hookBash, "")},
	}
	for i := range ts {
		// What vaultgate runs of them changes no file, so they take no
		// vault lock: a hook never waits behind a long bash call.
		ts[i].ReadOnly = true
	}
	return ts
}

type planner = func(*Set, args) (*Plan, error)

// ranByClaudeCode gives a hook plan its run: nothing, since Claude Code runs
// the tool itself. Its outcome is Claude Code's, so the result is nil.
func ranByClaudeCode(p *Plan) *Plan {
	p.Run = func(context.Context) (*Result, error) { return nil, nil }
	return p
}

// hookPath reads a path argument as Claude Code resolves it (claudePath).
func (s *Set) hookPath(a args, name string) (zones.Path, error) {
	raw, err := s.claudePath(a.str(name))
	if err != nil {
		return zones.Path{}, a.bad(name, say.ArgHomeUnknown{})
	}
	return s.path(args{tool: a.tool, m: map[string]any{name: raw}, lang: a.lang}, name)
}

// errHomeUnknown is a path starting with ~ when Claude Code's home is not
// known.
var errHomeUnknown = errors.New("the home of Claude Code is not known")

// claudePath spells a path field of Claude Code's tools (file_path,
// notebook_path, path) as Claude Code resolves it before its tool runs:
// white space trimmed as JavaScript trims it; "~" and "~/…" in its home; a
// relative path from the session's working directory. Claude Code hands
// the hook most paths already resolved, but not Glob's and Grep's path,
// nor one it failed to resolve, so the hook resolves every one alike.
//
// "~user/…" is not expanded: Claude Code expands only "~" and "~/" and
// takes "~user" as a folder of that name below the working directory, and
// so does the hook (expanding it would judge a folder Claude Code never
// reads). Claude Code's home is its runtime's os.homedir(): $HOME when set
// and not empty, else the user's passwd entry. The hook process inherits
// Claude Code's environment, so Home is that $HOME; with none (unset,
// empty, relative) the hook can't be sure where "~" leads, and refuses
// the path rather than guess from the passwd file.
func (s *Set) claudePath(raw string) (string, error) {
	p := strings.TrimFunc(raw, jsSpace)
	if p == "~" || strings.HasPrefix(p, "~/") {
		if !path.IsAbs(s.Hook.Home) {
			return "", errHomeUnknown
		}
		p = path.Join(s.Hook.Home, p[1:])
	}
	if p != "" && !path.IsAbs(p) && s.Hook.Cwd != "" {
		p = path.Join(s.Hook.Cwd, p)
	}
	return p, nil
}

// hookSeen plans a read of the file in field where it really leads; its run
// stamps the file as it is now: the session has seen it (Read), or has just
// written it itself (after Write, Edit, …), and may change it next.
func hookSeen(field string) planner {
	return func(s *Set, a args) (*Plan, error) {
		p, err := s.hookPath(a, field)
		if err != nil {
			return nil, err
		}
		e, err := s.readEffect(p)
		if err != nil {
			return nil, err
		}
		st, _ := s.stat(e.Path) // can't be told apart: no stamp, so a later write needs a read
		return &Plan{Effects: []policy.Effect{e}, Run: func(context.Context) (*Result, error) {
			if s.Hook.After {
				s.confirmHookWrite(e.Path.String())
			} else {
				s.settleHookWrites()
			}
			if st.regular && s.State != nil {
				policy.MarkRead(s.State, e.Path.String(), st.fi.Size(), st.fi.ModTime())
			}
			return nil, nil
		}}, nil
	}
}

// hookRan plans the after-phase of a tool that leaves nothing to record.
func hookRan(*Set, args) (*Plan, error) { return ranByClaudeCode(&Plan{}), nil }

// hookWrite plans a tool that creates the file or changes it: Write,
// MultiEdit and NotebookEdit touch one file, whatever their other fields.
func hookWrite(field string) planner {
	return func(s *Set, a args) (*Plan, error) {
		p, err := s.hookPath(a, field)
		if err != nil {
			return nil, err
		}
		_, _, effects, err := s.writeEffects(p)
		if err != nil {
			return nil, err
		}
		return s.keptByHook(&Plan{Effects: effects}), nil
	}
}

// keptByHook gives the plan of a Claude Code write a run that keeps the
// pre-image of each path it may change, before Claude Code changes it:
// its error refuses the write (fail closed). An earlier write of the
// session still unconfirmed (its PostToolUse never came) is settled first:
// failed if the file still holds its pre-image.
func (s *Set) keptByHook(p *Plan) *Plan {
	p.Run = func(context.Context) (*Result, error) {
		if s.History == nil {
			return nil, nil
		}
		s.settleHookWrites()
		var targets []history.Target
		for _, e := range p.Effects {
			if !e.Path.IsZero() {
				targets = append(targets, history.Target{Op: history.Op(e.Op.String()), Path: e.Path.String()})
			}
		}
		if len(targets) == 0 {
			return nil, nil
		}
		if _, err := s.History.Begin(s.CallID, s.Call, targets); err != nil {
			return nil, s.fail(say.HistoryFailed{Path: targets[0].Path, Problem: err.Error()})
		}
		// The PostToolUse of the file confirms what the write left.
		for _, t := range targets {
			if s.State != nil {
				policy.Keep(s.State, t.Path, s.CallID)
			}
		}
		return nil, nil
	}
	return p
}

// settleHookWrites settles every write of the session kept and not yet
// confirmed: one whose PostToolUse never came is failed if the file still
// holds its pre-image.
func (s *Set) settleHookWrites() {
	st, ok := s.History.(*history.Store)
	if !ok || s.State == nil {
		return
	}
	for _, id := range policy.TakeAllKept(s.State) {
		st.Confirm(id)
	}
}

// confirmHookWrite settles, at a file's PostToolUse, the entry its
// PreToolUse kept: applied if Claude Code changed the file, failed if not.
func (s *Set) confirmHookWrite(rel string) {
	st, ok := s.History.(*history.Store)
	if !ok || s.State == nil {
		return
	}
	if id, found := policy.TakeKept(s.State, rel); found {
		st.Confirm(id)
	}
}

func hookEdit(s *Set, a args) (*Plan, error) {
	p, err := s.hookPath(a, "file_path")
	if err != nil {
		return nil, err
	}
	rel, st, link, err := s.targetOf(p)
	if err != nil {
		return nil, err
	}
	e := fileEffect(zones.OpModify, rel, st)
	e.SymlinkTo = link
	e.NeedsFreshRead = true
	return s.keptByHook(&Plan{Effects: []policy.Effect{e}}), nil
}

// hookFind plans Glob and Grep: they walk a folder and show what is inside
// it, and Claude Code does not skip hidden paths as list and search do, so
// they need read in every zone of the subtree they can reach. That is the
// folder ripgrep walks (Grep's path, Glob's path, or the folder of an
// absolute Glob pattern; the session's folder by default), narrowed by the
// globs as ripgrep reads them (hookglob.go): a read of each folder they may
// list from.
func hookFind(s *Set, a args) (*Plan, error) {
	type walk struct {
		dir   string   // as Claude Code spells it ("" is the session's folder)
		globs []string // ripgrep's --glob
	}
	var walks []walk
	var folders []string // judged as they are, not walked
	switch a.tool {
	case "Glob":
		pattern := a.str("pattern")
		if dir, glob, ok := claudeGlobBase(pattern); ok {
			// Claude Code searches the folder as written, escapes and all;
			// the folder the pattern names unescaped is judged too
			walks = append(walks, walk{dir, []string{glob}})
			if g := parseRgGlob(pattern); len(g.lead) > 0 {
				folders = append(folders, "/"+path.Join(g.lead...))
			} else {
				folders = append(folders, "/")
			}
		} else {
			walks = append(walks, walk{a.str("path"), []string{pattern}})
		}
	case "Grep":
		globs := claudeGrepGlobs(a.str("glob"))
		dir, also := a.str("path"), ""
		// Claude Code reads a Grep's file_path as its path when path is
		// missing or the same; a file_path beside another path is judged
		// too
		if fp, _ := a.m["file_path"].(string); fp != "" {
			if _, given := a.m["path"]; !given || dir == fp {
				dir = fp
			} else {
				also = fp
			}
		}
		walks = append(walks, walk{dir, globs})
		if also != "" {
			walks = append(walks, walk{also, globs})
		}
	}
	for _, w := range walks {
		dir, err := s.claudePath(w.dir)
		if err != nil {
			return nil, a.bad("path", say.ArgHomeUnknown{})
		}
		if dir == "" {
			dir = s.Hook.Cwd
		}
		if dir == "" {
			dir = s.Vault.Root
		}
		if !path.IsAbs(dir) {
			dir = path.Join(s.Vault.Root, dir)
		}
		p, err := s.path(args{tool: a.tool, m: map[string]any{"path": dir}, lang: a.lang}, "path")
		if err != nil {
			return nil, err
		}
		// ripgrep narrows by its globs only inside a folder it walks: a
		// file, a link or a missing folder is judged whole
		if st, err := s.stat(p); err == nil && st.dir && !st.symlink {
			folders = append(folders, rgReach(dir, w.globs)...)
		} else {
			folders = append(folders, dir)
		}
	}
	var effects []policy.Effect
	for _, f := range folders {
		p, err := s.path(args{tool: a.tool, m: map[string]any{"path": f}, lang: a.lang}, "path")
		if err != nil {
			return nil, err
		}
		e, err := s.readEffect(p)
		if err != nil {
			return nil, err
		}
		e.Subtree = true
		if !slices.ContainsFunc(effects, func(o policy.Effect) bool { return o.Path == e.Path }) {
			effects = append(effects, e)
		}
	}
	return ranByClaudeCode(&Plan{Effects: effects}), nil
}

// ForeignTool is the fact on a call of a tool the hook does not judge by
// its effects, for the hook_scope rule.
type ForeignTool struct {
	// Forwarded: the tool is the vault server's own (mcp__<server_name>__*),
	// and the server judges and records the call when it gets it.
	Forwarded bool
	// Passes: one of Claude Code's tools that touch no file; Refused: one
	// it refuses on purpose, and why (claude's catalogue).
	Passes  bool
	Refused *say.BuiltinWhy
}

func foreignTool(name string) Tool {
	return Tool{Name: name, ReadOnly: true, plan: planForeign}
}

// planForeign plans a tool that is not the hook's to judge: it has no
// effects the hook could know, so the hook_scope rule decides it.
func planForeign(s *Set, a args) (*Plan, error) {
	forwarded := strings.HasPrefix(a.tool, "mcp__"+s.Hook.ServerName+"__")
	passes, refused := claude.Verdict(a.tool, a.m)
	return ranByClaudeCode(&Plan{Facts: ForeignTool{Forwarded: forwarded, Passes: passes, Refused: refused}, Forwarded: forwarded}), nil
}

// HookScopeRule decides the hook's calls of foreign tools: the vault
// server's own pass (the server judges them), Claude Code's tools that
// touch no file pass, those it refuses on purpose are refused whatever
// allow says, those [hook] allow lists pass, and any other is refused. Claude Code's built-ins never reach it:
// they are planned and judged by their effects, so allow can't switch
// their checks off, whatever it matches.
func HookScopeRule(h config.Hook) policy.Rule {
	return policy.Rule{Name: "hook_scope", Check: func(c *policy.ToolCall) *policy.Deny {
		f, foreign := c.Facts.(ForeignTool)
		if foreign && f.Refused != nil {
			return &policy.Deny{Reason: say.HookBuiltinRefused{Tool: c.Tool, Why: *f.Refused}.Text(c.Lang)}
		}
		if !foreign || f.Forwarded || f.Passes || hookAllows(h.Allow, c.Tool) {
			return nil
		}
		return &policy.Deny{Reason: say.HookToolRefused{Tool: c.Tool, Server: h.ServerName}.Text(c.Lang)}
	}}
}

func hookAllows(allow []string, tool string) bool {
	return slices.ContainsFunc(allow, func(a string) bool { return allowMatches(a, tool) })
}

// allowMatches reads one [hook] allow entry: a tool name, or a prefix
// ending in *.
func allowMatches(entry, tool string) bool {
	if prefix, ok := strings.CutSuffix(entry, "*"); ok {
		return strings.HasPrefix(tool, prefix)
	}
	return entry == tool
}

// JudgedDespiteAllow lists the tools the hook judges itself that an entry
// of allow names or matches. Allow has no effect on them, which a person
// who wrote it may not expect: the commands say so.
func JudgedDespiteAllow(allow []string) []string {
	var out []string
	for _, t := range hookTools(false) {
		if hookAllows(allow, t.Name) {
			out = append(out, t.Name)
		}
	}
	refused := claude.Named(claude.Refused)
	slices.Sort(refused)
	for _, t := range refused {
		if hookAllows(allow, t) {
			out = append(out, t) // refused on purpose, whatever allow says
		}
	}
	return out
}

// targetOf is target for a path that is already normalised.
func (s *Set) targetOf(p zones.Path) (rel zones.Path, st stat, link string, err error) {
	if rel, err = s.Vault.Resolve(p, false); err != nil {
		return zones.Path{}, stat{}, "", err
	}
	if st, err = s.stat(rel); err != nil {
		return zones.Path{}, stat{}, "", err
	}
	if st.symlink {
		to, err := s.Vault.Resolve(rel, true)
		if err != nil {
			return zones.Path{}, stat{}, "", err
		}
		link = to.String()
	}
	return rel, st, link, nil
}
