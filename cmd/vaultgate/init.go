package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/BurntSushi/toml"
	"mvdan.cc/sh/v3/syntax"

	"github.com/vaultgate/vaultgate/claude"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/visible"
)

func init() {
	var out, claudeDir string
	var force, dryRun, uninstall bool
	register(&command{
		name:    "init",
		summary: "write a starter config for a vault, and Claude Code's .mcp.json and settings.json",
		usage:   "[--config FILE] [--force] [--claude DIR [--dry-run]] VAULT | --uninstall --claude DIR [--config FILE] [--dry-run]",
		help: `Writes a starter policy for the vault VAULT: the whole vault edit (create,
change, move, never delete), .obsidian and .trash protected. By default the
file goes in your config folder (~/.config/vaultgate/NAME.toml), outside the
vault, so the agent can't read its own boundary from there; --config puts it
elsewhere. An existing config is kept unless --force. Its audit log, and
with it the state folder (history and all), is the vault's own:
~/.local/state/vaultgate/NAME-HASH/, HASH of the vault's real path, so no
two vaults share one.

With --claude DIR (the folder Claude Code is started in, usually the vault
itself) it also writes or merges DIR/.mcp.json (the vault's MCP server,
named [hook] server_name) and DIR/.claude/settings.json (vaultgate's hook
before every tool call and after those it records, with onFailure block,
and the vault's tools allowed). Every other key of those files is kept;
only vaultgate's own entries are replaced; a second run changes nothing; a
file it changes is first copied to DIR/.claude/vaultgate-backup/. It names
this binary by its absolute path, so install it first. An existing config
is kept and init exits 0. --dry-run prints what it would write and writes
nothing. --uninstall --claude DIR removes vaultgate's entries from both
files and nothing else.

Without --claude it prints the two files' entries instead.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&out, "config", "", "where the config is or goes (default: the user's config folder)")
			fs.BoolVar(&force, "force", false, "overwrite an existing config")
			fs.StringVar(&claudeDir, "claude", "", "write or merge DIR/.mcp.json and DIR/.claude/settings.json for Claude Code started in DIR")
			fs.BoolVar(&dryRun, "dry-run", false, "with --claude: print what would be written, write nothing")
			fs.BoolVar(&uninstall, "uninstall", false, "with --claude: remove vaultgate's entries from Claude Code's files")
		},
		run: func(fs *flag.FlagSet, args []string) int {
			switch {
			case uninstall && claudeDir == "":
				return fail(exitUsage, "--uninstall needs --claude DIR")
			case uninstall && len(args) > 1:
				return fail(exitUsage, "init --uninstall takes at most the vault folder (see --help)")
			case dryRun && claudeDir == "":
				return fail(exitUsage, "--dry-run goes with --claude DIR")
			case uninstall:
				return runUninstall(claudeDir, out, dryRun)
			case len(args) != 1:
				return fail(exitUsage, "init takes the vault folder (see --help)")
			}
			return runInit(args[0], out, claudeDir, force, dryRun)
		},
	})
}

func runInit(dir, out, claudeDir string, force, dryRun bool) int {
	vault, err := filepath.Abs(dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if st, err := os.Stat(vault); err != nil || !st.IsDir() {
		return fail(exitUsage, "%s is not a folder", vault)
	}
	if real, err := filepath.EvalSymlinks(vault); err == nil {
		vault = real
	}
	if out == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return fail(1, "no config folder (%v); give --config FILE", err)
		}
		out = filepath.Join(base, "vaultgate", filepath.Base(vault)+".toml")
	}
	if out, err = filepath.Abs(out); err != nil {
		return fail(exitUsage, "%v", err)
	}
	exists := false
	if _, err := os.Stat(out); err == nil {
		exists = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return fail(1, "%v", err)
	}
	serverName := "vault"
	switch {
	case exists && !force && claudeDir == "":
		return fail(1, "%s exists; keep it, or pass --force to replace it", out)
	case exists && !force:
		cfg, err := config.Load(out)
		if err != nil {
			return fail(1, "%s exists but does not load (%v); mend it, or pass --force to replace it", out, err)
		}
		if cfg.Vault != vault {
			return fail(1, "%s is the config of %s, not of %s; give --config FILE for this vault", out, cfg.Vault, vault)
		}
		serverName = cfg.Policy(config.DefaultAgent).Hook.ServerName
		fmt.Fprintf(stdout, "kept %s (it exists; --force replaces it)\n", visible.Line.Escape(out))
	case dryRun:
		fmt.Fprintf(stdout, "would write %s:\n%s\n", visible.Line.Escape(out), visible.Block.Escape(starterConfig(vault)))
	default:
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return fail(1, "%v", err)
		}
		if err := os.WriteFile(out, []byte(starterConfig(vault)), 0o600); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stdout, "wrote %s\n", visible.Line.Escape(out))
		if inside(vault, out) {
			fmt.Fprintf(stdout, "note: the config lies inside the vault; vaultgate keeps it protected (read only) for the agent.\n")
		}
	}
	setup, problem := newClaudeSetup(out, serverName)
	if problem != "" {
		fmt.Fprintf(stderr, "vaultgate: warning: %s\n", visible.Block.Escape(problem))
	}
	if claudeDir == "" {
		mcp, settings := claude.Entries(setup)
		fmt.Fprintf(stdout, "\nAdd this to .mcp.json (secrets go in \"env\", never in \"args\"):\n%s", visible.Block.Escape(string(mcp)))
		fmt.Fprintf(stdout, "\nAnd this to .claude/settings.json (the hook on every tool call, blocking when it fails,\nand the vault's tools allowed; \"|| exit 2\" does the blocking for a Claude Code older than 2.1.295):\n%s", visible.Block.Escape(string(settings)))
		fmt.Fprintf(stdout, "Or let init merge both: vaultgate init --config %s --claude DIR %s\n", shellQuote(out), shellQuote(vault))
	} else if code := writeClaude(claudeDir, setup, false, dryRun); code != exitOK {
		return code
	}
	fmt.Fprintf(stdout, "\nSee the zones:  vaultgate zones --config %s\n", shellQuote(out))
	fmt.Fprintf(stdout, "Dry-run a call: vaultgate check --config %s delete '{\"path\":\"x.md\"}'\n", shellQuote(out))
	return exitOK
}

// newClaudeSetup names this binary and the hook's by absolute path.
func newClaudeSetup(cfg, serverName string) (claude.Setup, string) {
	s := claude.Setup{Config: cfg, ServerName: serverName}
	exe, err := os.Executable()
	problem := ""
	if err != nil {
		exe, problem = "vaultgate", fmt.Sprintf("the running binary can't be named (%v); the files say \"vaultgate\"", err)
	} else if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		problem = fmt.Sprintf("%s is a temporary binary of go run; install vaultgate (go install) and run init from there", exe)
	}
	s.Exe = exe
	s.Hook, s.HookArgs = hookBinary(exe)
	return s, problem
}

func runUninstall(claudeDir, cfgPath string, dryRun bool) int {
	s := claude.Setup{}
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			return fail(exitUsage, "%v", err)
		}
		s.ServerName = cfg.Policy(config.DefaultAgent).Hook.ServerName
	}
	return writeClaude(claudeDir, s, true, dryRun)
}

// writeClaude merges (or takes out) vaultgate's entries in DIR's two files
// and says what it changed.
func writeClaude(dir string, s claude.Setup, uninstall, dryRun bool) int {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fail(exitUsage, "--claude %s is not a folder", abs)
	}
	files, err := claude.PlanFiles(abs, s, uninstall)
	if err != nil {
		return fail(1, "%v (nothing was changed)", err)
	}
	now := time.Now()
	for _, f := range files {
		switch {
		case f.Unchanged():
			fmt.Fprintf(stdout, "%s: unchanged\n", visible.Line.Escape(f.Path))
			continue
		case dryRun && f.New == nil:
			fmt.Fprintf(stdout, "would remove %s (only vaultgate's entries were in it)\n", visible.Line.Escape(f.Path))
		case dryRun:
			fmt.Fprintf(stdout, "would write %s:\n%s", visible.Line.Escape(f.Path), visible.Block.Escape(string(f.New)))
		}
		for _, c := range f.Changes {
			fmt.Fprintf(stdout, "  %s\n", visible.Line.Escape(c))
		}
		if dryRun {
			continue
		}
		backup, err := f.Apply(abs, now)
		if err != nil {
			return fail(1, "%s: %v", f.Path, err)
		}
		verb := "wrote"
		if f.New == nil {
			verb = "removed"
		}
		fmt.Fprintf(stdout, "%s %s", verb, visible.Line.Escape(f.Path))
		if backup != "" {
			fmt.Fprintf(stdout, " (the old one is %s)", visible.Line.Escape(backup))
		}
		fmt.Fprintln(stdout)
	}
	if !uninstall && !dryRun {
		fmt.Fprintf(stdout, "\nStart Claude Code in %s and accept its workspace-trust dialog once: until then it\nignores a project's hooks and permissions. After that it asks nothing; vaultgate decides.\n", visible.Line.Escape(abs))
	}
	return exitOK
}

func starterConfig(vault string) string {
	q := func(s string) string {
		var b strings.Builder
		toml.NewEncoder(&b).Encode(map[string]string{"v": s})
		return strings.TrimSpace(strings.TrimPrefix(b.String(), "v = "))
	}
	protected := []string{}
	for _, name := range []string{".obsidian", ".trash"} {
		protected = append(protected, q(name))
	}
	return fmt.Sprintf(`# vaultgate policy for %[1]s
# Every key is described in docs/config.md.
vault = %[2]s
lang  = "en"               # "en" or "ru": the language of every reason the agent reads

[audit]
# the audit log; its folder is the vault's state folder (history and all),
# one per vault: two vaults never share a log or a history
path = %[4]s
max_size = "100MiB"

[zones]
# write: anything, deleting included   edit: create, change, move, never delete
# create: new files only               protected: read only      hidden: not even readable
write     = []
create    = []
edit      = ["."]
protected = [%[3]s]
hidden    = []

[rules]
read_before_write = true

[bash]
enabled = true
wall    = "required"

[hook]
server_name = "vault"      # the key of vaultgate's server in .mcp.json: its tools are mcp__vault__*
# allow = ["WebFetch", "WebSearch"]   # Claude Code's web tools touch no file, but reach the network
`, vault, q(vault), strings.Join(protected, ", "), q("~/.local/state/vaultgate/"+stateFolderName(vault)+"/audit.jsonl"))
}

// stateFolderName names a vault's own state folder: its folder's name, as
// a plain file name, and a short hash of its real path, so two vaults of
// one name (~/work/notes, ~/home/notes) get two folders.
func stateFolderName(vault string) string {
	var b strings.Builder
	for _, r := range filepath.Base(vault) {
		switch {
		case b.Len() >= 48:
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' && b.Len() > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "vault"
	}
	sum := sha256.Sum256([]byte(vault))
	return name + "-" + hex.EncodeToString(sum[:4])
}

func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// shellQuote is s as one word for a person to paste into bash: the shell
// parser's own quoting (syntax.Quote), which leaves a plain word alone and
// spells a terminal control as $'\x1b'.
func shellQuote(s string) string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		// A NUL, which no shell word holds: shown through the one escape,
		// and quoted, so that a paste names another file but runs nothing.
		q, _ = syntax.Quote(visible.Line.Escape(s), syntax.LangBash)
	}
	return q
}

// hookBinary is how Claude Code starts the hook: vaultgate-hook, which
// starts faster, where it lies beside exe; exe's hook command otherwise.
func hookBinary(exe string) (bin, args string) {
	hook := filepath.Join(filepath.Dir(exe), "vaultgate-hook")
	if fi, err := os.Stat(hook); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return hook, ""
	}
	return exe, "hook"
}
