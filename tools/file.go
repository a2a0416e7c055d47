package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/spf13/afero"

	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

const (
	// maxReadWhole is the largest file read returns whole; past it the
	// model reads in parts, so one call can't flood its context.
	maxReadWhole = 10 << 20
	// readLines and readBytes bound a read without limit, so a long note
	// can't flood the model's context, nor make a client park the result
	// in a file of its own outside the vault (Claude Code 2.1.332 does so
	// past about 50,000 characters): the rest is read with offset and limit.
	readLines, readBytes = 2000, 40 << 10
	// maxWalk bounds the entries a walk for the links in a folder checks
	// one by one (links.go). A folder effect's paths are bounded by the
	// call's (Set.coverMax, folder.go).
	maxWalk = 200_000
	// tempPrefix names write's temporary files, as it does undo's: a name
	// vaultgate reserves (zones.ReservedPrefix), never listed. Start-up
	// removes those a stop left by the journal (Vault.Temps), not by it.
	tempPrefix = history.TempPrefix
)

// fileTools are the vault's file tools, documented in l.
func fileTools(l say.Lang) []Tool {
	pathParam := Param{Name: "path", Type: "string", Required: true, Description: say.PathParamDoc.Text(l)}
	return []Tool{
		{
			Name: "read", Title: say.ReadTitle.Text(l), ReadOnly: true, Idempotent: true,
			Description: say.ReadDoc.Text(l),
			Params: []Param{pathParam,
				{Name: "offset", Type: "integer", Description: say.ReadOffsetDoc.Text(l)},
				{Name: "limit", Type: "integer", Description: say.ReadLimitDoc.Text(l)}},
			plan: planRead,
		},
		{
			Name: "write", Title: say.WriteTitle.Text(l), Destructive: true, Idempotent: true,
			Description: say.WriteDoc.Text(l),
			Params: []Param{pathParam,
				{Name: "content", Type: "string", Required: true, Description: say.WriteContentDoc.Text(l)}},
			plan: planWrite,
		},
		{
			Name: "edit", Title: say.EditTitle.Text(l), Destructive: true,
			Description: say.EditDoc.Text(l),
			Params: []Param{pathParam,
				{Name: "old_string", Type: "string", Required: true, Description: say.EditOldDoc.Text(l)},
				{Name: "new_string", Type: "string", Required: true, Description: say.EditNewDoc.Text(l)},
				{Name: "replace_all", Type: "boolean", Description: say.EditReplaceAllDoc.Text(l)}},
			plan: planEdit,
		},
		{
			Name: "move", Title: say.MoveTitle.Text(l), Destructive: true,
			Description: say.MoveDoc.Text(l),
			Params: []Param{
				{Name: "source", Type: "string", Required: true, Description: say.MoveSourceDoc.Text(l)},
				{Name: "destination", Type: "string", Required: true, Description: say.MoveDestDoc.Text(l)},
				{Name: "overwrite", Type: "boolean", Description: say.MoveOverwriteDoc.Text(l)}},
			plan: planMove,
		},
		{
			Name: "delete", Title: say.DeleteTitle.Text(l), Destructive: true, Idempotent: true,
			Description: say.DeleteDoc.Text(l),
			Params: []Param{pathParam,
				{Name: "recursive", Type: "boolean", Description: say.DeleteRecursiveDoc.Text(l)}},
			plan: planDelete,
		},
		{
			Name: "list", Title: say.ListTitle.Text(l), ReadOnly: true, Idempotent: true,
			Description: say.ListDoc.Text(l),
			Params: []Param{
				{Name: "path", Type: "string", Description: say.ListPathDoc.Text(l)},
				{Name: "depth", Type: "integer", Description: say.ListDepthDoc{Max: maxListDepth}.Text(l)}},
			plan: planList,
		},
		{
			Name: "search", Title: say.SearchTitle.Text(l), ReadOnly: true, Idempotent: true,
			Description: say.SearchDoc.Text(l),
			Params: []Param{
				{Name: "query", Type: "string", Required: true, Description: say.SearchQueryDoc.Text(l)},
				{Name: "path", Type: "string", Description: say.SearchPathDoc.Text(l)},
				{Name: "regex", Type: "boolean", Description: say.SearchRegexDoc.Text(l)},
				{Name: "glob", Type: "string", Description: say.SearchGlobDoc.Text(l)},
				{Name: "max_results", Type: "integer", Description: say.SearchMaxDoc{Default: defaultResults, Max: maxResults}.Text(l)}},
			plan: planSearch,
		},
	}
}

