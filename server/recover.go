package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/zones"
)

// TempsDir is the folder of cfg's vault's state folder (VaultStateDir)
// that holds its journal of temporary names (history.Temps); "" is none.
func TempsDir(cfg *config.Config) string {
	if d := VaultStateDir(cfg); d != "" {
		return filepath.Join(d, "temps")
	}
	return ""
}

// recoverTemps removes the temporary names a stopped vaultgate left in the
// vault — those its journal notes, still holding what it made there, and
// nothing else: a name's pattern decides nothing, so a note or folder an
// agent or the person gave such a name stays. The removal is vaultgate's
// own call through the gate (tool "recover", via "start-up", an empty
// chain, as undo is the person's), so it is an audit line like any change
// to the vault. It keeps no history: what it removes is a copy being
// written, whose content the history holds (a write-ahead change, a
// restore's kept state) or which was never a note of anyone's (a write
// the stop cut short, whose caller was never answered).
//
// Nothing is recorded when the journal notes nothing still there, the
// common case: the notes of names already gone are dropped, under the
// vault lock, with nothing to tell.
func (g *Gate) recoverTemps(log io.Writer) {
	temps := g.vault.Temps
	if temps == nil {
		return
	}
	unlock, err := g.lockVault()
	if err != nil {
		fmt.Fprintf(log, "vaultgate: start-up: temporary names left by a stop not looked at: vault lock: %v\n", err)
		return
	}
	left, err := temps.Left(g.vault.Fs)
	unlock()
	if err != nil {
		fmt.Fprintf(log, "vaultgate: start-up: temporary names left by a stop not looked at: %v\n", err)
		return
	}
	if len(left) == 0 {
		return
	}
	acts := &recoverActs{g: g, temps: temps}
	var remove, keep []string
	for _, l := range left {
		if l.Ours {
			remove = append(remove, l.Path)
		} else {
			keep = append(keep, l.Path+": "+l.Why)
		}
	}
	args := map[string]any{"remove": remove, "keep": keep}
	c := Caller{Via: ViaStartUp, Session: &policy.Session{ID: "start-up", Agent: "vaultgate", State: policy.NewState()}, acts: acts}
	o := g.Call(context.Background(), c, "recover", args, Serve)
	switch {
	case o.Err != nil:
		fmt.Fprintf(log, "vaultgate: start-up: temporary names left by a stop: %v\n", o.Err)
	case o.Result != nil:
		fmt.Fprintf(log, "vaultgate: start-up: %s (audit line %s)\n", o.Result.Text, o.ID)
	}
}

// recoverActs is vaultgate's own act at start-up, planned and run as a
// call through the gate: what an agent's tool set is to an agent's call,
// and personActs to the person's undo.
type recoverActs struct {
	g     *Gate
	temps *history.Temps
}

func (a *recoverActs) Lookup(name string) (tools.Tool, bool) {
	return tools.Tool{Name: "recover", Destructive: true}, name == "recover"
}

// Plan looks at the journal again, under the vault lock the gate holds:
// each noted name still holding what vaultgate made is an effect, a delete
// (of the whole folder, for a restore's folder); one that does not is
// only unnoted.
func (a *recoverActs) Plan(string, map[string]any) (*tools.Plan, error) {
	left, err := a.temps.Left(a.g.vault.Fs)
	if err != nil {
		return nil, err
	}
	p := &tools.Plan{}
	for _, l := range left {
		if !l.Ours {
			continue
		}
		zp, err := zones.Normalize(a.g.vault.Root, l.Path)
		if err != nil {
			return nil, fmt.Errorf("recover: %s: %w", l.Path, err)
		}
		p.Effects = append(p.Effects, policy.Effect{Op: zones.OpDelete, Path: zp, Subtree: l.Dir, Exists: true, Cause: "recover"})
	}
	p.Run = func(context.Context) (*tools.Result, error) {
		var removed, kept []string
		var errs []error
		for _, l := range left {
			if l.Ours {
				if err := a.g.vault.Fs.RemoveAll(l.Path); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", l.Path, err))
					continue // still noted: the next start tries again
				}
				removed = append(removed, l.Path)
			} else {
				kept = append(kept, l.Path)
			}
			if err := a.temps.Drop(l); err != nil {
				errs = append(errs, err)
			}
		}
		text := fmt.Sprintf("removed %d temporary name(s) a stopped vaultgate left", len(removed))
		if len(removed) > 0 {
			text += ": " + strings.Join(removed, ", ")
		}
		if len(kept) > 0 {
			text += fmt.Sprintf("; kept %d noted name(s) that no longer hold what vaultgate made there: %s", len(kept), strings.Join(kept, ", "))
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("%s; not removed: %w", text, err)
		}
		return &tools.Result{Text: text}, nil
	}
	return p, nil
}
