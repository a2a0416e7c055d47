package main

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/transport"
	"github.com/vaultgate/vaultgate/vaultid"
	"github.com/vaultgate/vaultgate/visible"
	"github.com/vaultgate/vaultgate/zones"
)

func init() {
	var src source
	var claudeDir string
	register(&command{
		name:    "doctor",
		summary: "check a setup: the config, the zones, the wall, Claude Code's files; a fix for each problem",
		usage:   "[--config FILE] [--claude DIR]",
		help: `Checks, line by line, what vaultgate needs and says how to fix what is
wrong: the config loads (the one --config or $VAULTGATE_CONFIG names,
else the one vaultgate init set up for the vault that holds the current
folder); every zone path exists (a protected or hidden entry that names
nothing leaves open what it was to close: a problem, with a "did you
mean", unless it ends with ? for a folder expected later); the audit and
state folders are writable and hidden from the agent, and serve this
vault alone (a state folder shared with another vault is a warning); the
kernel's wall
features (or why bash is off); HTTP tokens, where HTTP or [agents] is
configured. With --claude DIR it also checks Claude Code's files there:
the binaries .mcp.json and settings.json name exist and are this build of
vaultgate, the server's name is [hook] server_name, the hook commands name
this config and block when they fail, and the workspace is trusted. Given
only --claude, the config is the one DIR/.mcp.json names.

Exit status: 0 when all is well (warnings too), 1 when something is wrong,
2 bad usage.`,
		flags: func(fs *flag.FlagSet) {
			src.configFlag(fs)
			fs.StringVar(&claudeDir, "claude", "", "the folder Claude Code is started in")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			if len(args) > 0 {
				return fail(exitUsage, "doctor takes no arguments (see --help)")
			}
			cfgPath := src.config
			if cfgPath == "" && claudeDir == "" {
				// found as every command finds it; none to be found is
				// the person's to pick (exit 2)
				cfg, err := src.load()
				var none *config.NoConfigError
				if errors.As(err, &none) {
					return fail(exitUsage, "%v", err)
				}
				if err == nil {
					cfgPath = cfg.File
				} else if cfgPath = os.Getenv(configEnv); cfgPath == "" {
					return fail(exitUsage, "%v", err)
				}
			}
			d := &doctor{}
			d.run(cfgPath, claudeDir)
			if d.problems > 0 {
				fmt.Fprintf(stdout, "\n%d problem(s), %d warning(s)\n", d.problems, d.warnings)
				return 1
			}
			fmt.Fprintf(stdout, "\nall well (%d warning(s))\n", d.warnings)
			return exitOK
		},
	})
}

type doctor struct {
	problems, warnings int
}

// ok, warn and problem print a line of the check. What a line names (a
// path, a hook's command, an error) may come from the vault or from files
// the agent could write, so each goes through the one escape, its own
// lines kept (visible.Block).
func (d *doctor) ok(format string, a ...any) {
	fmt.Fprintf(stdout, "ok       %s\n", visible.Block.Escape(fmt.Sprintf(format, a...)))
}

func (d *doctor) warn(fix, format string, a ...any) {
	d.warnings++
	fmt.Fprintf(stdout, "warning  %s\n         fix: %s\n", visible.Block.Escape(fmt.Sprintf(format, a...)), visible.Block.Escape(fix))
}

func (d *doctor) problem(fix, format string, a ...any) {
	d.problems++
	fmt.Fprintf(stdout, "PROBLEM  %s\n         fix: %s\n", visible.Block.Escape(fmt.Sprintf(format, a...)), visible.Block.Escape(fix))
}