// stat is what planners learn of a path without following its last link.
type stat struct {
	exists  bool
	dir     bool
	symlink bool
	regular bool
	fi      os.FileInfo
}

func (s *Set) stat(rel zones.Path) (stat, error) {
	if rel.Outside() {
		return stat{}, nil
	}
	return statOf(s.Vault.lstat(rel.String()))
}

func statOf(fi os.FileInfo, err error) (stat, error) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return stat{}, nil
		}
		return stat{}, err
	}
	return stat{exists: true, fi: fi, dir: fi.IsDir(), symlink: fi.Mode()&fs.ModeSymlink != 0, regular: fi.Mode().IsRegular()}, nil
}

func links(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Nlink)
	}
	return 0
}

// fileEffect describes writing to rel as it is now.
func fileEffect(op zones.Op, rel zones.Path, st stat) policy.Effect {
	e := policy.Effect{Op: op, Path: rel, Exists: st.exists}
	if st.exists && !st.symlink {
		e.Size, e.ModTime = st.fi.Size(), st.fi.ModTime()
		if st.regular {
			e.Links = links(st.fi)
		}
	}
	return e
}

// missingParents returns create effects for the folders above rel that do
// not exist yet, outermost first: making them is creating in their zones.
func (s *Set) missingParents(rel zones.Path) ([]policy.Effect, error) {
	var out []policy.Effect
	for dir := rel.Parent(); !dir.IsRoot() && !dir.Outside(); dir = dir.Parent() {
		st, err := s.stat(dir)
		if err != nil {
			return nil, err
		}
		if st.exists {
			break
		}
		out = append([]policy.Effect{{Op: zones.OpCreate, Path: dir}}, out...)
	}
	return out, nil
}

// target resolves a path argument for a tool that writes through its last
// component: parents resolved, the last kept, and a symlink there reported.
func (s *Set) target(a args, name string) (rel zones.Path, st stat, link string, err error) {
	p, err := s.path(a, name)
	if err != nil {
		return zones.Path{}, stat{}, "", err
	}
	return s.targetOf(p)
}

// readEffect is a read of p where it really leads (symlinks followed).
func (s *Set) readEffect(p zones.Path) (policy.Effect, error) {
	real, err := s.Vault.Resolve(p, true)
	if err != nil {
		return policy.Effect{}, err
	}
	e := policy.Effect{Op: zones.OpRead, Path: real}
	if real != p {
		e.AsGiven = p.String()
	}
	return e, nil
}

func planRead(s *Set, a args) (*Plan, error) {
	p, err := s.path(a, "path")
	if err != nil {
		return nil, err
	}
	e, err := s.readEffect(p)
	if err != nil {
		return nil, err
	}
	real := e.Path
	offset, limit := a.integer("offset", 0), a.integer("limit", 0)
	if offset < 0 {
		return nil, a.bad("offset", say.ArgNegative{})
	}
	if limit < 0 {
		return nil, a.bad("limit", say.ArgNegative{})
	}
	return &Plan{
		Effects: []policy.Effect{e},
		Run: func(context.Context) (*Result, error) {
			return s.runRead(real, offset, limit)
		},
	}, nil
}

