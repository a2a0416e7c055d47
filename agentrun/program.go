package agentrun

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The agent's program is found on the host, where the person installed
// it: in the agent's PATH, or where npm (its global prefix), ~/.local or
// nvm put programs. The view then shows only what it needs to start, each
// read-only at its own path: its own package folder (an npm package: the
// folder right under node_modules that holds it), or the file alone; and,
// for a script, its interpreter's file (node). Never a parent such as
// ~/.local or the home, which hold the person's other files and the
// state folder.

// program is the agent's program as the view starts it.
type program struct {
	Path string   // what the helper execs: a real file, symlinks resolved
	Args []string // its argv
	// Binds are the host paths the view shows read-only for it to start.
	Binds []string
	// Found is where it was found, as named (a symlink, perhaps).
	Found string
}

// systemDirs are shown in every agent's view (sandbox.AgentWall: the
// wall's system folders and /opt): a program there needs no bind.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// places is where run looks for a program that is not in the agent's
// PATH, on the launcher's environment: each npm global prefix's bin, then
// ~/.local/bin, ~/.local/node_modules/.bin (npm install --prefix
// ~/.local) and each nvm node's bin, newest first.
func places(environ []string, home string) []string {
	var out []string
	for _, p := range npmPrefixes(environ, home) {
		out = append(out, filepath.Join(p, "bin"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".local", "bin"), filepath.Join(home, ".local", "node_modules", ".bin"))
	}
	nvm, _ := lookup(environ, "NVM_DIR")
	if !filepath.IsAbs(nvm) && home != "" {
		nvm = filepath.Join(home, ".nvm")
	}
	if nvm != "" {
		out = append(out, nvmBins(filepath.Join(nvm, "versions", "node"))...)
	}
	return dedupe(out)
}

// npmPrefixes are npm's global prefixes as `npm prefix -g` finds them,
// read without running npm: $NPM_CONFIG_PREFIX (any case), then prefix=
// in the user's .npmrc and npm's global npmrc, then the folder above
// node's bin. Each that is absolute is kept, in that order.
func npmPrefixes(environ []string, home string) []string {
	var out []string
	for _, k := range []string{"NPM_CONFIG_PREFIX", "npm_config_prefix"} {
		if v, ok := lookup(environ, k); ok && filepath.IsAbs(v) {
			out = append(out, filepath.Clean(v))
		}
	}
	userrc, _ := lookup(environ, "NPM_CONFIG_USERCONFIG")
	if !filepath.IsAbs(userrc) && home != "" {
		userrc = filepath.Join(home, ".npmrc")
	}
	nodeDir := ""
	if path, ok := lookup(environ, "PATH"); ok {
		if node, err := inDirs("node", absDirs(path)); err == nil {
			if real, err := filepath.EvalSymlinks(node); err == nil {
				nodeDir = filepath.Dir(filepath.Dir(real))
			}
		}
	}
	rcs := []string{userrc}
	if nodeDir != "" {
		rcs = append(rcs, filepath.Join(nodeDir, "etc", "npmrc"))
	}
	for _, rc := range rcs {
		if p := npmrcPrefix(rc, home); p != "" {
			out = append(out, p)
		}
	}
	if nodeDir != "" {
		out = append(out, nodeDir)
	}
	return dedupe(out)
}

// npmrcPrefix is the prefix an npmrc file sets, absolute, or "".
func npmrcPrefix(file, home string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	prefix := ""
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || strings.TrimSpace(k) != "prefix" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		for _, h := range []string{"${HOME}", "$HOME", "~"} {
			if home != "" && (v == h || strings.HasPrefix(v, h+"/")) {
				v = home + v[len(h):]
			}
		}
		if filepath.IsAbs(v) {
			prefix = filepath.Clean(v) // the last one counts, as in npm
		}
	}
	return prefix
}

// nvmBins are the bin folders of nvm's node versions, newest first.
func nvmBins(versions string) []string {
	ents, err := os.ReadDir(versions)
	if err != nil {
		return nil
	}
	var vs []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "v") {
			vs = append(vs, e.Name())
		}
	}
	slices.SortFunc(vs, func(a, b string) int { return compareVersions(b, a) })
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = filepath.Join(versions, v, "bin")
	}
	return out
}

// compareVersions orders "v22.3.0" after "v20.11.1", number by number.
func compareVersions(a, b string) int {
	as, bs := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, errx := strconv.Atoi(as[i])
		y, erry := strconv.Atoi(bs[i])
		if errx != nil || erry != nil {
			if c := strings.Compare(as[i], bs[i]); c != 0 {
				return c
			}
			continue
		}
		if x != y {
			return x - y
		}
	}
	return len(as) - len(bs)
}

func absDirs(path string) []string {
	var out []string
	for _, d := range filepath.SplitList(path) {
		if filepath.IsAbs(d) { // a relative PATH entry means nothing in another view
			out = append(out, d)
		}
	}
	return out
}

func dedupe(ps []string) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// inDirs finds an executable file name in dirs, in order.
func inDirs(name string, dirs []string) (string, error) {
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}

