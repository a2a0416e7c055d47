package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// Claude Code's two project files that make it use vaultgate, as init
// writes or merges them: DIR/.mcp.json (the vault's MCP server) and
// DIR/.claude/settings.json (the hook before and after every tool call,
// and the vault's tools allowed).
//
// What is init's own: the server entry named [hook] server_name, any
// mcpServers entry that runs "vaultgate serve", every hook command that
// runs vaultgate's hook, and the permissions.allow entry of a server it
// owns. Everything else in the files is kept as it was, key order and
// all. A run that would change nothing writes nothing.

// Setup is what init puts into Claude Code's files.
type Setup struct {
	Exe, Hook  string // absolute paths: vaultgate, and the hook command's binary
	HookArgs   string // "" for vaultgate-hook, "hook" for vaultgate itself
	Config     string // absolute
	ServerName string
}

// hookCommandLine is the command Claude Code runs for each tool call.
// "|| exit 2" makes a hook that can't start (exit 127) block the call in a
// Claude Code older than 2.1.295, which has no onFailure.
func (s Setup) hookCommandLine() string {
	cmd := quote(s.Hook)
	if s.HookArgs != "" {
		cmd += " " + s.HookArgs
	}
	return cmd + " --config " + quote(s.Config) + " || exit 2"
}

// postMatcher names the tools whose PostToolUse the hook records, for
// read_before_write: what Claude Code read or wrote.
const postMatcher = "Read|Write|Edit|MultiEdit|NotebookEdit"

// hookGroup is the matcher group of vaultgate's hook. onFailure "block"
// (Claude Code 2.1.295 and later) blocks the call when the hook can't
// start, times out or exits with a code it does not expect.
func (s Setup) hookGroup(matcher string) json.RawMessage {
	h := newObj()
	h.setValue("type", "command")
	h.setValue("command", s.hookCommandLine())
	h.setValue("timeout", 30)
	h.setValue("onFailure", "block")
	g := newObj()
	g.setValue("matcher", matcher)
	g.set("hooks", append(append([]byte("["), h.bytes()...), ']'))
	return g.bytes()
}

// IsVaultgateHook says a hook command runs vaultgate's hook: its first
// word is a vaultgate-hook binary, or a vaultgate binary whose next word is
// "hook". (vaultgate-hook-x is not ours: a name with a suffix is ours only
// as the main binary.)
func IsVaultgateHook(command string) bool {
	words := HookWords(command)
	if len(words) == 0 {
		return false
	}
	base := filepath.Base(words[0])
	return base == "vaultgate-hook" || isVaultgateName(base) && len(words) > 1 && words[1] == "hook"
}

// isVaultgateName says a binary's name is vaultgate's: "vaultgate", or
// that with a suffix (vaultgate.test, vaultgate-1.2).
func isVaultgateName(base string) bool {
	rest, ok := strings.CutPrefix(base, "vaultgate")
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '-' || rest[0] == '_')
}

// IsVaultgateServer says an mcpServers entry runs "vaultgate serve".
func IsVaultgateServer(raw json.RawMessage) bool {
	var e struct {
		Command string
		Args    []string
	}
	return json.Unmarshal(raw, &e) == nil && isVaultgateName(filepath.Base(e.Command)) && len(e.Args) > 0 && e.Args[0] == "serve"
}

