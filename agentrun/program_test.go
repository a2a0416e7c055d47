package agentrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vaultgate/vaultgate/config"
)

// fakeInstall lays out the files of an npm install: a package with its
// program in bin/, linked from PREFIX/bin as npm links it.
func fakeInstall(t *testing.T, pkgDir, prog, body, link string) {
	t.Helper()
	write(t, filepath.Join(pkgDir, "package.json"), `{"name":"x"}`, 0o644)
	write(t, filepath.Join(pkgDir, prog), body, 0o755)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Dir(link), filepath.Join(pkgDir, prog))
	if err := os.Symlink(rel, link); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

const elf = "\x7fELF not really, but no #!"

func never(string) bool { return false }

// TestLocateFindsWhereNpmPutIt: a program installed by npm under the
// person's home — in a global prefix set in .npmrc, with --prefix
// ~/.local, or in nvm's node — is found though the agent's PATH does not
// name it, and the view is to show its own package folder, never a parent
// such as ~/.local.
func TestLocateFindsWhereNpmPutIt(t *testing.T) {
	home := t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	scoped := func(nm string) string { return filepath.Join(nm, "@anthropic-ai", "claude-code") }
	cases := []struct {
		name    string
		setup   func() (pkg string)
		environ []string
	}{
		{"npm -g, prefix in .npmrc", func() string {
			write(t, filepath.Join(home, ".npmrc"), "color=false\nprefix=~/.npm-global\n", 0o644)
			pkg := scoped(filepath.Join(home, ".npm-global", "lib", "node_modules"))
			fakeInstall(t, pkg, "bin/claude.exe", elf, filepath.Join(home, ".npm-global", "bin", "claude"))
			return pkg
		}, nil},
		{"npm -g, prefix in the environment", func() string {
			pkg := scoped(filepath.Join(home, "envprefix", "lib", "node_modules"))
			fakeInstall(t, pkg, "bin/claude.exe", elf, filepath.Join(home, "envprefix", "bin", "claude"))
			return pkg
		}, []string{"NPM_CONFIG_PREFIX=" + filepath.Join(home, "envprefix")}},
		{"npm install --prefix ~/.local", func() string {
			write(t, filepath.Join(home, ".local", "package.json"), `{"dependencies":{}}`, 0o644)
			pkg := scoped(filepath.Join(home, ".local", "node_modules"))
			fakeInstall(t, pkg, "bin/claude.exe", elf, filepath.Join(home, ".local", "node_modules", ".bin", "claude"))
			return pkg
		}, nil},
		{"npm -g --prefix ~/.local", func() string {
			pkg := scoped(filepath.Join(home, ".local", "lib", "node_modules"))
			fakeInstall(t, pkg, "bin/claude.exe", elf, filepath.Join(home, ".local", "bin", "claude"))
			return pkg
		}, nil},
		{"nvm, the newest node first", func() string {
			for _, v := range []string{"v9.11.2", "v22.12.0", "v20.18.1"} {
				pkg := scoped(filepath.Join(home, ".nvm", "versions", "node", v, "lib", "node_modules"))
				fakeInstall(t, pkg, "bin/claude.exe", elf, filepath.Join(home, ".nvm", "versions", "node", v, "bin", "claude"))
			}
			return scoped(filepath.Join(home, ".nvm", "versions", "node", "v22.12.0", "lib", "node_modules"))
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, d := range []string{".npmrc", ".npm-global", "envprefix", ".local", ".nvm"} {
				os.RemoveAll(filepath.Join(home, d))
			}
			pkg := c.setup()
			environ := append([]string{"PATH=/usr/bin:/bin", "HOME=" + home}, c.environ...)
			p, err := locate([]string{"claude", "-p", "hi"}, "/usr/bin:/bin", places(environ, home), never)
			if err != nil {
				t.Fatal(err)
			}
			if p.Path != filepath.Join(pkg, "bin", "claude.exe") || !slices.Equal(p.Args, []string{"claude", "-p", "hi"}) {
				t.Errorf("path %s args %q, want %s", p.Path, p.Args, filepath.Join(pkg, "bin", "claude.exe"))
			}
			if !slices.Equal(p.Binds, []string{pkg}) {
				t.Errorf("binds %q, want only the package folder %s", p.Binds, pkg)
			}
		})
	}
}