// runRead reads lines offset.. (1-based; 0 is 1) of the file: limit of
// them, or without a limit at most readLines lines or readBytes bytes, with
// a note on how to read on when the file goes on.
func (s *Set) runRead(at zones.Path, offset, limit int) (*Result, error) {
	if at.Outside() {
		return nil, s.fail(say.OutsideVault{Path: at.String()})
	}
	rel := at.String()
	f, err := s.Vault.Fs.Open(rel)
	if err != nil {
		return nil, s.osFail(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, s.fail(say.IsFolder{Path: rel})
	}
	if !fi.Mode().IsRegular() {
		return nil, s.fail(say.NotRegular{Path: rel})
	}
	if offset < 1 {
		offset = 1
	}
	maxLines, maxBytes := limit, maxReadWhole
	if limit == 0 {
		maxLines, maxBytes = readLines, readBytes
	}
	part, ok, err := readWhole(f, fi.Size(), offset, maxLines, maxBytes) // most notes: one read
	if err == nil && !ok {
		part, err = readPart(f, offset, maxLines, maxBytes)
	}
	if err != nil {
		return nil, err
	}
	if !isText(part.data) {
		return nil, s.fail(say.NotText{Path: rel, Size: fi.Size()})
	}
	if s.State != nil {
		policy.MarkRead(s.State, rel, fi.Size(), fi.ModTime())
	}
	text := string(part.data)
	if part.more && (limit == 0 || part.last-offset+1 < limit) { // cut short of what was asked
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += "\n" + s.say(say.ReadCut{Path: rel, From: offset, To: part.last, Next: part.last + 1,
			Shown: int64(len(part.data)), Size: fi.Size(), LineCut: part.lineCut}) + "\n"
	}
	return &Result{Text: text}, nil
}

// part is what readPart read: the text, the number of its last line, and
// whether the file goes on past it (more) or that line was cut (lineCut).
type part struct {
	data          []byte
	last          int
	more, lineCut bool
}

// readPart returns lines offset.. (1-based), at most maxLines of them and
// maxBytes in all, with their line endings as in the file. Only a first
// line longer than maxBytes is cut, at a character boundary.
func readPart(r io.Reader, offset, maxLines, maxBytes int) (part, error) {
	br := newLineReader(r)
	var out bytes.Buffer
	p := part{last: offset - 1}
	for n := 1; ; n++ {
		line, err := br.next()
		if err != nil && err != io.EOF {
			return part{}, err
		}
		if n >= offset && len(line) > 0 {
			if p.last-offset+1 >= maxLines || out.Len()+len(line) > maxBytes {
				if out.Len() == 0 { // one line over the budget: its head
					cut := maxBytes
					for cut > 0 && !utf8.RuneStart(line[cut]) {
						cut--
					}
					out.Write(line[:cut])
					p.last, p.lineCut = n, true
				}
				p.more = true
				break
			}
			out.Write(line)
			p.last = n
		}
		if err == io.EOF {
			break
		}
	}
	p.data = out.Bytes()
	return p, nil
}

// readWhole is readPart's answer for a file read from its first line
// that fits the budget whole: one read of its size. ok is false when the
// file is not such a file (or grew meanwhile); f is then at its start
// again, for readPart.
func readWhole(f io.ReadSeeker, size int64, offset, maxLines, maxBytes int) (part, bool, error) {
	if offset != 1 || size > int64(maxBytes) {
		return part{}, false, nil
	}
	data := make([]byte, size+1) // one more, to see that the file ended
	n, err := io.ReadFull(f, data)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		data = data[:n]
		lines := bytes.Count(data, []byte{'\n'})
		if n > 0 && data[n-1] != '\n' {
			lines++
		}
		if lines <= maxLines {
			return part{data: data, last: lines}, true, nil
		}
	} else if err != nil {
		return part{}, false, err
	}
	_, err = f.Seek(0, io.SeekStart)
	return part{}, false, err
}

// isText is true for valid UTF-8 without NUL bytes.
func isText(b []byte) bool {
	return bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}

// writeEffects are the effects of writing a whole file at p (normalised):
// creating the folders above it that are missing, then creating the file,
// or modifying it if it exists. Write and Claude Code's Write share them.
func (s *Set) writeEffects(p zones.Path) (rel zones.Path, st stat, effects []policy.Effect, err error) {
	rel, st, link, err := s.targetOf(p)
	if err != nil {
		return zones.Path{}, stat{}, nil, err
	}
	op := zones.OpCreate
	if st.exists {
		op = zones.OpModify
	}
	e := fileEffect(op, rel, st)
	e.SymlinkTo = link
	e.NeedsFreshRead = true // replacing a file: only as the session saw it
	if rel != p {
		e.AsGiven = p.String()
	}
	parents, err := s.missingParents(rel)
	if err != nil {
		return zones.Path{}, stat{}, nil, err
	}
	return rel, st, append(parents, e), nil
}

