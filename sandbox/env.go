package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Names that change how bash, the dynamic loader, the C library or a
// command the analysis trusts (tar, grep, unzip, less, rsync) starts or what
// it runs. They are never passed, whatever the whitelist says: the analysis
// judges the command as written, and these would make it run something else.
var execNames = map[string]bool{
	"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "SHELLOPTS": true,
	"BASHOPTS": true, "IFS": true, "CDPATH": true, "GLOBIGNORE": true,
	"PS4": true, "BASH_XTRACEFD": true, "EXECIGNORE": true,
	"BASH_LOADABLES_PATH": true, "BASH_COMPAT": true,
	"GCONV_PATH": true, "GLIBC_TUNABLES": true, "LOCPATH": true,
	"NLSPATH": true, "HOSTALIASES": true, "RESOLV_HOST_CONF": true,
	"TAR_OPTIONS": true, "GREP_OPTIONS": true, "UNZIP": true, "UNZIPOPT": true,
	"ZIPOPT": true, "GZIP": true, "XZ_OPT": true, "XZ_DEFAULTS": true,
	"BZIP": true, "BZIP2": true, "LESSOPEN": true, "LESSCLOSE": true,
	"RSYNC_RSH": true, "RSYNC_CONNECT_PROG": true,
}

var execPrefixes = []string{"LD_", "BASH_FUNC_", "DYLD_", "GIT_"}

// Names that look like the server's own credentials, or that hand the child
// a channel to the server's agents (ssh-agent, D-Bus). Matched on the name in
// upper case.
var (
	secretNames = map[string]bool{
		"DATABASE_URL": true, "SSH_AUTH_SOCK": true, "GPG_AGENT_INFO": true,
		"DBUS_SESSION_BUS_ADDRESS": true,
	}
	secretPrefixes = []string{"POSTGRES_", "MYSQL_", "AWS_", "VAULTGATE_", "PG"}
	secretSuffixes = []string{"_PAT", "_KEY", "_DSN"}
	secretParts    = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "APIKEY", "PRIVATE"}
)

// Blocked reports whether the variable name is never passed from the
// server's environment to the child, whatever the whitelist says: a name
// that is not a plain shell identifier (exported functions are named
// "BASH_FUNC_x%%" or "x()"), one that changes what bash or the loader runs,
// or one that looks like a server credential. Config checks can use it to
// warn about a whitelist entry that will never take effect.
func Blocked(name string) bool {
	return !validName(name) || execBlocked(name) || secretLike(name)
}

func execBlocked(name string) bool {
	if strings.Contains(name, "%%") || strings.Contains(name, "()") || execNames[name] {
		return true
	}
	for _, p := range execPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func secretLike(name string) bool {
	up := strings.ToUpper(name)
	if secretNames[up] {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(up, p) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	for _, s := range secretParts {
		if strings.Contains(up, s) {
			return true
		}
	}
	return false
}

// validName reports whether name is a shell identifier. Anything else is
// either an exported function or something bash would not see as a variable.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// BuildEnv returns the child's environment: each name of the whitelist, in
// the whitelist's order, that is set in environ and not Blocked, and then
// HOME=home (unless home is empty; a HOME in the whitelist is ignored).
// When environ names a variable twice the first one wins, as with
// os.Getenv; malformed entries (no "=", an empty name) are dropped.
func BuildEnv(whitelist, environ []string, home string) []string {
	set := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := set[k]; !dup {
			set[k] = v
		}
	}
	env := make([]string, 0, len(whitelist)+1)
	seen := make(map[string]bool, len(whitelist))
	for _, name := range whitelist {
		if seen[name] || name == "HOME" || Blocked(name) {
			continue
		}
		seen[name] = true
		if v, ok := set[name]; ok {
			env = append(env, name+"="+v)
		}
	}
	if home != "" {
		env = append(env, "HOME="+home)
	}
	return env
}

// secretEnv returns the secrets' variables for a command that calls the
// given programs: a secret goes only to a command that calls one of its
// Commands. A secret's own name may look like a credential (that is what it
// is), but it may not be one that changes what bash runs, nor HOME or PATH.
func secretEnv(secrets []Secret, programs []string) ([]string, error) {
	called := make(map[string]bool, len(programs))
	for _, p := range programs {
		called[filepath.Base(p)] = true
	}
	var env []string
	for _, s := range secrets {
		if !validName(s.Name) || execBlocked(s.Name) || s.Name == "HOME" || s.Name == "PATH" {
			return nil, fmt.Errorf("sandbox: secret %q: not a name that may be given to a command", s.Name)
		}
		if strings.IndexByte(s.Value, 0) >= 0 {
			return nil, fmt.Errorf("sandbox: secret %q: value holds a NUL byte", s.Name)
		}
		for _, c := range s.Commands {
			if called[filepath.Base(c)] {
				env = append(env, s.Name+"="+s.Value)
				break
			}
		}
	}
	return env, nil
}

// mergeEnv returns env with extra's variables added, each replacing a
// variable of the same name already there.
func mergeEnv(env, extra []string) []string {
	if len(extra) == 0 {
		return env
	}
	override := make(map[string]bool, len(extra))
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		override[k] = true
	}
	out := make([]string, 0, len(env)+len(extra))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !override[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}
