package sandbox

import (
	"github.com/vaultgate/vaultgate/zones"
)

// CoveredUnder is Covered narrowed to what lies inside the folder dir
// (dir itself excluded): the paths t covers by name there — control names
// and what a name pattern covers — none inside another, as the zones
// spell them (NFC). It answers a read of a whole folder that no wall
// confines (Claude Code's Grep and Glob): whether a path a pattern hides
// is in it now. A path is inside dir as spelled or case-folded, so a
// vault on a file system that folds case loses none. An error means the
// index can't answer exactly; the caller walks the folder instead.
func (x *NameIndex) CoveredUnder(t *zones.Table, dir zones.Path) ([]zones.Path, error) {
	found, err := x.Covered(t)
	if err != nil {
		return nil, err
	}
	fdir := zones.Fold(dir.String())
	var out []zones.Path
	for _, rel := range found {
		at, err := zones.Normalize(t.Vault(), rel)
		if err != nil || at.Outside() || at == dir {
			continue
		}
		if at.Within(dir) || dir.IsRoot() || within(zones.Fold(at.String()), fdir) {
			out = append(out, at)
		}
	}
	return out, nil
}
