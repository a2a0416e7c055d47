package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/zones"
)

// file mirrors the TOML document. Its keys are the config's contract with
// users: renaming one breaks their files.
type file struct {
	Vault         string          `toml:"vault"`
	Lang          string          `toml:"lang"`
	CaseSensitive caseSensitivity `toml:"case_sensitive"`
	Audit         auditFile       `toml:"audit"`
	Zones         zonesFile       `toml:"zones"`
	Rules         rulesFile       `toml:"rules"`
	Bash          bashFile        `toml:"bash"`
	Hook          hookFile        `toml:"hook"`
	HTTP          httpFile        `toml:"http"`
	History       historyFile     `toml:"history"`
	Run           runFile         `toml:"run"`
	Agents        map[string]toml.Primitive
}

type auditFile struct {
	Path    string `toml:"path"`
	MaxSize size   `toml:"max_size"`
}

// historyFile bounds what the history of changes keeps.
type historyFile struct {
	MaxSize size     `toml:"max_size"`
	Keep    duration `toml:"keep"`
}

// zonesFile maps a zone kind's name (zones.ParseMode) to its folders.
type zonesFile map[string][]string

type rulesFile struct {
	ReadBeforeWrite bool `toml:"read_before_write"`
	// Inherit (agents only) adds the top level's [[rules.deny]] before the
	// agent's own; it is true unless the agent sets it false.
	Inherit *bool      `toml:"inherit"`
	Deny    []denyFile `toml:"deny"`
}

type bashFile struct {
	Enabled    bool         `toml:"enabled"`
	Timeout    duration     `toml:"timeout"`
	MaxTimeout duration     `toml:"max_timeout"`
	Network    bool         `toml:"network"`
	Wall       string       `toml:"wall"`
	RunAs      string       `toml:"run_as"`
	Env        []string     `toml:"env"`
	Allow      []string     `toml:"allow"`
	Secrets    []secretFile `toml:"secrets"`
	// The caps of what one walled call may change (its overlay's upper
	// layer): past either, nothing it changed is applied.
	MaxChangedFiles int  `toml:"max_changed_files"`
	MaxChangedBytes size `toml:"max_changed_bytes"`
}

type secretFile struct {
	Name     string   `toml:"name"`
	FromEnv  string   `toml:"from_env"`
	Commands []string `toml:"commands"`
}

type hookFile struct {
	ServerName string   `toml:"server_name"`
	Allow      []string `toml:"allow"`
}

type httpFile struct {
	TokenEnv  string `toml:"token_env"`
	TokenFile string `toml:"token_file"`
	// Origins are further Origins a request may carry (ParseOrigin).
	Origins []string `toml:"origins"`
	// MaxBody is the largest request body, and stdio message, served.
	MaxBody size `toml:"max_body"`
}

// agentFile is what an [agents.NAME] table may set.
type agentFile struct {
	Lang      string    `toml:"lang"`
	Zones     zonesFile `toml:"zones"`
	Rules     rulesFile `toml:"rules"`
	Bash      bashFile  `toml:"bash"`
	Hook      hookFile  `toml:"hook"`
	TokenEnv  string    `toml:"token_env"`
	TokenFile string    `toml:"token_file"`
}

// Wall modes.
const (
	WallRequired   = "required"
	WallBestEffort = "best-effort"
	WallOff        = "off"
)

// DefaultAgent is the name of the agent that the top level describes.
const DefaultAgent = "default"

// Config is a loaded, validated configuration.
type Config struct {
	File string // the config file, absolute; "" for the default policy
	// Digest is the hex sha256 of the file's bytes as they were read: two
	// processes with the same Digest judge by the same config.
	Digest    string
	Vault     string // absolute, cleaned
	AuditPath string // absolute
	StateDir  string // absolute: the folder of the audit log
	MaxSize   int64  // audit rotation size in bytes, 0 = never
	// History bounds the history of changes in <StateDir>/history.
	History  History
	FoldOnly bool // case_sensitive resolved against the vault
	Agents   map[string]*Policy
	// Run is how `vaultgate run` starts the agent's own process ([run]).
	Run Run
	// HTTP is what `serve --http` is held to besides the agents' tokens.
	HTTP HTTP
}

// History holds the [history] settings: the oldest entries (and the bodies
// only they name) go first past either bound.
type History struct {
	MaxSize int64         // bytes of kept bodies
	Keep    time.Duration // age of entries
}

