package shell

import (
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// The path model: how a word in a path position becomes the path an effect
// names, and what the analysis knows of the file system as the command itself
// changes it.
//
// A field is resolved against the working directory (the physical one, as
// the kernel knows it), then walked as the kernel walks a path
// (resolveAbs): component by component from the root, each symlink — one
// this command made (fsState.links) or one on disk (Options.Stat and
// Options.Readlink) — replaced by its target before the components after
// it, so a ".." after a link is taken from the link's target. Device and
// descriptor paths (/dev/null, /dev/fd/N, /proc/self/fd/N) are looked up in
// the descriptor table as they are met. A path under a name whose contents
// the analysis lost track of (fsState.taint: a moved folder, a link to an
// unknown target, an extracted archive) is unknown, and so is one whose
// link can't be read or loops.
//
// The effect helpers (pathEffect, emitPaths, emitResolved) are the only way
// the commands emit a path effect, so what they say about links, globs and
// "create or modify" holds for every command.

// fsState is the file system as the command changed it so far. It outlives
// subshells: a subshell's changes fold back into its parent.
type fsState struct {
	links map[string]string // a symlink created here → its target (absolute, lexical)
	taint map[string]bool   // paths whose subtree (true: and the path itself) can't be known
	made  map[string]bool   // folders this command surely made (mkdir), for cd
	// stat is Options.Stat: what is at a name before the command runs.
	stat func(abs string) FileInfo
}

func newFSState() fsState {
	return fsState{links: map[string]string{}, taint: map[string]bool{}, made: map[string]bool{}}
}

func (s fsState) clone() fsState {
	return fsState{links: maps.Clone(s.links), taint: maps.Clone(s.taint), made: maps.Clone(s.made), stat: s.stat}
}

// foldFS keeps the file system changes a subshell made: a link that the two
// disagree on, or that only one of them still has, becomes unknown.
func (s fsState) foldFS(child *state) {
	for k, v := range child.links {
		if old, ok := s.links[k]; !ok || old != v {
			if ok {
				s.taint[k] = true
				delete(s.links, k)
				continue
			}
			s.links[k] = v
		}
	}
	for k := range s.links {
		if _, ok := child.links[k]; !ok {
			s.taint[k] = true
			delete(s.links, k)
		}
	}
	for k, v := range child.taint {
		s.taint[k] = s.taint[k] || v
	}
	for k := range child.made {
		s.made[k] = true
	}
}

// removed notes a name the command removes or moves away: a cd into it, or
// into what lies under it, may fail (checkCds).
func (a *analyzer) removed(r resolved) {
	if !r.unknown && !r.none && !r.subtree {
		a.gone = append(a.gone, r.abs)
	}
}

// checkCds makes exec a command that cds into a folder it also removes or
// moves away (before the cd or not: a loop may run it first). If that cd
// fails, bash runs what follows in the folder it was in, which is not
// where the analysis judged it.
func (a *analyzer) checkCds() {
	for _, t := range a.cds {
		for _, g := range a.gone {
			if t == g || strings.HasPrefix(t, g+"/") {
				a.exec(nil, "cd", CdMayFail, "cd "+relTo(a.opts.Vault, t))
				return
			}
		}
	}
}

// sameFS reports whether two states saw the same file system changes.
func (x fsState) sameFS(y fsState) bool {
	if len(x.links) != len(y.links) || len(x.taint) != len(y.taint) || len(x.made) != len(y.made) {
		return false
	}
	for k, v := range x.links {
		if w, ok := y.links[k]; !ok || w != v {
			return false
		}
	}
	for k, v := range x.taint {
		if w, ok := y.taint[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// forget drops the links this command made at or under a removed path.
func (a *analyzer) forget(st *state, r resolved) {
	if r.unknown || r.none {
		return
	}
	for l := range st.links {
		if l == r.abs || strings.HasPrefix(l, r.abs+"/") {
			delete(st.links, l)
		}
	}
}

// moved updates what the command made: links move with their names, and a
// moved folder or symlink makes the names under its new place unknown.
func (a *analyzer) moved(st *state, sr, dr resolved, info FileInfo) {
	if dr.unknown || dr.none {
		return
	}
	if sr.unknown || sr.subtree || info.Dir || info.Link {
		st.taint[dr.abs] = sr.unknown || sr.subtree || info.Link
	}
	if sr.unknown || sr.none {
		return
	}
	for l, t := range st.links {
		if l == sr.abs {
			delete(st.links, l)
			if filepath.Dir(l) == filepath.Dir(dr.abs) {
				st.links[dr.abs] = t
			} else {
				// A relative target now counts from another folder.
				st.taint[dr.abs] = true
			}
		} else if strings.HasPrefix(l, sr.abs+"/") {
			delete(st.links, l)
			st.taint[dr.abs] = false
		}
	}
}

// taintResolved marks the subtree under r (and with self, r itself) as
// unknown: what is there now can't be seen.
func (a *analyzer) taintResolved(st *state, r resolved, self bool) {
	if !r.unknown && !r.none {
		st.taint[r.abs] = st.taint[r.abs] || self
	}
}

// resolved is where a field leads: an absolute real path, an unknown one,
// or none at all (a device or pipe that is no file).
type resolved struct {
	abs     string
	unknown bool
	none    bool // no file effect (/dev/null, a pipe)
	subtree bool
}

var noFileDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true,
	"/dev/urandom": true, "/dev/tty": true,
}

// resolve turns a field into the absolute real path it names.
func (a *analyzer) resolve(st *state, f field, follow bool) resolved {
	if f.unknown {
		return resolved{unknown: true}
	}
	if f.proc {
		return resolved{none: true}
	}
	s := f.s
	sub := false
	if f.meta >= 0 {
		if hasDotDot(s[f.meta:]) {
			// notes/*/..: each match's ".." leads out of wherever that
			// match's link leads, not back to notes.
			return resolved{unknown: true}
		}
		s = s[:f.meta]
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			s = s[:i+1]
		} else {
			s = ""
		}
		sub = true
		if s == "" {
			s = "."
		}
	}
	if s == "" {
		return resolved{none: true}
	}
	if strings.HasSuffix(s, "/") || strings.HasSuffix(s, "/.") {
		follow = true
	}
	if !filepath.IsAbs(s) {
		if !st.cwdKnown {
			return resolved{unknown: true}
		}
		s = st.cwd + "/" + s
	}
	r := a.resolveAbs(st, s, follow)
	if sub && !r.unknown && !r.none {
		r.subtree = true
	}
	return r
}

// maxLinkHops bounds the links one lookup follows, as the kernel's ELOOP
// does; past it the path is unknown (the kernel would fail the call).
const maxLinkHops = 40

// resolveAbs walks an absolute path as the kernel's lookup does, one
// component at a time from the root: a symlink (one on disk, or one this
// command made) is replaced by its target before the components after it,
// so a ".." after a link climbs out of the link's target, not out of the
// folder that holds the link. p need not be clean. follow says whether a
// final symlink is followed too.
func (a *analyzer) resolveAbs(st *state, p string, follow bool) resolved {
	rest := splitPath(p)
	cur := "/"
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		last := onlyDots(rest)
		if isFdDir(next) && !last {
			// /dev/fd/N: the command's descriptor, not this process's.
			n := rest[0]
			rest = rest[1:]
			next, last = next+"/"+n, onlyDots(rest)
		}
		if r, ok := a.special(st, next, last); ok {
			if last {
				return r
			}
			if r.unknown || r.none || r.abs == "" {
				return resolved{unknown: true}
			}
			cur = r.abs // a descriptor bound to a folder: what lies in it
			continue
		}
		if next == "/proc/self" || next == "/proc/thread-self" {
			cur = next // the command's own process, not this one
			continue
		}
		// A final link is followed when the op follows, or when a "/"
		// or "/." comes after it, as the kernel does.
		through := !last || follow || len(rest) > 0
		for t, self := range st.taint {
			if next == t && (!last || self && through) || strings.HasPrefix(next, t+"/") {
				return resolved{unknown: true}
			}
		}
		if !through {
			cur = next
			break
		}
		target, isLink := st.links[next]
		if !isLink {
			if !a.opts.Stat(next).Link {
				cur = next
				continue
			}
			var ok bool
			if target, ok = a.readLink(next); !ok {
				return resolved{unknown: true}
			}
		}
		if hops++; hops > maxLinkHops {
			return resolved{unknown: true} // ELOOP
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved{abs: cur}
}

// readLink reads the target of the symlink at abs (a path whose folders
// are real). A target that only means something to one process (a
// descriptor's "pipe:[12]", a link inside /proc/PID) can't be fixed here.
func (a *analyzer) readLink(abs string) (string, bool) {
	if strings.HasPrefix(abs, "/proc/") && strings.Count(abs, "/") > 2 {
		return "", false
	}
	t, ok := a.opts.Readlink(abs)
	if !ok || t == "" || strings.Contains(t, ":[") || strings.HasPrefix(t, "anon_inode:") {
		return "", false
	}
	return t, true
}

func splitPath(p string) []string { return strings.Split(p, "/") }

// hasDotDot reports whether a path (or part of one) has a ".." component.
func hasDotDot(p string) bool {
	for _, c := range splitPath(p) {
		if c == ".." {
			return true
		}
	}
	return false
}

// onlyDots reports whether the components left name nothing further (a
// trailing "/" or "/.").
func onlyDots(rest []string) bool {
	for _, c := range rest {
		if c != "" && c != "." {
			return false
		}
	}
	return true
}

func isFdDir(p string) bool {
	return p == "/dev/fd" || p == "/proc/self/fd" || p == "/proc/thread-self/fd"
}

// special handles device and descriptor paths, met as the component p of
// a lookup (last: nothing follows it).
func (a *analyzer) special(st *state, p string, last bool) (resolved, bool) {
	if noFileDevices[p] {
		if !last {
			return resolved{unknown: true}, true
		}
		return resolved{none: true}, true
	}
	fd := -1
	switch {
	case p == "/dev/stdin":
		fd = 0
	case p == "/dev/stdout":
		fd = 1
	case p == "/dev/stderr":
		fd = 2
	case strings.HasPrefix(p, "/dev/fd/"):
		fd = fdNumber(p[len("/dev/fd/"):])
	case strings.HasPrefix(p, "/proc/"):
		rest := p[len("/proc/"):]
		pid, tail, _ := strings.Cut(rest, "/")
		if pid == "self" || pid == "thread-self" {
			if strings.HasPrefix(tail, "fd/") {
				fd = fdNumber(tail[3:])
				break
			}
		}
		if pid == "self" || pid == "thread-self" || isNumber(pid) {
			// cwd, root, fd, map_files… of a process alias arbitrary files.
			if tail == "" && last || strings.HasPrefix(tail, "cwd") || strings.HasPrefix(tail, "root") ||
				strings.HasPrefix(tail, "fd") || strings.HasPrefix(tail, "map_files") || strings.HasPrefix(tail, "exe") ||
				strings.HasPrefix(tail, "task") {
				return resolved{unknown: true}, true
			}
		}
		return resolved{}, false
	default:
		return resolved{}, false
	}
	if fd < 0 {
		return resolved{unknown: true}, true
	}
	b, ok := st.fds[fd]
	if !ok {
		return resolved{unknown: true}, true
	}
	switch b.kind {
	case fdFile:
		return resolved{abs: b.path}, true
	case fdPipe, fdNull:
		return resolved{none: true}, true
	}
	return resolved{unknown: true}, true
}

func fdNumber(s string) int {
	if !isNumber(s) || s[0] == '-' || s[0] == '+' {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 1<<20 {
		return -1
	}
	return n
}

// pathOpts says how one effect treats its path.
type pathOpts struct {
	follow  bool   // the op follows a final symlink
	subtree bool   // the op covers the subtree
	rename  bool   // the command replaces or removes the name by rename
	source  string // for move-in and link: where it comes from
	mode    createMode
}

// createMode: a write to a name that may not exist is a create, or a
// modify of what is there (or of a file this command hard-linked).
type createMode uint8

const (
	plainOp  createMode = iota
	orCreate            // modify if it exists, else create
)

// pathEffect emits op on the path a field names, and returns where it went.
func (a *analyzer) pathEffect(st *state, f field, op zones.Op, cmd string, o pathOpts) resolved {
	r := a.resolve(st, f, o.follow)
	a.emitResolved(r, op, cmd, o)
	if o.follow {
		for _, e := range a.globEscapes(st, f, r) {
			a.emitResolved(e, op, cmd, o)
		}
	}
	return r
}

// emitPaths emits op on each field.
func (a *analyzer) emitPaths(st *state, fs []field, op zones.Op, cmd string, o pathOpts) {
	for _, f := range fs {
		if s, ok := f.lit(); ok && s == "-" && op == zones.OpRead {
			continue
		}
		a.pathEffect(st, f, op, cmd, o)
	}
}

func (a *analyzer) emitResolved(r resolved, op zones.Op, cmd string, o pathOpts) {
	if r.none {
		return
	}
	e := Effect{Op: op, Command: cmd, ByRename: o.rename, Source: o.source}
	if r.unknown {
		e.Unknown = true
		if op == zones.OpCreate && o.mode == orCreate {
			e.Op = zones.OpModify
		}
		a.emit(e)
		return
	}
	e.Path = r.abs
	e.Subtree = r.subtree || o.subtree
	if o.mode == orCreate {
		if a.opts.Stat(r.abs).Exists || a.linked[r.abs] {
			e.Op = zones.OpModify
		} else {
			e.Op = zones.OpCreate
		}
	}
	a.emit(e)
}

// maxGlobMatches bounds the expansion of one glob; past it the glob's links
// are unknown.
const maxGlobMatches = 512

// globEscapes expands a glob against the disk (and the links this command
// made) and returns where its matches really lead, for the matches that
// leave the glob's folder: truncate notes/* follows notes/x -> ../мета/x.
func (a *analyzer) globEscapes(st *state, f field, sub resolved) []resolved {
	if f.meta < 0 || f.unknown || f.proc || sub.unknown || sub.none {
		return nil
	}
	if f.deep {
		return a.treeEscapes(st, sub.abs)
	}
	s := f.s
	dir := s[:f.meta]
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		dir, s = s[:i], s[i+1:]
	} else {
		dir = "."
	}
	if dir == "" {
		dir = "/"
	}
	if !filepath.IsAbs(dir) {
		dir = st.cwd + "/" + dir
	}
	// Not cleaned: notes/link/../* lists where notes/link/.. really is.
	cur := []string{dir}
	for _, comp := range strings.Split(s, "/") {
		if comp == "" {
			continue
		}
		var next []string
		for _, c := range cur {
			if globIndex(comp) < 0 && !strings.ContainsAny(comp, "*?[") {
				next = append(next, c+"/"+comp)
				continue
			}
			real := a.resolveAbs(st, c, true)
			if real.unknown {
				return []resolved{{unknown: true}}
			}
			names := a.opts.ReadDir(real.abs)
			for l := range st.links {
				if filepath.Dir(l) == real.abs {
					names = append(names, filepath.Base(l))
				}
			}
			for _, n := range names {
				if strings.HasPrefix(n, ".") && !strings.HasPrefix(comp, ".") {
					continue
				}
				if ok, err := filepath.Match(comp, n); ok || err != nil {
					next = append(next, filepath.Join(real.abs, n))
				}
			}
			if len(next) > maxGlobMatches {
				return []resolved{{unknown: true}}
			}
		}
		cur = next
	}
	var out []resolved
	for _, m := range cur {
		r := a.resolveAbs(st, m, true)
		if r.none {
			continue
		}
		if r.unknown || r.abs != sub.abs && !strings.HasPrefix(r.abs, sub.abs+"/") {
			out = append(out, r)
		}
	}
	return out
}

// maxTreeEntries bounds the walk for links under a folder; past it the
// links are unknown.
const maxTreeEntries = 4096

// treeEscapes walks root (links not followed) and returns where the links in
// it lead, for those that leave it: find -exec cat {} reaches them.
func (a *analyzer) treeEscapes(st *state, root string) []resolved {
	var out []resolved
	seen := 0
	queue := []string{root}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		names := a.opts.ReadDir(dir)
		for l := range st.links {
			if filepath.Dir(l) == dir {
				names = append(names, filepath.Base(l))
			}
		}
		for _, n := range names {
			if seen++; seen > maxTreeEntries {
				return append(out, resolved{unknown: true})
			}
			p := filepath.Join(dir, n)
			_, made := st.links[p]
			info := a.opts.Stat(p)
			switch {
			case made || info.Link:
				r := a.resolveAbs(st, p, true)
				if r.none {
					continue
				}
				if r.unknown || r.abs != root && !strings.HasPrefix(r.abs, root+"/") {
					out = append(out, r)
				}
			case info.Dir:
				queue = append(queue, p)
			}
		}
	}
	for t := range st.taint {
		if t == root || strings.HasPrefix(t, root+"/") {
			out = append(out, resolved{unknown: true})
			break
		}
	}
	return out
}