// HookWords splits a command line as sh would for the simple cases init
// writes (single quotes, plain words); it stops at the first operator.
func HookWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted:
			if c == '\'' {
				quoted = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			quoted, in = true, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '|' || c == ';' || c == '&':
			if in {
				words = append(words, cur.String())
			}
			return words
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// mergeMCP sets the vault's server in .mcp.json (install) or removes every
// vaultgate server (uninstall). It returns what it did, for the person, and
// the server names removed.
func mergeMCP(o *jsonObj, s Setup, uninstall bool) (changes, removed []string, err error) {
	servers, err := o.obj("mcpServers")
	if err != nil {
		return nil, nil, err
	}
	for _, name := range append([]string(nil), servers.keys...) {
		if IsVaultgateServer(servers.vals[name]) && (uninstall || name != s.ServerName) {
			servers.del(name)
			removed = append(removed, name)
			changes = append(changes, fmt.Sprintf("removed mcpServers.%s (vaultgate serve)", name))
		}
	}
	if !uninstall {
		env := json.RawMessage(`{}`)
		if old, ok := servers.vals[s.ServerName]; ok {
			// the person's env (secrets for [[bash.secrets]]) stays
			var e struct {
				Env json.RawMessage `json:"env"`
			}
			if json.Unmarshal(old, &e) == nil && len(e.Env) > 0 && string(e.Env) != "null" {
				env = e.Env
			}
		}
		entry := newObj()
		entry.setValue("command", s.Exe)
		entry.setValue("args", []string{"serve", "--config", s.Config})
		entry.set("env", env)
		if old, ok := servers.vals[s.ServerName]; !ok || !sameJSON(old, entry.bytes()) {
			changes = append(changes, fmt.Sprintf("set mcpServers.%s: %s serve --config %s", s.ServerName, s.Exe, s.Config))
		}
		servers.set(s.ServerName, entry.bytes())
	}
	o.setObj("mcpServers", servers, uninstall)
	return changes, removed, nil
}

// mergeSettings puts the hook before every tool call and after the ones it
// records, and the vault's tools in permissions.allow (install), or takes
// vaultgate's hooks and the allow entries of removed servers out.
func mergeSettings(o *jsonObj, s Setup, uninstall bool, removedServers []string) (changes []string, err error) {
	hooks, err := o.obj("hooks")
	if err != nil {
		return nil, err
	}
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		groups, err := hooks.list(event)
		if err != nil {
			return nil, fmt.Errorf("hooks: %w", err)
		}
		kept, dropped, err := withoutVaultgateHooks(groups)
		if err != nil {
			return nil, fmt.Errorf("hooks.%s: %w", event, err)
		}
		if !uninstall {
			matcher := "*"
			if event == "PostToolUse" {
				matcher = postMatcher
			}
			ours := s.hookGroup(matcher)
			if dropped != 1 || !containsJSON(groups, ours) {
				changes = append(changes, fmt.Sprintf("set hooks.%s %q: %s (onFailure: block)", event, matcher, s.hookCommandLine()))
			}
			kept = append(kept, ours)
		} else if dropped > 0 {
			changes = append(changes, fmt.Sprintf("removed vaultgate's hook from hooks.%s", event))
		}
		hooks.setList(event, kept, uninstall)
	}
	o.setObj("hooks", hooks, uninstall)

	perms, err := o.obj("permissions")
	if err != nil {
		return nil, err
	}
	allow, err := perms.list("allow")
	if err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	own := map[string]bool{}
	for _, name := range removedServers {
		own["mcp__"+name] = true
	}
	if uninstall {
		own["mcp__"+s.ServerName] = s.ServerName != ""
	}
	var out []json.RawMessage
	found := false
	for _, v := range allow {
		var rule string
		json.Unmarshal(v, &rule)
		switch {
		case !uninstall && rule == "mcp__"+s.ServerName:
			found = true
			out = append(out, v)
		case own[rule]:
			changes = append(changes, fmt.Sprintf("removed permissions.allow %q", rule))
		default:
			out = append(out, v)
		}
	}
	if !uninstall && !found {
		b, _ := json.Marshal("mcp__" + s.ServerName)
		out = append(out, b)
		changes = append(changes, fmt.Sprintf("added permissions.allow %q (the vault's tools; the server judges each call)", "mcp__"+s.ServerName))
	}
	if len(out) != len(allow) || !uninstall {
		perms.setList("allow", out, uninstall)
	}
	o.setObj("permissions", perms, uninstall)
	return changes, nil
}

// withoutVaultgateHooks removes every vaultgate hook command from the
// matcher groups, and a group it leaves with no hook; dropped counts the
// commands removed.
func withoutVaultgateHooks(groups []json.RawMessage) (kept []json.RawMessage, dropped int, err error) {
	for _, g := range groups {
		obj, err := parseObj(g)
		if err != nil {
			return nil, 0, err
		}
		hs, err := obj.list("hooks")
		if err != nil {
			return nil, 0, err
		}
		var rest []json.RawMessage
		for _, h := range hs {
			var cmd struct{ Command string }
			if json.Unmarshal(h, &cmd) == nil && IsVaultgateHook(cmd.Command) {
				dropped++
				continue
			}
			rest = append(rest, h)
		}
		if len(rest) == len(hs) {
			kept = append(kept, g)
			continue
		}
		if len(rest) > 0 {
			obj.setList("hooks", rest, false)
			kept = append(kept, obj.bytes())
		}
	}
	return kept, dropped, nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func containsJSON(l []json.RawMessage, v []byte) bool {
	for _, x := range l {
		if sameJSON(x, v) {
			return true
		}
	}
	return false
}

// File is one of the two files, as it is and as init would leave it.
type File struct {
	Path    string
	Old     []byte // nil: absent
	New     []byte // nil: to be removed (uninstall left it empty)
	Changes []string
}

// PlanFiles works out both files for DIR without writing anything.
func PlanFiles(dir string, s Setup, uninstall bool) ([]*File, error) {
	mcp := &File{Path: filepath.Join(dir, ".mcp.json")}
	settings := &File{Path: filepath.Join(dir, ".claude", "settings.json")}
	for _, f := range []*File{mcp, settings} {
		b, err := os.ReadFile(f.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			f.Old = b
		}
	}
	mo, err := parseObj(mcp.Old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mcp.Path, err)
	}
	changes, removed, err := mergeMCP(mo, s, uninstall)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", mcp.Path, err)
	}
	mcp.Changes = changes
	so, err := parseObj(settings.Old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", settings.Path, err)
	}
	if settings.Changes, err = mergeSettings(so, s, uninstall, removed); err != nil {
		return nil, fmt.Errorf("%s: %w", settings.Path, err)
	}
	for _, pair := range []struct {
		f *File
		o *jsonObj
	}{{mcp, mo}, {settings, so}} {
		switch {
		case uninstall && len(pair.o.keys) == 0 && pair.f.Old != nil:
			pair.f.New = nil // nothing of the person's was in it
		case uninstall && pair.f.Old == nil:
			pair.f.New = nil
		default:
			pair.f.New = pair.o.indented()
		}
		if pair.f.Old != nil && pair.f.New != nil && sameJSON(pair.f.Old, pair.f.New) && len(pair.f.Changes) == 0 {
			pair.f.New = pair.f.Old // a rerun leaves the file byte for byte
		}
	}
	return []*File{mcp, settings}, nil
}

