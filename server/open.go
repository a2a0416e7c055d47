package server

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/vaultgate/vaultgate/audit"
	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/history"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/tools"
	"github.com/vaultgate/vaultgate/txn"
)

// OpenOptions say how Open opens a vault.
type OpenOptions struct {
	// Dry opens no audit log: check's dry runs, which are a person's, not
	// the agent's.
	Dry bool
	// WallHelper is the OS wall's helper binary (tools.Vault.WallHelper).
	WallHelper string
	// HelperAhead starts each walled bash call's helper ahead
	// (tools.Vault.HelperAhead): for a server, which runs many calls.
	HelperAhead bool
	// Log receives what the start-up did that a person should know (the
	// commits it finished); nil is os.Stderr.
	Log io.Writer
	// StartUp is a server's start (not a hook call's): it sweeps what a
	// crash left (tools.SweepTemp) and prunes the history to its bounds.
	StartUp bool
	// Recover writes back what a crash lost of the history and empties its
	// log (history.Options.Recover), as StartUp does: for the CLI's undo.
	// A hook call, one change long, leaves it to the server.
	Recover bool
	// Agents are the agents whose [[rules.deny]] are compiled (a hook or
	// check judges as one); none means all of them.
	Agents []string
	// Rules compiles the agents' [[rules.deny]] (rules.Chain); without it
	// an agent that has any does not open.
	Rules RuleCompiler
	// OwnRules: the caller compiles the rules itself (`vaultgate rules`,
	// which reports on each); the gate then refuses every call of an
	// agent with rules.
	OwnRules bool
}