// Policy is everything one agent is held to.
type Policy struct {
	Name            string
	Lang            say.Lang // of every text the agent reads
	Zones           *zones.Table
	ReadBeforeWrite bool
	// Rules are the [[rules.deny]] rules the agent is held to, in order:
	// the top level's first (unless rules.inherit = false), then its own.
	Rules []DenyRule
	Bash  Bash
	Hook  Hook
	Token TokenSource

	// zoneSpecs are the agent's zone entries as the config wrote them,
	// for the check that each is there (zonecheck.go).
	zoneSpecs []zoneSpec
}

// Bash holds the [bash] settings of one agent.
type Bash struct {
	Enabled    bool
	Timeout    time.Duration
	MaxTimeout time.Duration
	Network    bool
	Wall       string
	RunAs      string
	Env        []string
	Allow      []string
	Secrets    []Secret
	// MaxChangedFiles and MaxChangedBytes cap what one call on the overlay
	// may change: entries and bytes of its upper layer.
	MaxChangedFiles int
	MaxChangedBytes int64
}

// Secret is a [[bash.secrets]] entry. The value is read from the server's
// environment at call time, never stored in the config.
type Secret struct {
	Name     string
	FromEnv  string
	Commands []string
}

// Hook holds the [hook] settings of one agent.
type Hook struct {
	ServerName string
	Allow      []string
}

// TokenSource says where an agent's bearer token comes from.
type TokenSource struct {
	Env  string
	File string
}