func planWrite(s *Set, a args) (*Plan, error) {
	p, err := s.path(a, "path")
	if err != nil {
		return nil, err
	}
	rel, st, effects, err := s.writeEffects(p)
	if err != nil {
		return nil, err
	}
	content := a.str("content")
	return &Plan{
		Effects: effects,
		Run: func(context.Context) (*Result, error) {
			if st.dir {
				return nil, s.fail(say.IsFolder{Path: rel.String()})
			}
			op := history.OpCreate
			if st.exists {
				op = history.OpModify
			}
			k, err := s.atomicWrite(rel.String(), []byte(content), st,
				append(s.newFolder(rel), history.Target{Op: op, Path: rel.String()}))
			k.settle(err)
			if err != nil {
				return nil, err
			}
			return &Result{Text: s.say(say.Wrote{Bytes: len(content), Path: rel.String()})}, nil
		},
	}, nil
}

func planEdit(s *Set, a args) (*Plan, error) {
	rel, st, link, err := s.target(a, "path")
	if err != nil {
		return nil, err
	}
	oldS, newS, all := a.str("old_string"), a.str("new_string"), a.boolean("replace_all")
	if oldS == "" {
		return nil, a.bad("old_string", say.ArgEmpty{})
	}
	if oldS == newS {
		return nil, a.bad("new_string", say.ArgSameAs{Other: "old_string"})
	}
	e := fileEffect(zones.OpModify, rel, st)
	e.SymlinkTo = link
	e.NeedsFreshRead = true
	return &Plan{
		Effects: []policy.Effect{e},
		Run: func(context.Context) (*Result, error) {
			switch {
			case !st.exists:
				return nil, s.fail(say.NotFound{Path: rel.String()})
			case st.dir:
				return nil, s.fail(say.IsFolder{Path: rel.String()})
			case !st.regular:
				return nil, s.fail(say.NotRegular{Path: rel.String()})
			}
			data, err := afero.ReadFile(s.Vault.Fs, rel.String())
			if err != nil {
				return nil, s.osFail(rel.String(), err)
			}
			if !isText(data) {
				return nil, s.fail(say.NotText{Path: rel.String(), Size: int64(len(data))})
			}
			text := string(data)
			n := strings.Count(text, oldS)
			switch {
			case n == 0:
				return nil, s.fail(say.EditNoMatch{Path: rel.String()})
			case n > 1 && !all:
				return nil, s.fail(say.EditManyMatches{Path: rel.String(), Count: n})
			}
			k, err := s.atomicWrite(rel.String(), []byte(strings.ReplaceAll(text, oldS, newS)), st,
				[]history.Target{{Op: "modify", Path: rel.String()}})
			k.settle(err)
			if err != nil {
				return nil, err
			}
			return &Result{Text: s.say(say.Edited{Count: n, Path: rel.String()})}, nil
		},
	}, nil
}