func (d *doctor) run(cfgPath, claudeDir string) {
	var files *claude.Installed
	if claudeDir != "" {
		files = d.readClaude(claudeDir)
		if cfgPath == "" && files != nil {
			cfgPath = files.ServerConfig
			if cfgPath == "" {
				d.problem("run vaultgate init VAULT --claude "+shellQuote(claudeDir), "%s names no vaultgate server, so there is no config to check", files.MCPPath)
				return
			}
		}
	}
	if cfgPath != "" {
		if abs, err := filepath.Abs(cfgPath); err == nil {
			cfgPath = abs
		}
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		d.problem("mend the key it names (docs/config.md), or write a new one with vaultgate init", "config %s: %v", cfgPath, err)
		if files != nil {
			d.checkClaude(files, nil, cfgPath)
		}
		return
	}
	d.ok("config %s loads (vault %s)", cfgPath, cfg.Vault)
	d.checkZones(cfg)
	d.checkState(cfg)
	d.checkShared(cfg)
	d.checkWall(cfg)
	d.checkHTTP(cfg)
	if files != nil {
		d.checkClaude(files, cfg, cfgPath)
	}
}

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// checkZones says of every zone entry that names nothing on the disk what
// it leaves open (config.MissingZones, the answer serve starts by): one
// that leaves open what it was to close is a problem, one that opens
// nothing a warning, one marked expected later fine.
func (d *doctor) checkZones(cfg *config.Config) {
	missing := cfg.MissingZones()
	problems := 0
	for _, m := range missing {
		switch {
		case m.Opens:
			problems++
			d.problem(m.Fix()+" (vaultgate zones shows the tree)", "%s: serve, run and the hook refuse to start with it", m)
		case m.Later:
			d.ok("%s: %q is not there yet, expected later (it ends with %s)", m.Key, m.Entry, config.LaterMark)
		default:
			d.warn(m.Fix(), "%s; it makes nothing stricter, so it opens nothing meanwhile", m)
		}
	}
	if len(missing) == 0 {
		d.ok("every zone path exists")
	} else if problems == 0 {
		d.ok("no zone entry leaves open what it was to close")
	}
}

func (d *doctor) checkState(cfg *config.Config) {
	dir := cfg.StateDir
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := dir
		for {
			parent = filepath.Dir(parent)
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
		}
		if unix.Access(parent, unix.W_OK) != nil {
			d.problem("create it, writable by the user vaultgate runs as", "the state folder %s does not exist and %s is not writable", dir, parent)
			return
		}
		d.ok("the state folder %s will be made at the first call (its parent is writable)", dir)
	case err != nil:
		d.problem("make it readable by the user vaultgate runs as", "the state folder %s: %v", dir, err)
		return
	case !fi.IsDir():
		d.problem("move the file away, or set [audit] path elsewhere", "the state folder %s is not a folder", dir)
		return
	case unix.Access(dir, unix.W_OK) != nil:
		d.problem("chown or chmod it for the user vaultgate runs as", "the state folder %s is not writable: no call can be audited, so every call is refused", dir)
		return
	default:
		d.ok("the state folder %s is writable", dir)
		if fi.Mode().Perm()&0o077 != 0 {
			d.warn("chmod 700 "+shellQuote(dir), "the state folder %s is open to other users (mode %o): the audit log names every path and argument", dir, fi.Mode().Perm())
		}
	}
	if inside(cfg.Vault, dir) {
		d.ok("the audit log and state folder lie inside the vault, hidden from the agent by vaultgate (read, list, search and bash can't reach them)")
	} else {
		d.ok("the audit log and state folder lie outside the vault, out of the agent's reach")
	}
}

// checkShared warns when the state folder serves another vault too (its
// registry names one, package vaultid): one audit log and one history
// for both, as configs of an older init shared them.
func (d *doctor) checkShared(cfg *config.Config) {
	vaults, err := vaultid.Vaults(cfg.StateDir)
	if err != nil {
		d.problem("restore the file, or mend its JSON (removed, it gives every vault a new id, and their changes before can no longer be undone)",
			"the state folder's registry of vaults can't be read, so no command can tell this vault's changes from another's: %v", err)
		return
	}
	var others []string
	for _, p := range vaults {
		if p != cfg.Vault {
			others = append(others, p)
		}
	}
	if len(others) == 0 {
		return
	}
	slices.Sort(others)
	d.warn("give each vault its own [audit] path (vaultgate init writes ~/.local/state/vaultgate/NAME-HASH/audit.jsonl)",
		"the state folder %s is shared with another vault (%s): one audit log and one history for both; history, diff, undo and the panel each act on their own vault's, and changes kept before vaults were named on none",
		cfg.StateDir, strings.Join(others, ", "))
}

