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
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// A gate is opened for one of four roles, each by its own constructor, so
// that no caller picks a combination of what to open that no role has
// (exec once opened a gate without the config's rules and refused every
// call the hook had allowed). Every role that judges an agent's calls
// compiles that agent's [[rules.deny]]: a chain always has its rules.
//
//	role        who                      audit  history  start-up  rules
//	server      serve, run, hook-judge   yes    yes      yes       every agent's
//	call        hook, exec               yes    yes      no        the agent's
//	dry run     check, rules             no     no       no        every agent's, errors kept
//	person      history, diff, undo      yes    yes      recover   none: the person's calls
//
// A server's start-up finishes what a crash left (see startUp) under the
// vault lock; a single call leaves that to the next server, since it would
// pay for it on every call.

// OpenServer opens cfg's vault for a process that serves many calls:
// `serve`, `run`'s socket and `hook-judge`. Each walled bash call's helper
// is started ahead. What the start-up did that a person should know goes
// to log (nil: os.Stderr).
func OpenServer(cfg *config.Config, log io.Writer) (*Gate, error) {
	log = cmp.Or[io.Writer](log, os.Stderr)
	// A zone entry that names nothing leaves open what it was to close
	// (a typo): no gate that judges an agent opens on it.
	if err := cfg.ZonesReady(); err != nil {
		return nil, err
	}
	g, err := open(cfg, true, true)
	if err != nil {
		return nil, err
	}
	g.vault.HelperAhead = true
	g.watchNames()
	if err := g.compileRules(); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.sweep(log); err != nil {
		g.Close()
		return nil, err
	}
	// A message for the person starting a server; a single call would pay
	// for a layer made and removed every time, and the call that needs
	// the overlay fails with the same reason anyway.
	checkOverlay(cfg, g.vault.StateDir, log)
	if err := g.startUp(g.store, log); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// OpenCall opens cfg's vault for one call of agent: a hook process, or
// `vaultgate exec`. Only that agent's rules are compiled (an agent
// without any builds no CEL environment); a call of another agent is
// refused by its uncompiled rules, never judged without them.
func OpenCall(cfg *config.Config, agent string) (*Gate, error) {
	p := cfg.Policy(agent)
	if p == nil {
		return nil, fmt.Errorf("no agent %q in the config", agent)
	}
	if err := cfg.ZonesReady(); err != nil {
		return nil, err // as OpenServer: a typo in [zones] opens nothing
	}
	g, err := open(cfg, true, false)
	if err != nil {
		return nil, err
	}
	if err := g.compileRules(p.Name); err != nil {
		g.Close()
		return nil, err
	}
	// Layers of calls a stop cut short are finished before this call
	// looks at the vault, as a server's start does.
	if err := g.sweep(os.Stderr); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// OpenDryRun opens cfg's vault for a person's question about the agents'
// calls — `check`, `rules` — which nothing runs and nothing records: no
// audit log, no history. Every agent's rules are compiled; a rule that
// does not compile (or fails an example) does not stop the gate opening,
// since showing it is the point: it is RuleError, and the rule refuses
// every call it would judge.
func OpenDryRun(cfg *config.Config) (*Gate, error) {
	g, err := open(cfg, false, false)
	if err != nil {
		return nil, err
	}
	g.ruleErr = g.compileRules()
	return g, nil
}

// OpenPerson opens cfg's vault for the person's own acts on it —
// `history`, `diff`, `undo` — with its audit log and history, which it
// first recovers from a crash. It judges no agent's call: the person's
// calls go through an empty chain (Gate.Undo).
func OpenPerson(cfg *config.Config) (*Gate, error) {
	g, err := open(cfg, true, true)
	if err != nil {
		return nil, err
	}
	g.person = true
	if err := g.sweep(os.Stderr); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// Close closes what the gate opened: the audit log, the history, the
// vault's file system.
func (g *Gate) Close() error {
	var errs []error
	for _, c := range g.closers {
		errs = append(errs, c())
	}
	g.closers = nil
	return errors.Join(errs...)
}

// open opens the vault's file system, refusing links that lead out of it,
// and, when recorded, its audit log (masking the values of configured
// secrets) and its history (recovered from a crash when recover).
func open(cfg *config.Config, recorded, recover bool) (*Gate, error) {
	rfs, err := vaultfs.Open(cfg.Vault)
	if err != nil {
		return nil, err
	}
	vault := &tools.Vault{Root: cfg.Vault, Fs: rfs, WallHelper: sandbox.HelperBeside(), StateDir: VaultStateDir(cfg)}
	g := &Gate{cfg: cfg, vault: vault}
	g.closers = append(g.closers, rfs.Close)
	if !recorded {
		return g, nil // a dry run makes nothing, not even the state folder
	}
	// Every temporary name this gate's tools and restores make in the
	// vault is noted here first; a server's start-up removes by it alone.
	vault.Temps = history.NewTemps(TempsDir(cfg))
	if vault.ID, err = vaultID(cfg); err != nil {
		g.Close()
		return nil, err
	}
	w, err := audit.Open(cfg.AuditPath, audit.Options{MaxSize: cfg.MaxSize, Mask: SecretValues(cfg)})
	if err != nil {
		g.Close()
		return nil, err
	}
	g.log = w
	g.closers = append([]func() error{w.Close}, g.closers...)
	hist := history.Options{MaxSize: cfg.History.MaxSize, Keep: cfg.History.Keep, Recover: recover, Temps: vault.Temps}
	kept, err := history.Open(history.Dir(cfg.StateDir), rfs, hist)
	if err != nil {
		g.Close()
		return nil, err
	}
	g.keep, g.store = kept, kept
	g.closers = append([]func() error{kept.Close}, g.closers...)
	return g, nil
}

// watchNames opens the index of the names the wall covers, for the zone
// tables of every agent whose bash is walled, so that a walled call costs
// what it changes rather than a walk of the vault. Its reading of the
// vault, in the background, begins at the gate's first call or a second
// after it opened, whichever comes first: a server's first answers
// (initialize, the list of tools) come before it, since on 2 cores a
// reading of a big vault beside them made them half again as slow.
func (g *Gate) watchNames() {
	var tables []*zones.Table
	for _, p := range g.cfg.Agents {
		if p.Bash.Enabled && p.Bash.Wall != config.WallOff {
			tables = append(tables, p.Zones)
		}
	}
	if len(tables) == 0 {
		return
	}
	x := sandbox.WatchNames(g.cfg.Vault, tables)
	g.vault.Names = x
	g.closers = append(g.closers, x.Close)
	time.AfterFunc(time.Second, x.Start) // after Close, a Start does nothing
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

// startUp clears what a killed server left: the temporary names its
// journal notes (recoverTemps: a call through the gate, with its audit
// line; what the journal does not note stays, whatever its name),
// write-ahead changes a crash may have lost (rolled forward, under the
// vault lock, so none is under way), deletes and moves whose outcome it
// did not record, and history past its bounds.
func (g *Gate) startUp(kept *history.Store, log io.Writer) error {
	g.recoverTemps(log)
	unlock, err := g.lockVault()
	if err != nil {
		return err
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