// Error is a configuration error. Key names the offending key, dotted.
type Error struct {
	File string
	Key  string
	Err  error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func defaults() file {
	return file{
		Lang:          "en",
		CaseSensitive: caseSensitivity{auto: true},
		Audit:         auditFile{Path: "~/.local/state/vaultgate/audit.jsonl", MaxSize: 100 << 20},
		Zones: zonesFile{
			"edit": {"."},
			// Obsidian makes both itself (.trash at its first delete):
			// expected later, so a fresh vault starts without them.
			"protected": {".obsidian" + LaterMark, ".trash" + LaterMark},
		},
		Rules: rulesFile{ReadBeforeWrite: true},
		Bash: bashFile{
			Enabled:    true,
			Timeout:    duration(2 * time.Minute),
			MaxTimeout: duration(10 * time.Minute),
			Wall:       WallRequired,
			Env:        []string{"PATH", "LANG", "LC_ALL", "TZ", "TERM"},
			// Enough for a script that rewrites a folder of notes, not
			// for one that empties the vault into the call by mistake.
			MaxChangedFiles: 1000,
			MaxChangedBytes: 64 << 20,
		},
		Hook:    hookFile{ServerName: "vault"},
		HTTP:    httpFile{TokenEnv: "VAULTGATE_TOKEN", MaxBody: DefaultMaxBody},
		History: historyFile{MaxSize: 1 << 30, Keep: duration(720 * time.Hour)},
		Run:     defaultRun(),
	}
}

// Load reads and validates the config file at path.
func Load(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	cfg, err := parse(abs, string(data))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	cfg.Digest = hex.EncodeToString(sum[:])
	return cfg, nil
}

// Default returns the policy used by `serve --vault DIR` with no config: the
// whole vault edit, .obsidian and .trash protected, bash on behind the wall.
func Default(vault string) (*Config, error) {
	f := defaults()
	f.Vault = vault
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	return resolve("", wd, f, nil, false, nil)
}

func parse(abs, data string) (*Config, error) {
	f := defaults()
	defaultZones := f.Zones
	f.Zones = nil
	md, err := toml.Decode(data, &f)
	if err != nil {
		return nil, &Error{File: abs, Err: err}
	}
	if !md.IsDefined("zones") {
		// A [zones] table is the whole boundary; the defaults apply only
		// when there is none, never merged under the user's lists.
		f.Zones = defaultZones
	}
	if f.Vault == "" && !md.IsDefined("vault") {
		return nil, &Error{File: abs, Key: "vault", Err: errors.New("required: the vault folder to serve")}
	}
	if f.Rules.Inherit != nil {
		return nil, &Error{File: abs, Key: "rules.inherit", Err: errors.New("only an [agents.NAME] table may set it: the top level inherits from nothing")}
	}
	agents := make(map[string]agentFile, len(f.Agents))
	for name, prim := range f.Agents {
		a := agentFile{Lang: f.Lang, Zones: f.Zones, Rules: f.Rules, Bash: f.Bash, Hook: f.Hook}
		a.Rules.Deny = nil // the agent's own; the top level's are added in resolve
		a.Bash.Env = slices.Clone(a.Bash.Env)
		if md.IsDefined("agents", name, "zones") {
			// An agent's [zones] replaces the top level's whole: its
			// boundary is then read in one place, not merged from two.
			a.Zones = nil
		}
		if err := md.PrimitiveDecode(prim, &a); err != nil {
			return nil, &Error{File: abs, Key: "agents." + name, Err: err}
		}
		agents[name] = a
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, &Error{File: abs, Key: und[0].String(), Err: errors.New("unknown key")}
	}
	return resolve(abs, filepath.Dir(abs), f, agents, md.IsDefined("run"), findPositions(data))
}

func resolve(cfgFile, base string, f file, agents map[string]agentFile, runSet bool, pos *positions) (*Config, error) {
	fail := func(key string, err error) error { return &Error{File: cfgFile, Key: key, Err: err} }
	vault, err := expandPath(base, f.Vault)
	if err != nil {
		return nil, fail("vault", err)
	}
	if st, err := os.Stat(vault); err != nil {
		return nil, fail("vault", fmt.Errorf("%s: %w", vault, errors.Unwrap(err)))
	} else if !st.IsDir() {
		return nil, fail("vault", fmt.Errorf("%s is not a folder", vault))
	}
	// Zones are judged on real paths, so the root must be real too.
	if real, err := filepath.EvalSymlinks(vault); err == nil {
		vault = real
	}
	auditPath, err := expandPath(base, f.Audit.Path)
	if err != nil {
		return nil, fail("audit.path", err)
	}
	c := &Config{
		File:      cfgFile,
		Vault:     vault,
		AuditPath: auditPath,
		StateDir:  filepath.Dir(auditPath),
		MaxSize:   int64(f.Audit.MaxSize),
		Agents:    make(map[string]*Policy),
	}
	if c.MaxSize < 0 {
		return nil, fail("audit.max_size", errors.New("must not be negative"))
	}
	c.History = History{MaxSize: int64(f.History.MaxSize), Keep: time.Duration(f.History.Keep)}
	if c.History.MaxSize <= 0 {
		return nil, fail("history.max_size", errors.New("must be more than 0 (write e.g. \"1GiB\")"))
	}
	if c.History.Keep <= 0 {
		return nil, fail("history.keep", errors.New("must be more than 0 (write e.g. \"720h\" for 30 days)"))
	}
	switch {
	case f.CaseSensitive.auto:
		fold, err := probeFolding(vault)
		if err != nil {
			return nil, fail("case_sensitive", fmt.Errorf("probing the vault for case folding: %w", err))
		}
		c.FoldOnly = fold
	default:
		c.FoldOnly = !f.CaseSensitive.value
	}
	if c.Run, err = c.run(base, f.Run, runSet); err != nil {
		return nil, err
	}
	if c.HTTP.MaxBody = int64(f.HTTP.MaxBody); c.HTTP.MaxBody <= 0 {
		return nil, fail("http.max_body", errors.New("must be more than 0 (write e.g. \"16MiB\")"))
	}
	for i, s := range f.HTTP.Origins {
		o, err := ParseOrigin(s)
		if err != nil {
			return nil, fail(fmt.Sprintf("http.origins[%d]", i), err)
		}
		c.HTTP.Origins = append(c.HTTP.Origins, o)
	}
	top := agentFile{Lang: f.Lang, Zones: f.Zones, Rules: f.Rules, Bash: f.Bash, Hook: f.Hook, TokenEnv: f.HTTP.TokenEnv, TokenFile: f.HTTP.TokenFile}
	p, err := c.policy(DefaultAgent, "", top)
	if err != nil {
		return nil, err
	}
	if p.Rules, err = c.denyRules("", f.Rules.Deny, pos); err != nil {
		return nil, err
	}
	if err := uniqueNames(p.Rules); err != nil {
		return nil, fail("rules.deny", err)
	}
	topRules := p.Rules
	c.Agents[DefaultAgent] = p
	for name, a := range agents {
		if name == DefaultAgent {
			return nil, fail("agents."+name, fmt.Errorf("%q is the name of the top-level agent", name))
		}
		if a.TokenEnv == "" && a.TokenFile == "" {
			return nil, fail("agents."+name, errors.New("needs token_env or token_file"))
		}
		p, err := c.policy(name, "agents."+name+".", a)
		if err != nil {
			return nil, err
		}
		own, err := c.denyRules("agents."+name+".", a.Rules.Deny, pos)
		if err != nil {
			return nil, err
		}
		if a.Rules.Inherit == nil || *a.Rules.Inherit {
			p.Rules = append(slices.Clone(topRules), own...)
		} else {
			p.Rules = own
		}
		if err := uniqueNames(p.Rules); err != nil {
			return nil, &Error{File: cfgFile, Key: "agents." + name + ".rules.deny", Err: err}
		}
		c.Agents[name] = p
	}
	return c, nil
}

func (c *Config) policy(name, prefix string, a agentFile) (*Policy, error) {
	fail := func(key string, err error) error { return &Error{File: c.File, Key: prefix + key, Err: err} }
	lang, err := say.ParseLang(a.Lang)
	if err != nil {
		return nil, fail("lang", err)
	}
	entries, specs, err := c.zoneEntries(prefix, a.Zones)
	if err != nil {
		return nil, err
	}
	protect := []string{}
	if c.File != "" {
		protect = append(protect, c.File)
	}
	if reg, err := RegistryPath(); err == nil {
		// The person's configs and the list of vaults (registry.go): in a
		// vault that holds them (a home folder), no agent rewrites the
		// boundary of the next command run there.
		protect = append(protect, filepath.Dir(reg))
	}
	tab, err := zones.New(c.Vault, entries, zones.Options{
		FoldOnly: c.FoldOnly,
		Protect:  protect,
		Hide:     []string{c.AuditPath, c.StateDir},
		Exists:   c.exists,
	})
	if err != nil {
		return nil, fail("zones", err)
	}
	b, err := c.bash(prefix, a.Bash)
	if err != nil {
		return nil, err
	}
	if a.Hook.ServerName == "" {
		return nil, fail("hook.server_name", errors.New("must not be empty"))
	}
	for _, t := range a.Hook.Allow {
		if t == "" || strings.Contains(strings.TrimSuffix(t, "*"), "*") {
			return nil, fail("hook.allow", fmt.Errorf("%q: give a tool name, or a prefix ending in *", t))
		}
	}
	return &Policy{
		Name:            name,
		Lang:            lang,
		Zones:           tab,
		ReadBeforeWrite: a.Rules.ReadBeforeWrite,
		Bash:            b,
		Hook:            Hook{ServerName: a.Hook.ServerName, Allow: a.Hook.Allow},
		Token:           TokenSource{Env: a.TokenEnv, File: a.TokenFile},
		zoneSpecs:       specs,
	}, nil
}

func (c *Config) zoneEntries(prefix string, z zonesFile) ([]zones.Entry, []zoneSpec, error) {
	var entries []zones.Entry
	var specs []zoneSpec
	seen := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(z)) {
		if _, ok := zones.ParseMode(name); !ok {
			return nil, nil, &Error{File: c.File, Key: prefix + "zones." + name, Err: errors.New("unknown key: no such zone kind")}
		}
	}
	// The kinds that allow most come first, so that a folder listed twice
	// is reported under the stricter listing, whatever order the file has.
	kinds := zones.Kinds()[1:]
	slices.SortStableFunc(kinds, func(a, b zones.Mode) int {
		return b.Ops().Len() - a.Ops().Len()
	})
	for _, mode := range kinds {
		key := prefix + "zones." + mode.String()
		for _, written := range z[mode.String()] {
			if zones.IsPattern(written) {
				// A name pattern (zones/pattern.go), which zones.New
				// checks: it names no one path to normalise.
				fk := "pattern " + zones.Fold(written)
				if other, dup := seen[fk]; dup {
					return nil, nil, &Error{File: c.File, Key: key, Err: fmt.Errorf("%q is also listed in %s", written, other)}
				}
				seen[fk] = key
				entries = append(entries, zones.Entry{Path: written, Mode: mode})
				continue
			}
			// A trailing ? marks a folder expected to appear later (Obsidian
			// makes .trash at its first delete): it is not required to be
			// there when a server starts (zonecheck.go).
			raw, later := strings.CutSuffix(written, LaterMark)
			if raw == "" {
				return nil, nil, &Error{File: c.File, Key: key, Err: fmt.Errorf("%q: a ? marks a folder expected later; name the folder before it", written)}
			}
			p := raw
			if strings.HasPrefix(p, "~") {
				var err error
				if p, err = expandPath(c.Vault, p); err != nil {
					return nil, nil, &Error{File: c.File, Key: key, Err: err}
				}
			}
			rel, err := zones.Normalize(c.Vault, p)
			if err != nil {
				return nil, nil, &Error{File: c.File, Key: key, Err: fmt.Errorf("%q: %w", written, err)}
			}
			if rel.Outside() && !filepath.IsAbs(p) {
				return nil, nil, &Error{File: c.File, Key: key, Err: fmt.Errorf("%q leaves the vault; give an absolute path for a zone outside it", written)}
			}
			fk := zones.Fold(rel.String())
			if other, dup := seen[fk]; dup {
				return nil, nil, &Error{File: c.File, Key: key, Err: fmt.Errorf("%q is also listed in %s", written, other)}
			}
			seen[fk] = key
			entries = append(entries, zones.Entry{Path: rel.String(), Mode: mode})
			specs = append(specs, zoneSpec{key: key, written: raw, path: rel, mode: mode, later: later})
		}
	}
	return entries, specs, nil
}