func (d *doctor) checkWall(cfg *config.Config) {
	p := cfg.Policy(config.DefaultAgent)
	switch {
	case !p.Bash.Enabled:
		d.ok("bash is off ([bash] enabled = false)")
		return
	case !sandbox.Supported:
		d.warn("none needed: the file tools and the hook work here", "bash is off on this system: the runner and the wall need Linux")
		return
	case p.Bash.Wall == config.WallOff:
		d.warn(`set [bash] wall = "required" on a Linux with the features below`, `bash runs on the analysis alone (wall = "off"): programs of unknown effect are refused, and nothing checks what a command really did`)
		return
	}
	d.checkNameIndex(cfg, p.Zones)
	probe := sandbox.ProbeWall(sandbox.HelperBeside())
	if len(probe.Missing) == 0 {
		d.ok("the OS wall stands: every kernel feature is there (namespaces, Landlock, overlay)")
		return
	}
	var missing []string
	for _, k := range slices.Sorted(mapKeys(probe.Missing)) {
		missing = append(missing, k+" ("+probe.Missing[k]+")")
	}
	if p.Bash.Wall == config.WallRequired {
		d.problem(`run on a kernel that has them (vaultgate zones --wall says what the wall would be), or set [bash] wall = "best-effort" or "off" to run commands with less`,
			"bash will refuse every command: the wall is required and missing %s", strings.Join(missing, "; "))
		return
	}
	d.warn("run on a kernel that has them", "the wall is best-effort and lacks %s", strings.Join(missing, "; "))
}

// checkNameIndex opens the wall's index of names as a server opens it,
// and says whether a walled call is answered by it or walks the vault.
func (d *doctor) checkNameIndex(cfg *config.Config, t *zones.Table) {
	x := sandbox.WatchNames(cfg.Vault, []*zones.Table{t})
	defer x.Close()
	_, err := x.Covered(t)
	st := x.Status()
	if err == nil {
		d.ok("the wall's index of names watches the vault's %d folder(s): a walled call does not walk the vault", st.Folders)
		return
	}
	d.warn("nothing is less safe, only slower: the walk finds what the index would. For speed keep the vault on a local file system, with fs.inotify.max_user_watches above its number of folders",
		"each walled bash call walks the whole vault: %s", st.Reason)
}

func (d *doctor) checkHTTP(cfg *config.Config) {
	configured := len(cfg.Agents) > 1
	for _, a := range cfg.Agents {
		if a.Token.File != "" || (a.Token.Env != "" && os.Getenv(a.Token.Env) != "") {
			configured = true
		}
	}
	if !configured {
		return // stdio only: no token needed
	}
	if _, err := transport.Tokens(cfg); err != nil {
		d.problem("set the token's variable or file (at least 16 random characters, e.g. openssl rand -hex 32)", "HTTP: %v", err)
		return
	}
	d.ok("HTTP tokens are set and long enough")
}

// readClaude reads Claude Code's files in DIR (claude.ReadInstalled), and
// says what keeps one from saying anything.
func (d *doctor) readClaude(dir string) *claude.Installed {
	abs, err := filepath.Abs(dir)
	if err != nil {
		d.problem("give an existing folder", "--claude %s: %v", dir, err)
		return nil
	}
	f := claude.ReadInstalled(abs)
	fix := "run vaultgate init VAULT --claude " + shellQuote(abs)
	for _, p := range []struct {
		path string
		err  error
	}{{f.MCPPath, f.MCPErr}, {f.SettingsPath, f.SettingsErr}} {
		switch {
		case p.err == nil:
		case errors.Is(p.err, claude.ErrNotObject):
			d.problem("mend the JSON (init keeps a backup of what it changed in .claude/vaultgate-backup)", "%s is not a JSON object: %v", p.path, p.err)
		default:
			d.problem(fix, "%s: %v", p.path, p.err)
		}
	}
	return f
}

