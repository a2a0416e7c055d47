package shell

import (
	"path/filepath"
	"strings"

	"github.com/vaultgate/vaultgate/zones"
)

// transfer is what a command with sources and a destination does to each
// source and the name it gets: the operands are SOURCE... DEST, or with an
// intoValue option (-t DIR) all of them are sources.
type transfer func(a *analyzer, st *state, inv *invocation, sub bool)

// destinations works out where sources go for mv, cp, ln, install: into a
// target folder (-t, several sources, or an existing folder), or onto the name.
func (a *analyzer) destinations(st *state, into, ops []field, noTargetDir bool) (srcs []field, dst field, toDir bool, ok bool) {
	if len(into) > 0 {
		return ops, into[len(into)-1], true, true
	}
	if len(ops) < 2 {
		return nil, field{}, false, false
	}
	srcs, dst = ops[:len(ops)-1], ops[len(ops)-1]
	if noTargetDir {
		return srcs, dst, false, true
	}
	if len(srcs) > 1 {
		return srcs, dst, true, true
	}
	r := a.resolve(st, dst, true)
	if r.unknown {
		return srcs, dst, true, true
	}
	if s, ok := dst.lit(); ok && strings.HasSuffix(s, "/") {
		return srcs, dst, true, true
	}
	if !r.none && a.opts.Stat(r.abs).Dir {
		return srcs, dst, true, true
	}
	if _, made := st.links[r.abs]; made {
		return srcs, dst, true, true
	}
	return srcs, dst, false, true
}

// target is the field for src's name inside dir.
func target(dir, src field) field {
	if dir.unknown || src.unknown || src.proc || dir.proc {
		return field{meta: -1, unknown: true}
	}
	base := filepath.Base(strings.TrimRight(src.s, "/"))
	if src.meta >= 0 {
		// A glob source lands somewhere in the folder.
		return field{s: strings.TrimRight(dir.s, "/") + "/*", meta: len(strings.TrimRight(dir.s, "/")) + 1}
	}
	return field{s: strings.TrimRight(dir.s, "/") + "/" + base, meta: dir.meta}
}

// pairs calls each with every source and the name it gets.
func (a *analyzer) pairs(st *state, inv *invocation, noTargetDir bool, each func(src, dst field)) {
	srcs, dst, into, ok := a.destinations(st, inv.values(intoValue), inv.ops, noTargetDir)
	if !ok {
		return
	}
	for _, s := range srcs {
		d := dst
		if into {
			d = target(dst, s)
		}
		each(s, d)
	}
}

// moves: each source's name goes away and reappears at the destination (mv).
func moves(a *analyzer, st *state, inv *invocation, _ bool) {
	a.pairs(st, inv, inv.is(onto), func(s, d field) {
		sr := a.resolve(st, s, false)
		info := FileInfo{}
		if !sr.unknown && !sr.none {
			info = a.opts.Stat(sr.abs)
		}
		sub := sr.subtree || sr.unknown || info.Dir
		a.emitResolved(sr, zones.OpMoveOut, inv.name, pathOpts{rename: true, subtree: sub})
		a.removed(sr)
		dr := a.resolve(st, d, false)
		src := ""
		if !sr.unknown && !sr.none {
			src = sr.abs
		}
		if sr.none {
			return
		}
		a.emitResolved(dr, zones.OpMoveIn, inv.name, pathOpts{rename: true, subtree: sub, source: src})
		if inv.is(backup) && !dr.unknown && !dr.none {
			a.emit(Effect{Op: zones.OpCreate, Path: dr.abs + "~", Command: inv.name})
		}
		a.moved(st, sr, dr, info)
	})
}