// locate finds the agent's program (argv[0]) and what the view must show
// for it to start. path is the agent's PATH; more are the other places to
// look; shown reports a host path the view shows already (the system
// folders, [run] read_only).
func locate(argv []string, path string, more []string, shown func(string) bool) (*program, error) {
	name := argv[0]
	var found string
	if strings.Contains(name, "/") {
		abs, err := filepath.Abs(name)
		if err != nil {
			return nil, err
		}
		if err := executable(abs); err != nil {
			return nil, fmt.Errorf("can't start %s: %w", name, err)
		}
		found = abs
	} else {
		dirs := append(absDirs(path), more...)
		p, err := inDirs(name, dirs)
		if err != nil {
			return nil, fmt.Errorf("can't start %s: not found in the agent's PATH (%s) nor where npm, ~/.local or nvm put programs (%s); give its path, or install it there", name, path, strings.Join(more, ", "))
		}
		found = p
	}
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		return nil, fmt.Errorf("can't start %s: %w", name, err)
	}
	if err := executable(real); err != nil {
		return nil, fmt.Errorf("can't start %s: %w", name, err)
	}
	prog := &program{Path: real, Args: slices.Clone(argv), Found: found}
	prog.bind(packageDir(real), real, shown)

	interp, iargs, isScript, err := shebang(real)
	if err != nil {
		return nil, fmt.Errorf("can't start %s: %w", name, err)
	}
	if !isScript {
		return prog, nil
	}
	// A script: its interpreter is started directly, at its real path and
	// shown alone, so that neither a symlink nor env's PATH search inside
	// the view (where most of the host's PATH is not) picks another.
	if filepath.Base(interp) == "env" && len(iargs) > 0 {
		bin := iargs[0]
		iargs = iargs[1:]
		var dirs []string
		if pre := npmPrefixOf(real); pre != "" {
			dirs = append(dirs, filepath.Join(pre, "bin")) // the node its package was installed with
		}
		dirs = append(append(dirs, absDirs(path)...), more...)
		if interp, err = inDirs(bin, dirs); err != nil {
			return nil, fmt.Errorf("can't start %s: its interpreter %s is not found in the agent's PATH (%s)", name, bin, path)
		}
	}
	ireal, err := filepath.EvalSymlinks(interp)
	if err == nil {
		err = executable(ireal)
	}
	if err != nil {
		return nil, fmt.Errorf("can't start %s: its interpreter %s: %w", name, interp, err)
	}
	prog.bind("", ireal, shown)
	prog.Path = ireal
	prog.Args = append(append(append([]string{ireal}, iargs...), real), argv[1:]...)
	return prog, nil
}

// bind adds what the view must show of file: its package folder dir, or
// the file alone; nothing if the view shows it already.
func (p *program) bind(dir, file string, shown func(string) bool) {
	b := dir
	if b == "" {
		b = file
	}
	if shown(file) || shown(b) || slices.Contains(p.Binds, b) {
		return
	}
	p.Binds = append(p.Binds, b)
}

// packageDir is the npm package that holds file: the nearest folder
// above it that lies right under node_modules (or under a @scope there)
// and has a package.json; "" when it is in none.
func packageDir(file string) string {
	for d := filepath.Dir(file); d != "/" && d != "."; d = filepath.Dir(d) {
		parent := filepath.Dir(d)
		under := filepath.Base(parent) == "node_modules" ||
			strings.HasPrefix(filepath.Base(parent), "@") && filepath.Base(filepath.Dir(parent)) == "node_modules"
		if !under || strings.HasPrefix(filepath.Base(d), ".") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(d, "package.json")); err == nil && fi.Mode().IsRegular() {
			return d
		}
	}
	return ""
}

// npmPrefixOf is the npm prefix a globally installed file lies in
// (PREFIX/lib/node_modules/…), or "".
func npmPrefixOf(file string) string {
	const mark = "/lib/node_modules/"
	if i := strings.LastIndex(file, mark); i > 0 {
		return file[:i]
	}
	return ""
}

// shebang reads a script's interpreter line as the kernel does: the
// interpreter and, after it, what the line holds (for "env", its words:
// env's own options are not read, and refused).
func shebang(file string) (interp string, args []string, script bool, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", nil, false, err
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", nil, false, nil
	}
	line, _, found := bytes.Cut(head[2:], []byte("\n"))
	if !found {
		return "", nil, true, fmt.Errorf("its interpreter line is longer than %d bytes", len(head))
	}
	fields := strings.Fields(string(line))
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return "", nil, true, fmt.Errorf("its interpreter line %q names no absolute program", line)
	}
	interp = fields[0]
	if filepath.Base(interp) != "env" {
		// The kernel passes the rest of the line as one argument.
		if rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(line)), interp)); rest != "" {
			args = []string{rest}
		}
		return interp, args, true, nil
	}
	words, split := fields[1:], false
	if len(words) > 0 && words[0] == "-S" {
		words, split = words[1:], true
	}
	// Without -S the kernel hands env the rest as one word, which names
	// a program only when it is one.
	if len(words) == 0 || !split && len(words) > 1 || strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=") {
		return "", nil, true, fmt.Errorf("its interpreter line %q is not \"env PROGRAM\" or \"env -S PROGRAM ARGS\"", line)
	}
	return interp, words, true, nil
}

// under reports whether p is dir or lies beneath it.
func under(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