// atomicWrite replaces rel with data, by way of a new file named only
// when it is whole: a crash leaves the old file or the new. It keeps
// targets (the file's last) in the history first, write-ahead: the new
// content goes into the pre-images' flushed record, so the file itself is
// written without flushes of its own (history.Change.FlushLater makes
// them later, and RollForward recovers it after a crash). Without history
// the file and its folder are synced before it returns. kept is nil when
// the history was not reached.
func (s *Set) atomicWrite(rel string, data []byte, before stat, targets []history.Target) (*kept, error) {
	ahead := s.keepsHistory()
	var k *kept
	begin := func(mode os.FileMode) error {
		if k != nil {
			return nil
		}
		ts := slices.Clone(targets)
		if ahead {
			ts[len(ts)-1].New = &history.NewFile{Data: data, Mode: mode}
		}
		var err error
		k, err = s.keep(ts...)
		return err
	}
	fsys := s.Vault.Fs
	dir := path.Dir(rel)
	if dir != "." {
		if _, err := fsys.Stat(dir); err != nil {
			if err := begin(0o644); err != nil { // the folders are a change too
				return k, err
			}
		}
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return k, s.osFail(dir, err)
		}
	}
	// Where the Fs can hold the folder open, every step below acts on that
	// one descriptor: a folder swapped for a link meanwhile can't redirect
	// the write.
	name, tmpDir := rel, dir
	if p, ok := fsys.(vaultfs.Pinner); ok {
		pinned, err := p.Pin(dir)
		if err != nil {
			return k, s.osFail(dir, err)
		}
		defer pinned.Close()
		fsys, name, tmpDir = pinned, path.Base(rel), "."
	}
	now, err := statOf(lstatIn(fsys, name))
	if err != nil {
		return k, err
	}
	// The plan was judged on what was there: if that changed (a file
	// appeared, vanished, or became a link), the judgement no longer holds.
	if now.exists != before.exists || now.symlink || (before.exists && !now.regular) {
		return k, s.fail(say.ChangedMeantime{Path: rel})
	}
	// The file tools add no mode bit: a new note is 0644 (its folders 0755),
	// less the umask; a replaced one keeps the permission bits the person
	// gave it, world-writable too, but never setuid, setgid or sticky
	// (Perm() has none): content the agent wrote must not run with the
	// owner's rights, and the kernel too clears setuid and setgid when a
	// file is written.
	mode := os.FileMode(0o644)
	if now.exists {
		mode = now.fi.Mode().Perm()
	}
	if err := s.placeNew(fsys, name, tmpDir, dir, data, mode, now.exists, !ahead, func() error { return begin(mode) }); err != nil {
		if !now.exists && errors.Is(err, fs.ErrExist) {
			return k, s.fail(say.ChangedMeantime{Path: rel})
		}
		return k, s.osFail(rel, err)
	}
	if !ahead {
		syncDir(fsys, tmpDir)
	}
	if fi, err := lstatIn(fsys, name); err == nil && s.State != nil {
		policy.MarkRead(s.State, rel, fi.Size(), fi.ModTime())
	}
	return k, nil
}

// placeNew puts data at name (in folder dir of fsys, the vault's folder
// at), synced first if sync says so, and named only once ready returns
// nil. Where the kernel allows, the file is written unnamed (O_TMPFILE)
// and linked into place, so a crash leaves nothing; replacing a file still
// takes a temporary name for the rename, noted in the vault's journal
// (Vault.Temps) before it is made and dropped once it is gone, so that
// start-up removes what a stop left, and nothing else. What is judged a
// create never replaces anything that appeared meanwhile.
func (s *Set) placeNew(fsys afero.Fs, name, dir, at string, data []byte, mode os.FileMode, replace, sync bool, ready func() error) error {
	if u, ok := fsys.(vaultfs.UnnamedCreator); ok {
		f, err := u.CreateUnnamed(mode)
		if err == nil {
			return s.placeUnnamed(fsys, f, name, dir, at, data, replace, sync, ready)
		}
		if !errors.Is(err, vaultfs.ErrUnnamedUnsupported) {
			return err
		}
	}
	base := tempPrefix + randomHex()
	tmp := path.Join(dir, base)
	note, err := s.Vault.Temps.Note(path.Join(at, base), history.KindFile, int64(len(data)), nil)
	if err != nil {
		return err
	}
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		note.Gone()
		return err
	}
	if fi, err := f.Stat(); err == nil {
		note.Made(fi)
	}
	drop := func() { // a name not removed stays noted, for start-up
		if fsys.Remove(tmp) == nil {
			note.Gone()
		}
	}
	if err := writeSynced(f, data, sync); err != nil {
		drop()
		return err
	}
	if err := ready(); err != nil {
		drop()
		return err
	}
	rename := fsys.Rename
	if r, isR := fsys.(vaultfs.NoReplaceRenamer); isR && !replace {
		rename = r.RenameNoReplace // judged as a create: replace nothing
	}
	if err := rename(tmp, name); err != nil {
		drop()
		return err
	}
	note.Gone()
	return nil
}