// copies: each source is read and written at the destination (cp); with
// hardLink the destination is a second name for the source.
func copies(a *analyzer, st *state, inv *invocation, rec bool) {
	deref := inv.is(derefTree)
	nodef := rec && !deref || inv.is(noFollow)
	a.pairs(st, inv, inv.is(onto), func(s, d field) {
		sr := a.resolve(st, s, true)
		info := FileInfo{}
		if !sr.unknown && !sr.none {
			info = a.opts.Stat(sr.abs)
		}
		sub := rec && (sr.unknown || sr.subtree || info.Dir)
		a.emitResolved(sr, zones.OpRead, inv.name, pathOpts{subtree: sub})
		for _, e := range a.globEscapes(st, s, sr) {
			a.emitResolved(e, zones.OpRead, inv.name, pathOpts{subtree: sub})
		}
		if sub && deref {
			a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: inv.name})
		}
		dr := a.resolve(st, d, true)
		if inv.is(hardLink) {
			src := ""
			if !sr.unknown && !sr.none {
				src = sr.abs
			}
			a.emitResolved(dr, zones.OpLink, inv.name, pathOpts{subtree: sub, source: src})
			if !dr.unknown && !dr.none {
				a.linked[dr.abs] = true
			}
			return
		}
		a.emitResolved(dr, zones.OpCreate, inv.name, pathOpts{subtree: sub, mode: orCreate})
		for _, e := range a.globEscapes(st, d, dr) {
			a.emitResolved(e, zones.OpCreate, inv.name, pathOpts{subtree: sub, mode: orCreate})
		}
		if sub {
			a.intoTree(st, dr, inv.name, zones.OpModify)
		}
		if !dr.unknown && !dr.none && (sub || nodef && !sr.unknown && !sr.none && a.isLink(st, s)) {
			st.taint[dr.abs] = st.taint[dr.abs] || nodef && !sub
		}
	})
}

// isLink reports whether the name f gives is a symlink (on disk or made
// by this command), its final link not followed.
func (a *analyzer) isLink(st *state, f field) bool {
	r := a.resolve(st, f, false)
	if r.unknown || r.none {
		return false
	}
	_, made := st.links[r.abs]
	return made || a.opts.Stat(r.abs).Link
}

// installs: each source is read and written at the destination; with
// makesDirs the operands are folders to create (install).
func installs(a *analyzer, st *state, inv *invocation, _ bool) {
	if inv.is(makesDirs) {
		a.emitPaths(st, inv.ops, zones.OpCreate, inv.name, pathOpts{mode: orCreate})
		return
	}
	a.pairs(st, inv, inv.is(onto), func(s, d field) {
		a.pathEffect(st, s, zones.OpRead, inv.name, pathOpts{follow: true})
		a.pathEffect(st, d, zones.OpCreate, inv.name, pathOpts{mode: orCreate})
	})
}

// links: the destination becomes a link to the source, symbolic or hard
// (ln). One operand links it into the working directory.
func links(a *analyzer, st *state, inv *invocation, _ bool) {
	each := func(s, d field) {
		dr := a.resolve(st, d, false)
		if inv.is(replaces) && !dr.unknown && !dr.none && a.opts.Stat(dr.abs).Exists {
			// -f replaces the name: what was there is gone.
			a.emitResolved(dr, zones.OpDelete, inv.name, pathOpts{})
		}
		if !inv.is(symbolic) {
			a.hardLink(st, inv, s, dr)
			return
		}
		a.emitResolved(dr, zones.OpCreate, inv.name, pathOpts{})
		if dr.unknown || dr.none {
			return
		}
		t, ok := s.lit()
		if !ok {
			a.taintResolved(st, dr, true)
			return
		}
		if inv.is(relative) {
			// -r: the target is named from here, then made relative.
			tr := a.resolve(st, s, false)
			if tr.unknown || tr.none {
				a.taintResolved(st, dr, true)
				return
			}
			t = tr.abs
		} else if !filepath.IsAbs(t) {
			// Kept as written: the walk takes each ".." of it after the
			// links before it, as the kernel will.
			t = filepath.Dir(dr.abs) + "/" + t
		}
		delete(st.taint, dr.abs)
		st.links[dr.abs] = t
	}
	if len(inv.ops) == 1 && len(inv.values(intoValue)) == 0 {
		each(inv.ops[0], target(litField("."), inv.ops[0]))
		return
	}
	a.pairs(st, inv, inv.is(onto), each)
}