// TestLocateScript: a script's interpreter (node, by env) is shown alone
// and started directly with the script, the node its package was
// installed with first; a program in no package is shown alone; one the
// view shows already needs nothing.
func TestLocateScript(t *testing.T) {
	home := t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	prefix := filepath.Join(home, ".nvm", "versions", "node", "v22.1.0")
	node := filepath.Join(prefix, "bin", "node")
	write(t, node, elf, 0o755)
	write(t, filepath.Join(home, "other", "node"), elf, 0o755)
	pkg := filepath.Join(prefix, "lib", "node_modules", "agent")
	fakeInstall(t, pkg, "cli.js", "#!/usr/bin/env node\nconsole.log(1)\n", filepath.Join(prefix, "bin", "agent"))

	p, err := locate([]string{"agent", "--x"}, filepath.Join(home, "other")+":/usr/bin", places([]string{"HOME=" + home}, home), never)
	if err != nil {
		t.Fatal(err)
	}
	if p.Path != node || !slices.Equal(p.Args, []string{node, filepath.Join(pkg, "cli.js"), "--x"}) {
		t.Errorf("path %s args %q", p.Path, p.Args)
	}
	if !slices.Equal(p.Binds, []string{pkg, node}) {
		t.Errorf("binds %q, want the package and node", p.Binds)
	}

	// env -S with arguments; an interpreter line env can't run is refused.
	write(t, filepath.Join(home, "bin", "s1"), "#!/usr/bin/env -S node --no-warnings\n", 0o755)
	write(t, filepath.Join(home, "bin", "s2"), "#!/usr/bin/env node --no-warnings\n", 0o755)
	dirs := []string{filepath.Join(home, "bin")}
	if p, err := locate([]string{"s1"}, filepath.Join(home, "other"), dirs, never); err != nil || !slices.Equal(p.Args, []string{filepath.Join(home, "other", "node"), "--no-warnings", filepath.Join(home, "bin", "s1")}) {
		t.Errorf("env -S: %+v %v", p, err)
	}
	if _, err := locate([]string{"s2"}, filepath.Join(home, "other"), dirs, never); err == nil || !strings.Contains(err.Error(), "env PROGRAM") {
		t.Errorf("env with two words and no -S: %v", err)
	}

	// A file of no package is shown alone (the native installer's).
	write(t, filepath.Join(home, ".local", "share", "claude", "versions", "2.1.332"), elf, 0o755)
	os.MkdirAll(filepath.Join(home, ".local", "bin"), 0o755)
	os.Symlink("../share/claude/versions/2.1.332", filepath.Join(home, ".local", "bin", "claude"))
	p, err = locate([]string{"claude"}, "/usr/bin", places([]string{"HOME=" + home}, home), never)
	if err != nil || !slices.Equal(p.Binds, []string{filepath.Join(home, ".local", "share", "claude", "versions", "2.1.332")}) {
		t.Errorf("a lone file: %+v %v", p, err)
	}
	// What the view shows already is not bound again.
	p, err = locate([]string{"claude"}, "/usr/bin", places([]string{"HOME=" + home}, home), func(p string) bool { return under(p, filepath.Join(home, ".local", "share")) })
	if err != nil || len(p.Binds) != 0 {
		t.Errorf("shown already: %+v %v", p, err)
	}
	// Not found: says where it looked.
	if _, err := locate([]string{"no-such-agent"}, "/usr/bin", places([]string{"HOME=" + home}, home), never); err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".local", "bin")) {
		t.Errorf("not found: %v", err)
	}
}

// TestApart: the program's folder is never shown when it overlaps what
// the agent must never see, or holds the person's home.
func TestApart(t *testing.T) {
	cfg := &config.Config{Vault: "/h/notes", File: "/h/.config/vaultgate/notes.toml", StateDir: "/h/.local/state/vaultgate/notes-1", AuditPath: "/h/.local/state/vaultgate/notes-1/audit.jsonl"}
	for _, c := range []struct {
		bind string
		ok   bool
	}{
		{"/h/.local/lib/node_modules/@anthropic-ai/claude-code", true},
		{"/h/.local", false},                   // holds the state folder
		{"/h/notes/node_modules/agent", false}, // inside the vault
		{"/h", false},                          // the home
		{"/", false},                           // everything
		{"/h/.local/state/vaultgate/x", true},  // beside the state folder, not in it
		{"/h/.local/state/vaultgate/notes-1/bin", false},
	} {
		err := apart(cfg, "/h", []string{c.bind})
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.bind, err, c.ok)
		}
	}
}
