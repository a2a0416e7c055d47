package agentrun

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/sandbox"
)

// Env builds the agent's environment from the launcher's (environ): every
// variable that [run] env names or a glob of it matches, in environ's
// order, except those that look like a credential or change how programs
// start (sandbox.Blocked), whatever the whitelist says; then each
// [[run.secrets]] entry's value under its name; then set (HOME, USER, …),
// which replace anything of the same name. A secret whose from_env is not
// set is an error: the agent would start without its credential; an
// optional one is then left out.
func Env(r config.Run, environ []string, set map[string]string) ([]string, error) {
	vals := map[string]string{}
	var order []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := vals[k]; !dup {
			vals[k] = v
			order = append(order, k)
		}
	}
	out := []string{}
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k+"="+v)
		}
	}
	reserved := func(k string) bool {
		_, ok := set[k]
		return ok || slices.Contains(config.RunReserved, k) || slices.ContainsFunc(r.Secrets, func(s config.RunSecret) bool { return s.Name == k })
	}
	for _, k := range order {
		if reserved(k) || sandbox.Blocked(k) || !whitelisted(r.Env, k) {
			continue
		}
		add(k, vals[k])
	}
	for _, s := range r.Secrets {
		v, ok := lookup(environ, s.FromEnv)
		if (!ok || v == "") && s.Optional {
			continue
		}
		if !ok || v == "" {
			return nil, fmt.Errorf("[[run.secrets]] %s: $%s is not set in vaultgate's environment", s.Name, s.FromEnv)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, fmt.Errorf("[[run.secrets]] %s: $%s holds a NUL byte", s.Name, s.FromEnv)
		}
		add(s.Name, v)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		add(k, set[k])
	}
	return out, nil
}

func lookup(environ []string, name string) (string, bool) {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// whitelisted reports whether a name or glob of env matches name.
func whitelisted(env []string, name string) bool {
	for _, e := range env {
		if ok, err := path.Match(e, name); err == nil && ok {
			return true
		}
	}
	return false
}
