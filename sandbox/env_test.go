package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBlocked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		blocked bool
	}{
		{"PATH", false}, {"LANG", false}, {"LC_ALL", false}, {"TZ", false}, {"TERM", false},
		{"BASH_ENV", true}, {"ENV", true}, {"LD_PRELOAD", true}, {"LD_LIBRARY_PATH", true},
		{"LD_AUDIT", true}, {"PROMPT_COMMAND", true}, {"BASH_FUNC_x%%", true},
		{"BASH_FUNC_x", true}, {"x()", true}, {"SHELLOPTS", true}, {"BASHOPTS", true},
		{"IFS", true}, {"CDPATH", true}, {"GLOBIGNORE", true}, {"PS4", true},
		{"GCONV_PATH", true}, {"GLIBC_TUNABLES", true}, {"TAR_OPTIONS", true},
		{"GIT_SSH_COMMAND", true}, {"SSH_AUTH_SOCK", true},
		{"DATABASE_URL", true}, {"database_url", true}, {"POSTGRES_PASSWORD", true},
		{"POSTGRES_USER", true}, {"MYSQL_PWD", true}, {"GH_PAT", true},
		{"GITHUB_TOKEN", true}, {"VAULTGATE_TOKEN", true}, {"CLIENT_SECRET", true},
		{"DB_PASSWORD", true}, {"OPENAI_API_KEY", true}, {"AWS_REGION", true},
		{"PGPASSWORD", true}, {"SENTRY_DSN", true}, {"my_token_file", true},
		{"", true}, {"1X", true}, {"A-B", true}, {"A B", true},
	} {
		if got := Blocked(tc.name); got != tc.blocked {
			t.Errorf("Blocked(%q) = %v, want %v", tc.name, got, tc.blocked)
		}
	}
}

func TestBuildEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin:/bin",
		"LANG=C.UTF-8",
		"LANG=second", // named twice: the first wins, as with os.Getenv
		"=nameless",
		"noequals",
		"EMPTY=",
		"HOME=/root",
		"DATABASE_URL=postgres://u:p@h/db",
		"TZ=UTC",
	}
	got := BuildEnv([]string{"TZ", "PATH", "LANG", "PATH", "HOME", "EMPTY", "DATABASE_URL", "UNSET", "noequals"}, environ, "/tmp/h")
	want := []string{"TZ=UTC", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "EMPTY=", "HOME=/tmp/h"}
	if !slices.Equal(got, want) {
		t.Errorf("BuildEnv = %q, want %q", got, want)
	}
	if got := BuildEnv(nil, environ, ""); len(got) != 0 {
		t.Errorf("BuildEnv with nothing whitelisted = %q, want none", got)
	}
}

// TestEnvReachesChild runs env(1) in the child: whatever the whitelist says,
// only the safe whitelisted names and the private HOME arrive.
func TestEnvReachesChild(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pwned := filepath.Join(dir, "pwned")
			script := filepath.Join(dir, "startup.sh")
			if err := os.WriteFile(script, []byte("touch "+pwned+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			environ := []string{
				"PATH=" + os.Getenv("PATH"),
				"LANG=C.UTF-8",
				"DATABASE_URL=postgres://vg:hunter2@db/vault",
				"POSTGRES_PASSWORD=hunter2",
				"GH_PAT=ghp_serverpat",
				"GITHUB_TOKEN=ghp_servertoken",
				"AWS_SECRET_ACCESS_KEY=aws-secret",
				"VAULTGATE_TOKEN=vg-bearer",
				"BASH_ENV=" + script,
				"ENV=" + script,
				"LD_PRELOAD=/nonexistent/evil.so",
				"BASH_FUNC_x%%=() { touch " + pwned + "; }",
				"PROMPT_COMMAND=touch " + pwned,
				"SHELLOPTS=xtrace",
				"PS4=$(touch " + pwned + ")",
				"HOME=/root",
			}
			var names []string
			for _, kv := range environ {
				k, _, _ := strings.Cut(kv, "=")
				names = append(names, k)
			}
			home := t.TempDir()
			r := request(t, m.contain, "env; x 2>/dev/null; true")
			r.Env, r.Environ, r.Home = names, environ, home
			res := mustRun(t, r, m.layer)
			env := envOf(res.Stdout)
			if env["PATH"] != os.Getenv("PATH") || env["LANG"] != "C.UTF-8" {
				t.Errorf("PATH or LANG did not pass: %q", res.Stdout)
			}
			if env["HOME"] != home {
				t.Errorf("HOME = %q, want the private home %q", env["HOME"], home)
			}
			for k := range env {
				switch k {
				case "PATH", "LANG", "HOME", "PWD", "OLDPWD", "SHLVL", "_":
				default:
					t.Errorf("child got %s=%q", k, env[k])
				}
			}
			for _, secret := range []string{"hunter2", "ghp_server", "aws-secret", "vg-bearer"} {
				if strings.Contains(res.Stdout+res.Stderr, secret) {
					t.Errorf("server secret %q reached the child", secret)
				}
			}
			if exists(pwned) {
				t.Error("a startup variable ran code in the child")
			}
		})
	}
}

func TestPrivateHomeRemoved(t *testing.T) {
	r := request(t, containAuto, `echo "$HOME"; touch "$HOME/x"; mkdir "$HOME/d"`)
	res := mustRun(t, r, "pidns")
	home := strings.TrimSpace(res.Stdout)
	if home == "" || !filepath.IsAbs(home) || home == os.Getenv("HOME") {
		t.Fatalf("HOME = %q, want a private folder", home)
	}
	if exists(home) {
		t.Errorf("private home %s left behind", home)
	}
}
