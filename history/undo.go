package history

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/afero"
)

// TempPrefix names the temporary files and folders a restore writes beside
// their target, and the file tools' own (a name vaultgate reserves, see
// zones.Reserved). Each is noted in the vault's journal (Temps) before it
// is made; start-up removes what a stop left by that journal alone.
const TempPrefix = ".vaultgate-tmp-"

// Conflict is a path undo left alone: it no longer holds what the call
// left there.
type Conflict struct {
	ID   string // the call
	Path string
}

// Undone is what an undo did.
type Undone struct {
	Restored  []string   // the paths put back, as they were before the calls
	Conflicts []Conflict // the paths left alone (none with force)
	Nothing   []string   // the calls that changed nothing
	// Already are the calls whose paths all hold again what they held
	// before the call (an earlier undo, or a hand, put them back): there
	// is nothing to put back and nothing to protect.
	Already []string
}

// Plan is an undo worked out before anything is touched: for each path,
// the state it is to hold.
type Plan struct {
	Undone
	final map[string]State
}

// Exists reports whether path is to exist once the plan is applied (for
// a path the plan puts back).
func (p *Plan) Exists(path string) bool { return p.final[path].Exists }

// PlanUndo works out the undo of calls, newest first: each path of each
// call is checked against the state the newer undone calls will have left
// it in, and goes back to its state before the call; a path that does not
// hold what the call left there is a conflict, left alone unless force.
func (s *Store) PlanUndo(ids []string, force bool) (*Plan, error) {
	type call struct {
		id string
		es []Entry
	}
	var calls []call
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		es, err := s.Call(id)
		if err != nil {
			return nil, err
		}
		calls = append(calls, call{id, es})
	}
	sort.SliceStable(calls, func(i, j int) bool {
		ti, tj := calls[i].es, calls[j].es
		if len(ti) > 0 && len(tj) > 0 && !ti[0].Time.Equal(tj[0].Time) {
			return ti[0].Time.After(tj[0].Time)
		}
		return calls[i].id > calls[j].id
	})
	v := &virtual{s: s, states: map[string]State{}}
	p := &Plan{final: v.states}
	touched := map[string]bool{}
	for _, c := range calls {
		// Every path of the call is checked against what the call as a
		// whole left, before any of them is put back.
		back := make([]bool, len(c.es))
		changed := false
		for i, e := range c.es {
			if e.State != Pending && e.Before.Same(e.After) {
				continue
			}
			cur, err := v.get(e.Path)
			if err != nil {
				return nil, err
			}
			if cur.Same(e.Before) {
				// A pending write that never happened, or a path already
				// as it was: putting it back would change nothing, so it
				// is neither restored nor a conflict.
				changed = changed || e.State != Pending
				continue
			}
			changed = true
			if (e.State == Pending || !cur.Same(e.After)) && !force {
				p.Conflicts = append(p.Conflicts, Conflict{ID: c.id, Path: e.Path})
				continue
			}
			back[i] = true
		}
		for i := len(c.es) - 1; i >= 0; i-- {
			if back[i] {
				v.set(c.es[i].Path, c.es[i].Before)
				touched[c.es[i].Path] = true
			}
		}
		switch {
		case !changed:
			p.Nothing = append(p.Nothing, c.id)
		case !slices.Contains(back, true) && !conflictOf(p.Conflicts, c.id):
			p.Already = append(p.Already, c.id)
		}
	}
	for t := range touched {
		if !touchedAbove(t, touched) {
			p.Restored = append(p.Restored, t)
		}
	}
	sort.Strings(p.Restored)
	return p, nil
}

// conflictOf reports whether call id has a path among the conflicts.
func conflictOf(cs []Conflict, id string) bool {
	return slices.ContainsFunc(cs, func(c Conflict) bool { return c.ID == id })
}

func touchedAbove(p string, touched map[string]bool) bool {
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if touched[d] {
			return true
		}
	}
	return false
}

// virtual is the vault as the undo so far would leave it: states set by
// path, the rest read from disk, a path inside a set folder read from its
// tree.
type virtual struct {
	s      *Store
	states map[string]State
}

func (v *virtual) get(p string) (State, error) {
	if st, ok := v.states[p]; ok {
		return st, nil
	}
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if st, ok := v.states[d]; ok {
			return subState(st, strings.TrimPrefix(p, d+"/")), nil
		}
	}
	sn := &snapshot{s: v.s}
	st, err := sn.state(p)
	if err != nil {
		return State{}, err
	}
	return v.overlay(p, st), nil
}

// subState is what a folder's state says of the path rel below it.
func subState(dir State, rel string) State {
	if dir.Kind != KindDir {
		return State{}
	}
	for _, e := range dir.Tree {
		if e.Path != rel {
			continue
		}
		st := State{Exists: true, Kind: e.Kind, Mode: e.Mode, Size: e.Size, SHA256: e.SHA256, Target: e.Target}
		if e.Kind == KindDir {
			for _, c := range dir.Tree {
				if below, ok := strings.CutPrefix(c.Path, rel+"/"); ok {
					c.Path = below
					st.Tree = append(st.Tree, c)
					if c.Kind == KindFile {
						st.Size += c.Size
					}
				}
			}
			st.SHA256 = treeSum(st.Tree)
		}
		return st
	}
	return State{}
}

