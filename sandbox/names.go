package sandbox

import (
	"errors"
	"path"
	"slices"
	"strings"

	"github.com/vaultgate/vaultgate/watch"
	"github.com/vaultgate/vaultgate/zones"
)

// NameIndex knows, for each zone table it was opened with, the vault's
// paths the wall covers by their name wherever they are — control names
// (.git, .claude, …) and what a name pattern of the table covers — kept
// current by a watch.Tree instead of a walk of the whole vault per call.
// A call whose table it can't answer for exactly walks (controlNames).
type NameIndex struct {
	tree   *watch.Tree
	tables map[*zones.Table]*coveredNames
}

// WatchNames starts the index of vault for tables; it reads the vault in
// the background, and the first call to need it waits for that.
func WatchNames(vault string, tables []*zones.Table) *NameIndex {
	x := &NameIndex{tables: map[*zones.Table]*coveredNames{}}
	var ls []watch.Listener
	for _, t := range tables {
		if t == nil || x.tables[t] != nil {
			continue
		}
		c := &coveredNames{vault: vault, table: t, patterns: len(t.Patterns()) > 0, found: map[string]bool{}}
		x.tables[t] = c
		ls = append(ls, c)
	}
	// Nothing below a control folder is the wall's concern: it is covered
	// whole. A folder a pattern covers is still read, since another
	// table's patterns may not cover it.
	x.tree = watch.Open(vault, zones.IsControlName, ls...)
	return x
}

// errNoTable is Covered's answer for a table the index was not opened
// with: the caller walks.
var errNoTable = errors.New("sandbox: the name index was not opened for this zone table")

// Covered returns the vault-relative paths, as the disk spells them,
// that t covers by name, none inside another. An error means the index
// can't answer exactly for this call; the caller walks instead.
func (x *NameIndex) Covered(t *zones.Table) ([]string, error) {
	c := x.tables[t]
	if c == nil {
		return nil, errNoTable
	}
	var out []string
	err := x.tree.Sync(func() {
		out = make([]string, 0, len(c.found))
		for rel := range c.found {
			out = append(out, rel)
		}
	})
	slices.Sort(out)
	return out, err
}

// Status says whether the index is exact, and why not.
func (x *NameIndex) Status() watch.Status { return x.tree.Status() }

// Close stops watching the vault.
func (x *NameIndex) Close() error { return x.tree.Close() }

// coveredNames is one table's covered paths: a watch.Listener.
type coveredNames struct {
	vault    string
	table    *zones.Table
	patterns bool
	found    map[string]bool // none inside another
}

// Seen records rel if it is covered by name and not inside a path
// already recorded (the wall covers that one whole).
func (c *coveredNames) Seen(rel string, dir bool) {
	if !c.covers(rel) {
		return
	}
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if c.found[p] {
			return
		}
	}
	c.found[rel] = true
}

func (c *coveredNames) covers(rel string) bool {
	if zones.IsControlName(path.Base(rel)) {
		return true
	}
	if !c.patterns {
		return false
	}
	at, err := zones.Normalize(c.vault, rel)
	return err == nil && c.table.PatternCovers(at)
}

// Gone forgets rel and what was recorded inside it.
func (c *coveredNames) Gone(rel string) {
	for p := range c.found {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			delete(c.found, p)
		}
	}
}

// Reset forgets everything.
func (c *coveredNames) Reset() { clear(c.found) }