func (c *Config) bash(prefix string, b bashFile) (Bash, error) {
	fail := func(key string, err error) error { return &Error{File: c.File, Key: prefix + "bash." + key, Err: err} }
	switch b.Wall {
	case WallRequired, WallBestEffort, WallOff:
	default:
		return Bash{}, fail("wall", fmt.Errorf("%q: must be \"required\", \"best-effort\" or \"off\"", b.Wall))
	}
	if b.Timeout <= 0 {
		return Bash{}, fail("timeout", errors.New("must be positive"))
	}
	if b.MaxTimeout < b.Timeout {
		return Bash{}, fail("max_timeout", fmt.Errorf("%s is less than timeout %s", time.Duration(b.MaxTimeout), time.Duration(b.Timeout)))
	}
	if b.MaxChangedFiles <= 0 {
		return Bash{}, fail("max_changed_files", fmt.Errorf("%d: must be a positive number of files", b.MaxChangedFiles))
	}
	if b.MaxChangedBytes <= 0 {
		return Bash{}, fail("max_changed_bytes", fmt.Errorf("%d: must be a positive size (e.g. \"64MiB\")", int64(b.MaxChangedBytes)))
	}
	for _, e := range b.Env {
		if !validEnvName(e) {
			return Bash{}, fail("env", fmt.Errorf("%q is not a variable name", e))
		}
	}
	if b.RunAs != "" {
		// Switching users needs root; a run_as the server can't honour
		// would otherwise be a silent no-op, or bash refused at every call.
		if euid := geteuid(); euid != 0 {
			return Bash{}, fail("run_as", fmt.Errorf("%q: switching to another user needs the server to run as root (it runs as uid %d); remove run_as to use a user namespace instead", b.RunAs, euid))
		}
		if u, err := user.Lookup(b.RunAs); err != nil {
			return Bash{}, fail("run_as", fmt.Errorf("%q: %w", b.RunAs, err))
		} else if u.Uid == "0" {
			return Bash{}, fail("run_as", fmt.Errorf("%q is root: give an unprivileged user", b.RunAs))
		}
	}
	for _, a := range b.Allow {
		if a == "" || strings.ContainsRune(a, '/') {
			return Bash{}, fail("allow", fmt.Errorf("%q: give a program's name, not a path", a))
		}
	}
	out := Bash{
		Enabled: b.Enabled, Timeout: time.Duration(b.Timeout), MaxTimeout: time.Duration(b.MaxTimeout),
		Network: b.Network, Wall: b.Wall, RunAs: b.RunAs, Env: b.Env, Allow: b.Allow,
		MaxChangedFiles: b.MaxChangedFiles, MaxChangedBytes: int64(b.MaxChangedBytes),
	}
	for i, s := range b.Secrets {
		key := fmt.Sprintf("secrets[%d]", i)
		if !validEnvName(s.Name) {
			return Bash{}, fail(key+".name", fmt.Errorf("%q is not a variable name", s.Name))
		}
		if !validEnvName(s.FromEnv) {
			return Bash{}, fail(key+".from_env", fmt.Errorf("%q is not a variable name", s.FromEnv))
		}
		if len(s.Commands) == 0 {
			return Bash{}, fail(key+".commands", errors.New("name the programs that may receive the secret"))
		}
		out.Secrets = append(out.Secrets, Secret(s))
	}
	return out, nil
}

// geteuid is os.Geteuid; tests stand in for a server that is not root.
var geteuid = os.Geteuid

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', 'A' <= r && r <= 'Z', 'a' <= r && r <= 'z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expandPath expands a leading ~ and makes p absolute against base.
func expandPath(base, p string) (string, error) {
	if p == "" {
		return "", errors.New("must not be empty")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	} else if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%q: ~user is not supported; write the path out", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p), nil
}

// Policy returns the named agent's policy, or nil.
func (c *Config) Policy(agent string) *Policy { return c.Agents[agent] }