// set records that p will hold st: what was set below p is forgotten, and
// the trees of set folders above p are patched.
func (v *virtual) set(p string, st State) {
	for k := range v.states {
		if strings.HasPrefix(k, p+"/") {
			delete(v.states, k)
		}
	}
	v.states[p] = st
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		if above, ok := v.states[d]; ok && above.Kind == KindDir {
			v.states[d] = patchTree(above, strings.TrimPrefix(p, d+"/"), st)
		}
	}
}

// overlay is a folder read from disk with what the undo so far set below it.
func (v *virtual) overlay(p string, st State) State {
	if st.Kind != KindDir {
		return st
	}
	var below []string
	for k := range v.states {
		if strings.HasPrefix(k, p+"/") {
			below = append(below, k)
		}
	}
	sort.Strings(below) // parents first: a child's state then lands in its parent's
	for _, k := range below {
		st = patchTree(st, strings.TrimPrefix(k, p+"/"), v.states[k])
	}
	return st
}

// patchTree is a folder's state with the path rel below it holding st.
func patchTree(dir State, rel string, st State) State {
	var tree []TreeEntry
	for _, e := range dir.Tree {
		if e.Path != rel && !strings.HasPrefix(e.Path, rel+"/") {
			tree = append(tree, e)
		}
	}
	if st.Exists {
		tree = append(tree, TreeEntry{Path: rel, Kind: st.Kind, Mode: st.Mode, Size: st.Size, SHA256: st.SHA256, Target: st.Target})
		for _, c := range st.Tree {
			c.Path = rel + "/" + c.Path
			tree = append(tree, c)
		}
	}
	sort.SliceStable(tree, func(i, j int) bool { return tree[i].Path < tree[j].Path })
	dir.Tree, dir.Size = tree, 0
	for _, e := range tree {
		if e.Kind == KindFile {
			dir.Size += e.Size
		}
	}
	dir.SHA256 = treeSum(tree)
	return dir
}

// Apply carries out a plan: the undo is itself a call (id, m) with its own
// entries, so it can be undone in turn. fsys is the vault, links never
// followed; each file is put back by a temporary name in its folder,
// synced, then renamed over.
func (s *Store) Apply(p *Plan, id string, m Meta, fsys afero.Fs) error {
	if len(p.Restored) == 0 {
		return nil
	}
	targets := make([]Target, 0, len(p.Restored))
	for _, r := range p.Restored {
		targets = append(targets, Target{Op: OpRestore, Path: r})
	}
	c, err := s.Begin(id, m, targets)
	if err != nil {
		return err
	}
	for _, r := range p.Restored {
		if err := s.restore(fsys, r, p.final[r]); err != nil {
			c.Failed()
			return fmt.Errorf("undo %s: %w", r, err)
		}
	}
	return c.Done()
}

// restore makes rel hold st.
func (s *Store) restore(fsys afero.Fs, rel string, st State) error {
	cur, err := s.lstat(rel)
	exists := err == nil
	if err != nil && !notThere(err) {
		return err
	}
	if !st.Exists {
		if exists {
			return fsys.RemoveAll(rel)
		}
		return nil
	}
	dir := path.Dir(rel)
	if dir != "." {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tmp := path.Join(dir, TempPrefix+randomHex())
	note, err := s.opt.Temps.Note(tmp, st.Kind, st.Size, nil)
	if err != nil {
		return err
	}
	defer func() {
		// Dropped once the name is renamed into place or removed; one a
		// failure left stays noted, for start-up to remove.
		if _, err := lstatIn(fsys, tmp); notThere(err) {
			note.Gone()
		}
	}()
	if err := s.build(fsys, tmp, st.Kind, st.Mode, st.SHA256, st.Target); err != nil {
		fsys.RemoveAll(tmp)
		return err
	}
	if fi, err := lstatIn(fsys, tmp); err == nil {
		note.Made(fi)
	}
	for _, e := range st.Tree {
		if err := s.build(fsys, path.Join(tmp, e.Path), e.Kind, e.Mode, e.SHA256, e.Target); err != nil {
			fsys.RemoveAll(tmp)
			return err
		}
	}
	if st.Kind == KindDir {
		for i := len(st.Tree) - 1; i >= 0; i-- { // modes last: a read-only folder still fills
			if e := st.Tree[i]; e.Kind == KindDir {
				fsys.Chmod(path.Join(tmp, e.Path), e.Mode)
			}
		}
		fsys.Chmod(tmp, st.Mode)
	}
	// A folder can't be renamed over what is there, nor a file over a
	// folder: those go first.
	if exists && (cur.IsDir() || st.Kind == KindDir) {
		if err := fsys.RemoveAll(rel); err != nil {
			fsys.RemoveAll(tmp)
			return err
		}
	}
	if err := fsys.Rename(tmp, rel); err != nil {
		fsys.RemoveAll(tmp)
		return err
	}
	if d, err := fsys.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// build makes one thing at name from its kept state.
func (s *Store) build(fsys afero.Fs, name, kind string, mode os.FileMode, sum, target string) error {
	switch kind {
	case KindDir:
		return fsys.Mkdir(name, 0o700)
	case KindSymlink:
		l, ok := fsys.(afero.Linker)
		if !ok {
			return errors.New("the file system can't make links")
		}
		return l.SymlinkIfPossible(target, name)
	case KindFile:
		blob, err := s.Blob(sum)
		if err != nil {
			return fmt.Errorf("the kept body of %s is gone: %w", name, err)
		}
		defer blob.Close()
		f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, blob); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return fsys.Chmod(name, mode)
	}
	return nil // a fifo or a device is not brought back
}

func randomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
