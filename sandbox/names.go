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

// WatchNames makes the index of vault for tables. It reads nothing until
// Start, or the first call that needs it (which then waits for the
// reading).
func WatchNames(vault string, tables []*zones.Table) *NameIndex {
	x := &NameIndex{tables: map[*zones.Table]*coveredNames{}}
	var ls []watch.Listener
	for _, t := range tables {
		if t == nil || x.tables[t] != nil {
			continue
		}
		c := &coveredNames{vault: vault, table: t, found: map[string]bool{}}
		x.tables[t] = c
		ls = append(ls, c)
	}
	// Nothing inside .git needs a cover of its own (zones.HoldsCopies),
	// and git's objects change with every commit: it is not read. Every
	// other folder is, a covered one too, since a pattern may hide a path
	// inside a read-only control folder, or another table's patterns
	// may not cover it.
	x.tree = watch.New(vault, zones.HoldsCopies, ls...)
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

// Start begins the index's reading of the vault in the background.
func (x *NameIndex) Start() { x.tree.Start() }

// Status says whether the index is exact, and why not.
func (x *NameIndex) Status() watch.Status { return x.tree.Status() }

// Close stops watching the vault.
func (x *NameIndex) Close() error { return x.tree.Close() }

// coveredNames is one table's covered paths: a watch.Listener.
type coveredNames struct {
	vault string
	table *zones.Table
	found map[string]bool // each covered path, and whether it may be read
}

// Seen records rel if the wall covers it by name (coverOf), unless it lies
// inside a covered path that may not be read: that one is covered whole.
func (c *coveredNames) Seen(rel string, dir bool) {
	covered, readable := coverOf(c.vault, c.table, rel)
	if !covered {
		return
	}
	for p := path.Dir(rel); p != "."; p = path.Dir(p) {
		if r, ok := c.found[p]; ok && !r {
			return
		}
	}
	c.found[strings.Clone(rel)] = readable // rel is the tree's, for the call
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
