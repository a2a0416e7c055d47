package tools

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/zones"
)

// Claude Code's built-in tools, as the PreToolUse hook sees them. They are
// judged by the same planners and rules as the vault's own tools, but never
// run here: the hook only answers, and Claude Code runs the tool.
//
// Their arguments are Claude Code's (file_path, notebook_path, pattern, …),
// read leniently: Claude Code adds fields of its own (description,
// run_in_background) that have no bearing on what is touched.
func hookTools() []Tool {
	str := func(name string, required bool) Param { return Param{Name: name, Type: "string", Required: required} }
	return []Tool{
		{Name: "Read", ReadOnly: true, Params: []Param{str("file_path", true)}, plan: hookRead},
		{Name: "Write", Params: []Param{str("file_path", true), str("content", false)}, plan: hookWrite("file_path")},
		{Name: "Edit", Params: []Param{str("file_path", true), str("old_string", false), str("new_string", false)}, plan: hookEdit},
		{Name: "MultiEdit", Params: []Param{str("file_path", true)}, plan: hookWrite("file_path")},
		{Name: "NotebookEdit", Params: []Param{str("notebook_path", true)}, plan: hookWrite("notebook_path")},
		{Name: "Glob", ReadOnly: true, Params: []Param{str("pattern", true), str("path", false)}, plan: hookFind},
		{Name: "Grep", ReadOnly: true, Params: []Param{str("pattern", true), str("path", false), str("glob", false)}, plan: hookFind},
		{Name: "Bash", Params: []Param{str("command", true)}, plan: hookBash},
	}
}

// errNotRun guards the one thing a hook plan must never do.
var errNotRun = errors.New("a hook plan is judged, never run")

func judgedOnly(p *Plan) *Plan {
	p.Run = func(context.Context) (*Result, error) { return nil, errNotRun }
	return p
}

// hookPath reads a path argument as Claude Code gives it: absolute, or
// relative to the session's working directory.
func (s *Set) hookPath(a args, name string) (zones.Path, error) {
	raw := a.str(name)
	if raw != "" && !path.IsAbs(raw) && s.Cwd != "" {
		raw = path.Join(s.Cwd, raw)
	}
	return s.path(args{tool: a.tool, m: map[string]any{name: raw}}, name)
}

func hookRead(s *Set, a args) (*Plan, error) {
	p, err := s.hookPath(a, "file_path")
	if err != nil {
		return nil, err
	}
	e, err := s.readEffect(p)
	if err != nil {
		return nil, err
	}
	if st, err := s.stat(e.Path); err == nil && st.exists && !st.dir {
		e.Exists, e.Size, e.ModTime = true, st.fi.Size(), st.fi.ModTime()
	}
	return judgedOnly(&Plan{Effects: []policy.Effect{e}}), nil
}

// hookWrite plans a tool that creates the file or changes it: Write,
// MultiEdit and NotebookEdit touch one file, whatever their other fields.
func hookWrite(field string) func(*Set, args) (*Plan, error) {
	return func(s *Set, a args) (*Plan, error) {
		p, err := s.hookPath(a, field)
		if err != nil {
			return nil, err
		}
		_, _, effects, err := s.writeEffects(p)
		if err != nil {
			return nil, err
		}
		return judgedOnly(&Plan{Effects: effects}), nil
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
	return judgedOnly(&Plan{Effects: []policy.Effect{e}}), nil
}

// hookFind plans Glob and Grep: they walk a folder and show what is inside
// it, and Claude Code does not skip hidden paths as list and search do, so
// they need read in every zone of the subtree.
func hookFind(s *Set, a args) (*Plan, error) {
	root := s.Cwd
	if a.has("path") && a.str("path") != "" {
		root = a.str("path")
	}
	if root == "" {
		root = s.Vault.Root
	}
	if a.tool == "Glob" {
		// a pattern may climb out ("../../etc/*"): its literal prefix is
		// part of the folder walked
		pattern := a.str("pattern")
		if i := strings.IndexAny(pattern, "*?[{"); i >= 0 {
			pattern = pattern[:i]
		}
		if dir := path.Dir(pattern + "x"); dir != "." {
			if path.IsAbs(dir) {
				root = dir
			} else {
				root = path.Join(root, dir)
			}
		}
	}
	p, err := s.hookPath(args{tool: a.tool, m: map[string]any{"path": root}}, "path")
	if err != nil {
		return nil, err
	}
	e, err := s.readEffect(p)
	if err != nil {
		return nil, err
	}
	e.Subtree = true
	return judgedOnly(&Plan{Effects: []policy.Effect{e}}), nil
}

// hookBash plans a built-in Bash command, run from the session's cwd. It is
// never walled — Claude Code runs it bare — so exec effects are always
// denied, whatever the wall setting says.
func hookBash(s *Set, a args) (*Plan, error) {
	p, err := s.analyseBash(a.str("command"), s.Cwd)
	if err != nil {
		return nil, err
	}
	p.Walled = false
	return judgedOnly(p), nil
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