func (d *doctor) checkClaude(f *claude.Installed, cfg *config.Config, cfgPath string) {
	fix := "run vaultgate init VAULT --config " + shellQuote(cfgPath) + " --claude " + shellQuote(f.Dir)
	if f.ServerName == "" {
		d.problem(fix, "%s has no vaultgate server: Claude Code gets none of the vault's tools", f.MCPPath)
	} else {
		d.checkBinary(f.ServerCommand, fix, ".mcp.json's server")
		if cfg != nil {
			if want := cfg.Policy(config.DefaultAgent).Hook.ServerName; f.ServerName != want {
				d.problem(fix, "%s names the server %q, but [hook] server_name is %q: the hook would refuse the vault's own tools (mcp__%s__*)", f.MCPPath, f.ServerName, want, f.ServerName)
			} else {
				d.ok("the MCP server is %q, as [hook] server_name says", want)
			}
		}
		if f.ServerConfig != cfgPath {
			d.problem(fix, "the server in %s serves --config %s, not %s", f.MCPPath, f.ServerConfig, cfgPath)
		}
	}
	for _, event := range []string{"PreToolUse", "PostToolUse"} {
		hs := f.Hooks[event]
		if len(hs) == 0 {
			d.problem(fix, "%s has no vaultgate hook in %s: Claude Code's built-ins run unjudged", f.SettingsPath, event)
			continue
		}
		for _, h := range hs {
			words := claude.HookWords(h.Command)
			d.checkBinary(words[0], fix, event+" hook")
			if i := slices.Index(words, "--config"); i < 0 || i+1 >= len(words) || words[i+1] != cfgPath {
				d.problem(fix, "the %s hook does not name this config (%s): %s", event, cfgPath, h.Command)
			}
			if h.OnFailure != "block" || !strings.HasSuffix(strings.TrimSpace(h.Command), "|| exit 2") {
				d.problem(fix, `the %s hook lacks "onFailure": "block" or "|| exit 2": a hook that fails would let the call through`, event)
			}
		}
		if event == "PreToolUse" && !slices.ContainsFunc(hs, func(h claude.InstalledHook) bool { return h.Matcher == "*" || h.Matcher == "" }) {
			d.problem(fix, `the PreToolUse hook's matcher is not "*": the tools it does not match run unjudged`)
		}
	}
	if f.DefaultMode == "bypassPermissions" {
		d.warn("remove it: the hook's allow answers are what skip the prompts", `%s sets defaultMode "bypassPermissions", which Claude Code ignores in a project's settings`, f.SettingsPath)
	}
	deny := f.Deny
	if slices.ContainsFunc(deny, func(s string) bool { return slices.Contains([]string{"Bash", "Write", "Edit", "Read"}, s) }) {
		d.warn("take them out of permissions.deny: the hook judges each call", "%s denies built-ins outright (%s), the first design's advice", f.SettingsPath, strings.Join(deny, ", "))
	}
	d.checkTrust(f.Dir)
}

// checkBinary says whether the file a setting names is this build of
// vaultgate: the same module, version and source revision.
func (d *doctor) checkBinary(path, fix, what string) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		d.problem(fix+" (after installing vaultgate: go install github.com/vaultgate/vaultgate/cmd/...@latest)", "%s %s is not an executable file", what, path)
		return
	}
	theirs, err := buildinfo.ReadFile(path)
	if err != nil || theirs.Main.Path != "github.com/vaultgate/vaultgate" {
		d.problem(fix, "%s %s is not a vaultgate binary", what, path)
		return
	}
	ours, ok := debug.ReadBuildInfo()
	if !ok {
		d.warn("none", "%s %s: this binary carries no build info to compare with", what, path)
		return
	}
	if a, b := buildID(theirs), buildID(ours); a != b {
		d.problem(fix+", with this vaultgate", "%s %s is another build of vaultgate (%s; this one is %s)", what, path, a, b)
		return
	}
	d.ok("%s %s is this build of vaultgate (%s)", what, path, buildID(ours))
}

func buildID(bi *debug.BuildInfo) string {
	id := bi.Main.Version
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			id += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			id += " (modified)"
		}
	}
	return id
}

// checkTrust looks in the person's ~/.claude.json for DIR's trust: Claude
// Code reads a project's hooks and permissions only once it is trusted.
func (d *doctor) checkTrust(dir string) {
	home, err := os.UserHomeDir()
	if err != nil {
		return
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	var st struct {
		Projects map[string]struct {
			HasTrustDialogAccepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if err == nil {
		json.Unmarshal(b, &st)
	}
	if st.Projects[dir].HasTrustDialogAccepted {
		d.ok("Claude Code trusts %s, so it reads the project's hooks and permissions", dir)
		return
	}
	d.warn("start claude in "+shellQuote(dir)+" once and accept the workspace-trust dialog",
		"Claude Code has not been told to trust %s: until then it ignores the project's hooks and permissions", dir)
}