// Unchanged reports whether init would leave the file as it is.
func (f *File) Unchanged() bool {
	return bytes.Equal(f.Old, f.New) && (f.Old == nil) == (f.New == nil)
}

// Apply writes the file (or removes it), after a backup of the old one in
// DIR/.claude/vaultgate-backup, a control folder the agent can't change.
func (f *File) Apply(dir string, now time.Time) (backup string, err error) {
	if f.Unchanged() {
		return "", nil
	}
	if f.Old != nil {
		bdir := filepath.Join(dir, ".claude", "vaultgate-backup")
		if err := os.MkdirAll(bdir, 0o700); err != nil {
			return "", err
		}
		backup = filepath.Join(bdir, now.UTC().Format("20060102T150405.000000000Z")+"-"+filepath.Base(f.Path))
		if err := os.WriteFile(backup, f.Old, 0o600); err != nil {
			return "", err
		}
	}
	if f.New == nil {
		return backup, os.Remove(f.Path)
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return "", err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(f.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp := f.Path + ".vaultgate-new"
	if err := os.WriteFile(tmp, f.New, mode); err != nil {
		return "", err
	}
	return backup, os.Rename(tmp, f.Path)
}

// quote is s as one word for bash: the shell parser's own quoting
// (syntax.Quote), which leaves a plain word alone.
func quote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return strconv.Quote(s) // a NUL or broken UTF-8: no path holds one
	}
	return q
}

// Entries are vaultgate's entries of the two files alone, for a person to
// add by hand: .mcp.json's and .claude/settings.json's.
func Entries(s Setup) (mcp, settings []byte) {
	m, st := newObj(), newObj()
	mergeMCP(m, s, false)
	mergeSettings(st, s, false, nil)
	return m.indented(), st.indented()
}

// Installed is what Claude Code's two files in a folder say of vaultgate,
// as doctor checks them.
type Installed struct {
	Dir, MCPPath, SettingsPath string
	// MCPErr and SettingsErr say why a file says nothing: missing
	// (fs.ErrNotExist), unreadable, or not a JSON object (ErrNotObject).
	MCPErr, SettingsErr                     error
	ServerName, ServerCommand, ServerConfig string // the vaultgate server of .mcp.json, if any
	Hooks                                   map[string][]InstalledHook
	// DefaultMode and Deny are settings.json's permissions.
	DefaultMode string
	Deny        []string
}

// InstalledHook is one of vaultgate's hook commands in settings.json.
type InstalledHook struct {
	Matcher, Command, OnFailure string
}

// ErrNotObject is a Claude Code file that is not a JSON object.
var ErrNotObject = errors.New("not a JSON object")

// ReadInstalled reads Claude Code's files in dir (absolute).
func ReadInstalled(dir string) *Installed {
	f := &Installed{Dir: dir, MCPPath: filepath.Join(dir, ".mcp.json"), SettingsPath: filepath.Join(dir, ".claude", "settings.json"), Hooks: map[string][]InstalledHook{}}
	read := func(path string, problem *error) *jsonObj {
		b, err := os.ReadFile(path)
		if err != nil {
			*problem = err
			return newObj()
		}
		o, err := parseObj(b)
		if err != nil {
			*problem = fmt.Errorf("%w: %v", ErrNotObject, err)
			return newObj()
		}
		return o
	}
	mcp, settings := read(f.MCPPath, &f.MCPErr), read(f.SettingsPath, &f.SettingsErr)
	servers, _ := mcp.obj("mcpServers")
	for _, name := range servers.keys {
		if IsVaultgateServer(servers.vals[name]) {
			var e struct {
				Command string
				Args    []string
			}
			json.Unmarshal(servers.vals[name], &e)
			f.ServerName, f.ServerCommand = name, e.Command
			if i := slices.Index(e.Args, "--config"); i >= 0 && i+1 < len(e.Args) {
				f.ServerConfig = e.Args[i+1]
			}
			break
		}
	}
	perms, _ := settings.obj("permissions")
	json.Unmarshal(perms.vals["defaultMode"], &f.DefaultMode)
	json.Unmarshal(perms.vals["deny"], &f.Deny)
	hooks, _ := settings.obj("hooks")
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		groups, _ := hooks.list(event)
		for _, g := range groups {
			var grp struct {
				Matcher string
				Hooks   []struct{ Command, OnFailure string }
			}
			json.Unmarshal(g, &grp)
			for _, h := range grp.Hooks {
				if IsVaultgateHook(h.Command) {
					f.Hooks[event] = append(f.Hooks[event], InstalledHook{grp.Matcher, h.Command, h.OnFailure})
				}
			}
		}
	}
	return f
}