// Open opens cfg's vault as every vaultgate binary serves it: its file
// system, refusing links that lead out of it, and, unless opt.Dry, its
// audit log, masking the values of configured secrets. closeAll closes
// both.
func Open(cfg *config.Config, opt OpenOptions) (g *Gate, closeAll func(), err error) {
	rfs, err := tools.OpenNoFollowFs(cfg.Vault)
	if err != nil {
		return nil, nil, err
	}
	var w *audit.Writer
	if !opt.Dry {
		if w, err = audit.Open(cfg.AuditPath, audit.Options{MaxSize: cfg.MaxSize, Mask: SecretValues(cfg)}); err != nil {
			rfs.Close()
			return nil, nil, err
		}
	}
	var kept *history.Store
	if !opt.Dry {
		hist := history.Options{MaxSize: cfg.History.MaxSize, Keep: cfg.History.Keep, Recover: opt.StartUp || opt.Recover}
		if kept, err = history.Open(history.Dir(cfg.StateDir), rfs, hist); err != nil {
			w.Close()
			rfs.Close()
			return nil, nil, err
		}
	}
	vault := &tools.Vault{Root: cfg.Vault, Fs: rfs, WallHelper: opt.WallHelper, HelperAhead: opt.HelperAhead, StateDir: VaultStateDir(cfg)}
	gopt := Options{Audit: w}
	if kept != nil {
		gopt.History = kept
	}
	g = NewGate(cfg, vault, gopt)
	closeAll = func() {
		if w != nil {
			w.Close()
		}
		if kept != nil {
			kept.Close()
		}
		rfs.Close()
	}
	if err := g.compileUnless(opt); err != nil {
		closeAll()
		return nil, nil, err
	}
	if !opt.Dry {
		log := cmp.Or[io.Writer](opt.Log, os.Stderr)
		if err := g.sweep(log); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	if opt.StartUp && !opt.Dry {
		log := cmp.Or[io.Writer](opt.Log, os.Stderr)
		// A message for the person starting a server; a hook or exec call
		// would pay for a layer made and removed on every call, and the
		// call that needs the overlay fails with the same reason anyway.
		checkOverlay(cfg, vault.StateDir, log)
	}
	if opt.StartUp && !opt.Dry {
		if err := g.startUp(kept, cmp.Or[io.Writer](opt.Log, os.Stderr)); err != nil {
			closeAll()
			return nil, nil, err
		}
	}
	return g, closeAll, nil
}

// checkOverlay tells a person at start-up when the state folder can't
// hold a walled bash call's overlay layer (on overlayfs or FUSE, inside
// the vault, case-folding), rather than at the agent's first call, which
// fails then with the same reason.
func checkOverlay(cfg *config.Config, stateDir string, log io.Writer) {
	walled := false
	for _, p := range cfg.Agents {
		walled = walled || p.Bash.Enabled && p.Bash.Wall != config.WallOff
	}
	if !walled || stateDir == "" {
		return
	}
	l, err := txn.NewLayer(stateDir)
	if err == nil {
		err = sandbox.CheckOverlay(sandbox.Overlay{Upper: l.Upper, Work: l.Work}, cfg.Vault)
		_ = l.Remove()
	}
	if err != nil {
		fmt.Fprintf(log, "vaultgate: start-up: the state folder can't hold a bash call's overlay, so walled bash calls will fail: %v\n", err)
	}
}

// sweep finishes the bash commits a crash cut short and removes the
// layers of calls that never reached their commit, under the vault's
// lock (no call of another server is between its run and its commit),
// and tells log what it did, if anything.
func (g *Gate) sweep(log io.Writer) error {
	if g.vault.StateDir == "" || noLayers(g.vault.StateDir) {
		return nil
	}
	unlock, err := g.lockVault()
	if err != nil {
		return fmt.Errorf("vault lock: %w", err)
	}
	defer unlock()
	calls := layerCalls(g.vault.StateDir)
	rep, err := txn.Sweep(g.vault.StateDir, g.vault.Fs)
	if err != nil {
		return err
	}
	g.settleSwept(calls, log)
	if rep.Finished > 0 || rep.Removed > 0 {
		fmt.Fprintf(log, "vaultgate: start-up: finished %d bash commit(s) a stop had cut short, removed %d abandoned call layer(s) (%s)\n",
			rep.Finished, rep.Removed, g.vault.StateDir)
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(log, "vaultgate: start-up: kept %s\n", f)
	}
	return nil
}

// noLayers reports whether the state folder holds no call layer at all,
// looked at without the vault's lock: the common case, in which sweep has
// nothing to do and need not wait for the lock. A layer made after the
// look is a live call's, which sweep would leave alone anyway; any doubt
// (an error) takes the locked path.
func noLayers(stateDir string) bool {
	f, err := os.Open(filepath.Join(stateDir, "txn"))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// startUp clears what a killed server left: temporary files in the vault
// (under the vault lock, so no running call's own are taken), write-ahead
// changes a crash may have lost (rolled forward, under the lock too, so
// none is under way), deletes and moves whose outcome it did not record,
// and history past its bounds.
func (g *Gate) startUp(kept *history.Store, log io.Writer) error {
	unlock, err := g.lockVault()
	if err != nil {
		return err
	}
	_, err = tools.SweepTemp(g.vault.Fs)
	if err != nil {
		unlock()
		return fmt.Errorf("sweeping temporary files: %w", err)
	}
	rolled, err := kept.RollForward(g.vault.Fs)
	cut, cutErr := kept.SettleCut()
	unlock()
	if cut > 0 {
		fmt.Fprintf(log, "vaultgate: start-up: %d delete(s) or move(s) a kill had cut short were recorded as they came out\n", cut)
	}
	if cutErr != nil {
		fmt.Fprintf(log, "vaultgate: start-up: deletes and moves cut short not settled: %v\n", cutErr)
	}
	if rolled.Restored > 0 {
		fmt.Fprintf(log, "vaultgate: start-up: %d file(s) a crash had left without the agent's last write were given it\n", rolled.Restored)
	}
	for _, l := range rolled.Left {
		fmt.Fprintf(log, "vaultgate: start-up: %s\n", l)
	}
	if err != nil {
		// Refusing to start would keep the person from the vault; what
		// was not settled is looked at again at the next start.
		fmt.Fprintf(log, "vaultgate: start-up: write-ahead changes not settled: %v\n", err)
	}
	_, err = kept.GC(time.Now())
	return err
}

// SecretValues are the values of every agent's configured secrets, which
// the audit log masks.
func SecretValues(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.Agents {
		for _, s := range p.Bash.Secrets {
			if v := os.Getenv(s.FromEnv); v != "" {
				out = append(out, v)
			}
		}
	}
	// The agent's own credentials (vaultgate run) never reach a line
	// either, should the agent send one back in an argument.
	for _, s := range cfg.Run.Secrets {
		if v := os.Getenv(s.FromEnv); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// layerCalls maps each call layer's folder to the id of the call whose
// commit it holds (tools.CallFile), read before Sweep removes them.
func layerCalls(stateDir string) map[string]string {
	calls := map[string]string{}
	dirs, _ := filepath.Glob(filepath.Join(stateDir, "txn", "*", tools.CallFile))
	for _, name := range dirs {
		if id, err := os.ReadFile(name); err == nil {
			calls[filepath.Dir(name)] = string(id)
		}
	}
	return calls
}

// settleSwept records in the history what the commits Sweep finished (or
// that a stop cut before they began) left, so that undo puts them back.
func (g *Gate) settleSwept(calls map[string]string, log io.Writer) {
	st, ok := g.keep.(*history.Store)
	if !ok {
		return
	}
	for dir, id := range calls {
		if _, err := os.Lstat(dir); err == nil {
			continue // kept: its commit is not finished
		}
		if err := st.Settle(id); err != nil && !errors.Is(err, history.ErrUnknownID) {
			fmt.Fprintf(log, "vaultgate: start-up: history of bash call %s not settled: %v\n", id, err)
		}
	}
}

func (g *Gate) compileUnless(opt OpenOptions) error {
	if opt.OwnRules {
		return nil
	}
	return g.CompileRules(opt.Rules, opt.Agents...)
}