func (s *Set) placeUnnamed(fsys afero.Fs, f vaultfs.UnnamedFile, name, dir, at string, data []byte, replace, sync bool, ready func() error) error {
	if err := writeSynced(f, data, sync); err != nil {
		return err
	}
	defer f.Close()
	if err := ready(); err != nil {
		return err
	}
	if !replace {
		return f.Link(name) // EEXIST if something appeared: nothing replaced
	}
	tmp := tempPrefix + randomHex()
	// The file exists, unnamed: its note says which it is before it has
	// a name.
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	note, err := s.Vault.Temps.Note(path.Join(at, tmp), history.KindFile, int64(len(data)), fi)
	if err != nil {
		return err
	}
	if err := f.Link(tmp); err != nil {
		note.Gone()
		return err
	}
	if err := fsys.Rename(path.Join(dir, tmp), name); err != nil {
		if fsys.Remove(path.Join(dir, tmp)) == nil {
			note.Gone()
		}
		return err
	}
	note.Gone()
	return nil
}

// writeSynced writes data and, if sync says so, syncs it; on error the
// file is closed.
func writeSynced(f afero.File, data []byte, sync bool) error {
	_, err := f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		return err
	}
	if _, isUnnamed := f.(vaultfs.UnnamedFile); isUnnamed {
		return nil // closed once linked
	}
	return f.Close()
}