// hardLink makes the name dr a second name for the file s names.
func (a *analyzer) hardLink(st *state, inv *invocation, s field, dr resolved) {
	sr := a.resolve(st, s, inv.is(follow))
	src := ""
	if !sr.unknown && !sr.none {
		src = sr.abs
	}
	a.emitResolved(dr, zones.OpLink, inv.name, pathOpts{source: src, subtree: sr.subtree})
	if !dr.unknown && !dr.none {
		a.linked[dr.abs] = true
	}
	if sr.unknown || sr.subtree || !sr.none && a.opts.Stat(sr.abs).Link {
		a.taintResolved(st, dr, true)
	}
}

// syncs: the sources are read whole and the destination folder is brought
// up to date, with mirrors removing what the sources lack (rsync).
func syncs(a *analyzer, st *state, inv *invocation, _ bool) {
	if inv.is(remoteShell) {
		a.exec(st, inv.name, ProgramOption, inv.name+" --rsh/--rsync-path")
		return
	}
	ops := inv.ops
	if len(ops) < 2 {
		a.emitPaths(st, ops, zones.OpRead, inv.name, pathOpts{follow: true, subtree: true})
		return
	}
	for _, f := range ops {
		if s, ok := f.lit(); ok && strings.Contains(s, ":") {
			a.exec(st, inv.name, ProgramOption, inv.name+" remote (runs a remote shell)")
			return
		}
	}
	srcs, dst := ops[:len(ops)-1], ops[len(ops)-1]
	a.emitPaths(st, srcs, zones.OpRead, inv.name, pathOpts{follow: true, subtree: true})
	if inv.is(derefTree) {
		a.emit(Effect{Op: zones.OpRead, Unknown: true, Command: inv.name})
	}
	if inv.is(dryRun) {
		return
	}
	r := a.resolve(st, dst, true)
	a.emitResolved(r, zones.OpModify, inv.name, pathOpts{subtree: true})
	if inv.is(mirrors) {
		a.emitResolved(r, zones.OpDelete, inv.name, pathOpts{subtree: true})
		a.intoTree(st, r, inv.name, zones.OpModify, zones.OpDelete)
	} else {
		a.intoTree(st, r, inv.name, zones.OpModify)
	}
	if !inv.is(derefTree) {
		a.taintResolved(st, r, false)
	}
}

// unpack writes the whole tree of the into folder (default the working
// directory), whose contents are then unknown (unzip).
func (a *analyzer) unpack(st *state, inv *invocation) {
	if len(inv.ops) == 0 || inv.is(listsOnly) {
		return
	}
	dir := litField(".")
	if d := inv.values(intoValue); len(d) > 0 {
		dir = d[len(d)-1]
	}
	r := a.resolve(st, dir, true)
	a.emitResolved(r, zones.OpModify, inv.name, pathOpts{subtree: true})
	a.intoTree(st, r, inv.name, zones.OpModify)
	a.taintResolved(st, r, false)
}

// intoTree judges a folder that a command writes files into (extracts,
// copies, syncs) with the links already inside it: a member named o/x
// lands where the link o leads, so each link that leads out of the folder
// gets the folder's effects on its whole target.
func (a *analyzer) intoTree(st *state, r resolved, cmd string, ops ...zones.Op) {
	if r.unknown || r.none {
		return
	}
	for _, e := range a.treeEscapes(st, r.abs) {
		for _, op := range ops {
			a.emitResolved(e, op, cmd, pathOpts{subtree: true})
		}
	}
}

// makeDir creates the folder f names; with parents, each missing folder on
// the way first.
func (a *analyzer) makeDir(st *state, f field, cmd string, parents bool) {
	r := a.resolve(st, f, false)
	if r.unknown || r.none {
		a.emitResolved(r, zones.OpCreate, cmd, pathOpts{})
		return
	}
	st.made[r.abs] = true
	if parents {
		var missing []string
		for d := filepath.Dir(r.abs); d != "/" && d != a.opts.Vault && !a.opts.Stat(d).Exists; d = filepath.Dir(d) {
			missing = append(missing, d)
		}
		for i := len(missing) - 1; i >= 0; i-- {
			a.emit(Effect{Op: zones.OpCreate, Path: missing[i], Command: cmd})
			st.made[missing[i]] = true
		}
		if a.opts.Stat(r.abs).Exists {
			return
		}
	}
	a.emitResolved(r, zones.OpCreate, cmd, pathOpts{})
}