// syncDir makes a rename durable where the file system supports it.
func syncDir(fsys afero.Fs, dir string) {
	if d, err := fsys.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func planMove(s *Set, a args) (*Plan, error) {
	sp, err := s.path(a, "source")
	if err != nil {
		return nil, err
	}
	dp, err := s.path(a, "destination")
	if err != nil {
		return nil, err
	}
	src, err := s.Vault.Resolve(sp, false)
	if err != nil {
		return nil, err
	}
	dst, err := s.Vault.Resolve(dp, false)
	if err != nil {
		return nil, err
	}
	sst, err := s.stat(src)
	if err != nil {
		return nil, err
	}
	dstat, err := s.stat(dst)
	if err != nil {
		return nil, err
	}
	overwrite := a.boolean("overwrite")
	out := fileEffect(zones.OpMoveOut, src, sst)
	out.Subtree = sst.dir
	in := fileEffect(zones.OpMoveIn, dst, dstat)
	in.Subtree = sst.dir
	in.Source = src
	in.Links = 0 // replacing a name does not change the other names' file
	// a symlink carried to where it leads elsewhere (links.go)
	in.Leads = s.movedLeads(src, dst, sst)
	parents, err := s.missingParents(dst)
	if err != nil {
		return nil, err
	}
	// a folder's move is judged on every path it takes (folder.go)
	effects, err := s.coverFolders(append(append([]policy.Effect{out}, parents...), in))
	if err != nil {
		return nil, err
	}
	return &Plan{
		Effects: effects,
		Run: func(context.Context) (*Result, error) {
			switch {
			case !sst.exists:
				return nil, s.fail(say.NotFound{Path: src.String()})
			case src == dst:
				return nil, s.fail(say.SamePath{Path: src.String()})
			case sst.dir && dst.Within(src):
				return nil, s.fail(say.MoveIntoSelf{Path: src.String()})
			case dstat.dir:
				return nil, s.fail(say.DestFolder{Path: dst.String()})
			case dstat.exists && !overwrite:
				return nil, s.fail(say.DestExists{Path: dst.String()})
			case dstat.exists && sst.dir:
				return nil, s.fail(say.OverwriteFolder{Path: src.String()})
			}
			// What a kill leaves of a move is told from the disk.
			s.Call.Settled = history.SettledFromDisk
			k, err := s.keep(append(s.newFolder(dst), history.Target{Op: history.OpMove, Path: src.String(), To: dst.String()},
				history.Target{Op: history.OpMove, Path: dst.String(), From: src.String()})...)
			if err != nil {
				return nil, err
			}
			res, err := s.runMove(src, dst, dstat)
			k.settle(err)
			return res, err
		},
	}, nil
}

// runMove renames src to dst, once the plan's checks passed.
func (s *Set) runMove(src, dst zones.Path, dstat stat) (*Result, error) {
	if dir := dst.Parent(); !dir.IsRoot() {
		if err := s.Vault.Fs.MkdirAll(dir.String(), 0o755); err != nil {
			return nil, s.osFail(dir.String(), err)
		}
	}
	now, err := s.stat(dst)
	if err != nil {
		return nil, err
	}
	if now.exists != dstat.exists {
		return nil, s.fail(say.ChangedMeantime{Path: dst.String()})
	}
	// Judged as a create: where the Fs can, the rename itself
	// refuses to replace what appeared meanwhile.
	rename := s.Vault.Fs.Rename
	if r, ok := s.Vault.Fs.(vaultfs.NoReplaceRenamer); ok && !dstat.exists {
		rename = r.RenameNoReplace
	}
	if err := rename(src.String(), dst.String()); err != nil {
		if !dstat.exists && errors.Is(err, fs.ErrExist) {
			return nil, s.fail(say.DestExists{Path: dst.String()})
		}
		return nil, s.osFail(src.String(), err)
	}
	syncDir(s.Vault.Fs, dst.Parent().String())
	if s.State != nil {
		policy.Forget(s.State, src.String())
		policy.Forget(s.State, dst.String())
	}
	return &Result{Text: s.say(say.Moved{From: src.String(), To: dst.String()})}, nil
}

func planDelete(s *Set, a args) (*Plan, error) {
	p, err := s.path(a, "path")
	if err != nil {
		return nil, err
	}
	rel, err := s.Vault.Resolve(p, false)
	if err != nil {
		return nil, err
	}
	st, err := s.stat(rel)
	if err != nil {
		return nil, err
	}
	recursive := a.boolean("recursive")
	e := fileEffect(zones.OpDelete, rel, st)
	e.Subtree = st.dir && recursive
	// a folder's delete is judged on every path it removes (folder.go)
	effects, err := s.coverFolders([]policy.Effect{e})
	if err != nil {
		return nil, err
	}
	return &Plan{
		Effects: effects,
		Run: func(context.Context) (*Result, error) {
			if !st.exists {
				return nil, s.fail(say.NotFound{Path: rel.String()})
			}
			fsys, name := s.Vault.Fs, rel.String()
			if st.dir && !recursive {
				if names, err := readDirNames(fsys, name, 1); err == nil && len(names) > 0 {
					return nil, s.fail(say.FolderNotEmpty{Path: rel.String()})
				}
			}
			s.Call.Settled = history.SettledFromDisk // what a kill leaves of a delete is told from the disk
			k, err := s.keep(history.Target{Op: history.OpDelete, Path: name})
			if err != nil {
				return nil, err
			}
			if e.Subtree {
				err = fsys.RemoveAll(name)
			} else {
				err = fsys.Remove(name)
			}
			k.settle(err)
			if err != nil {
				return nil, s.osFail(name, err)
			}
			syncDir(fsys, rel.Parent().String())
			if s.State != nil {
				policy.Forget(s.State, name)
			}
			return &Result{Text: s.say(say.Deleted{Path: rel.String()})}, nil
		},
	}, nil
}

func readDirNames(fsys afero.Fs, dir string, n int) ([]string, error) {
	d, err := fsys.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(n)
}

// osFail turns a file system error into a message for the model.
func (s *Set) osFail(rel string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EXDEV):
		// the no-follow walk met a link where the plan saw none: a swap
		// between the check and the deed
		return s.fail(say.ChangedMeantime{Path: rel})
	case errors.Is(err, fs.ErrNotExist):
		return s.fail(say.NotFound{Path: rel})
	case errors.Is(err, syscall.ENOTDIR):
		return s.fail(say.NotFolder{Path: path.Dir(rel)})
	case errors.Is(err, syscall.EISDIR):
		return s.fail(say.IsFolder{Path: rel})
	case errors.Is(err, syscall.ENOTEMPTY):
		return s.fail(say.FolderNotEmpty{Path: rel})
	}
	return err
}
