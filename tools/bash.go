package tools

import (
	"context"
	"errors"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/say"
	"github.com/vaultgate/vaultgate/shell"
	"github.com/vaultgate/vaultgate/zones"
)

// bashTool is the bash tool's definition, documented in l; it is in a set
// only when the agent's [bash] enabled is true. overlay says its commands
// run on the overlay, whose rules the description then tells.
func bashTool(b *config.Bash, l say.Lang, overlay bool) Tool {
	doc := say.BashDoc
	if overlay {
		doc = say.BashTxnDoc
	}
	return Tool{
		Name: "bash", Title: say.BashTitle.Text(l), Destructive: true, OpenWorld: b.Network,
		Description: doc.Text(l),
		Params: []Param{
			{Name: "command", Type: "string", Required: true, Description: say.BashCommandDoc.Text(l)},
			{Name: "timeout", Type: "integer", Description: say.BashTimeoutDoc{
				Default: int(b.Timeout / time.Second), Max: int(b.MaxTimeout / time.Second)}.Text(l)},
		},
		plan: planBash,
	}
}

// bashWall says whether this agent's bash calls run inside the OS wall,
// and with which layers (probed once per process). "required" needs every
// layer and otherwise returns an error naming what is missing;
// "best-effort" raises what there is (the audit's wall field lists it);
// "off" runs on the analysis alone. A wall counts as up, so that exec
// effects may run, only when its new root is: without it hidden zones
// can't be hidden.
func bashWall(b *config.Bash, helper string) (*sandbox.WallConfig, error) {
	if b.Wall == config.WallOff {
		return nil, nil
	}
	required := b.Wall == config.WallRequired
	layers, err := sandbox.ProbeWall(helper).For(b.Network, b.RunAs != "", required)
	if err != nil {
		return nil, err
	}
	if !layers.Mount {
		return nil, nil
	}
	return &sandbox.WallConfig{Network: b.Network, RunAs: b.RunAs, Required: required, Layers: layers, Helper: helper}, nil
}

func planBash(s *Set, a args) (*Plan, error) {
	b := s.Bash
	command := a.str("command")
	timeout := b.Timeout
	if a.has("timeout") {
		secs := a.integer("timeout", 0)
		if secs < 1 || time.Duration(secs)*time.Second > b.MaxTimeout {
			return nil, a.bad("timeout", say.ArgSecondsRange{Min: 1, Max: int(b.MaxTimeout / time.Second)})
		}
		timeout = time.Duration(secs) * time.Second
	}
	cwd, err := s.bashCwd()
	if err != nil {
		return nil, err
	}
	plan, wall, err := s.prepareBash(command, cwd)
	if err != nil || refusalOf(plan) != nil {
		return plan, err
	}
	an := plan.analysis
	overlay := wall != nil && wall.Layers.Overlay
	secrets := make([]sandbox.Secret, 0, len(b.Secrets))
	for _, sec := range b.Secrets {
		if v := os.Getenv(sec.FromEnv); v != "" {
			secrets = append(secrets, sandbox.Secret{Name: sec.Name, Value: v, Commands: sec.Commands})
		}
	}
	plan.Run = func(ctx context.Context) (*Result, error) {
		callWall := wall
		var tx *bashTxn
		if overlay {
			var err error
			if callWall, tx, err = s.beginBash(wall); err != nil {
				return nil, err
			}
		}
		res, err := sandbox.Run(ctx, sandbox.Request{
			Command:  command,
			Dir:      cwd,
			Env:      b.Env,
			Environ:  s.environ(),
			Programs: an.Programs,
			Secrets:  secrets,
			Timeout:  timeout,
			Wall:     callWall,
			Ahead:    s.Vault.HelperAhead,
		})
		if err != nil && (res.Duration == 0 || tx != nil) {
			// Cut short (the call's context ended): nothing of it is applied.
			if tx != nil {
				tx.remove()
			}
			return nil, err
		}
		out := bashResult(res, timeout, s.Lang)
		if callWall != nil && s.Zones.HidesCopies() && slices.Contains(an.Programs, "git") {
			// The wall covers .git: git's "not a git repository" must
			// not read as the vault's state (a checkout, a re-init).
			note := s.say(say.GitHidden{}) + "\n"
			out.Text += note
			out.Stderr += note
			if bo, ok := out.Structured.(BashOutput); ok {
				bo.Stderr += note
				out.Structured = bo
			}
		}
		if tx == nil {
			return out, nil
		}
		return s.finishBash(tx, res, out, plan.Effects), nil
	}
	return plan, nil
}

// bashCwd is the folder a bash call runs in: the vault root, or the
// set's Cwd (vaultgate exec, run from a folder of the vault), which must
// be a folder inside the vault.
func (s *Set) bashCwd() (string, error) {
	if s.Cwd == "" {
		return s.Vault.Root, nil
	}
	p, err := zones.Normalize(s.Vault.Root, s.Cwd)
	if err != nil || p.Outside() || !path.IsAbs(s.Cwd) {
		return "", errors.New(s.say(say.BashCwdOutside{Dir: s.Cwd}))
	}
	// where it really is: a link inside the vault is followed as chdir
	// follows it
	real, err := s.Vault.Resolve(p, true)
	if err != nil {
		return "", errors.New(s.say(say.BashCwdOutside{Dir: s.Cwd}))
	}
	return real.Abs(s.Vault.Root), nil
}

// prepareBash analyses a command run from cwd and judges where it would
// run: the plan's effects, confined when the wall is up, and the bash
// rule's facts (a refusal when the wall is required and can't be raised).
// wall is the wall the command would run in, nil for none. The bash tool
// and Claude Code's Bash through the hook (which has vaultgate exec run it)
// plan alike, so the hook's answer is the one the run will get.
func (s *Set) prepareBash(command, cwd string) (plan *Plan, wall *sandbox.WallConfig, err error) {
	plan, err = s.analyseBash(command, cwd)
	if err != nil || refusalOf(plan) != nil {
		return plan, nil, err
	}
	wall, wallErr := bashWall(s.Bash, s.Vault.WallHelper)
	if wall != nil {
		wall.Zones = s.Zones
		wall.Names = s.Vault.Names
		confine(plan.Effects)
	}
	// On the overlay what the command really changes is judged before it
	// reaches the vault (see bashtxn.go), a folder it moved, removed or
	// changed the mode of on every path inside (coverReal), exactly. Without
	// it the prediction is all that is judged, so its folder effects are
	// judged on every path the folder holds now (folder.go): a prediction
	// that may reach further than the command will (find -name … -delete,
	// tar -x into a folder) is judged as reaching all of it.
	overlay := wall != nil && wall.Layers.Overlay
	if !overlay && wallErr == nil {
		if plan.Effects, err = s.coverFolders(plan.Effects); err != nil {
			return nil, nil, err
		}
	}
	plan.Facts = BashCall{Overlay: overlay}
	if wallErr != nil {
		plan.Facts = BashCall{Refusal: &policy.Deny{Rule: "bash", Reason: s.say(say.BashWallRequired{Problem: wallErr.Error()})}}
	}
	return plan, wall, nil
}

// confine marks what the OS wall holds to the zones once it is up: the
// programs of unknown effect it runs, reads of paths only known when the
// command runs, and reads of whole folders (the wall hides what no zone
// lets be read, so a hidden zone inside one is not there to be read). A
// write to an unknown path stays refused: the analysis must have checked
// it.
func confine(effects []policy.Effect) {
	for i := range effects {
		e := &effects[i]
		if e.Op == zones.OpExec || e.Op == zones.OpRead && (e.Unknown || e.Subtree) {
			e.Confined = true
		}
	}
}

// analyseBash turns a command into a plan's effects (or its refusal), as
// run from cwd, with the bash rule's facts attached. Run is left for the
// caller: the bash tool runs it, the hook never does.
func (s *Set) analyseBash(command, cwd string) (*Plan, error) {
	if strings.TrimSpace(command) == "" {
		return nil, &ArgError{Tool: "bash", Arg: "command", Problem: say.ArgEmpty{}, Lang: s.Lang}
	}
	if cwd == "" {
		cwd = s.Vault.Root
	}
	// The analysis walks each path on the real disk itself, link by link
	// as the kernel will, so that a ".." after a link is taken where the
	// link leads.
	an, err := shell.Analyze(command, shell.Options{Vault: s.Vault.Root, Cwd: cwd})
	plan := &Plan{Facts: BashCall{}, TellAll: true}
	var ref *shell.Refusal
	switch {
	case errors.As(err, &ref):
		plan.Facts = BashCall{Refusal: &policy.Deny{Rule: "bash", Reason: s.refusalReason(ref)}}
		plan.Run = func(context.Context) (*Result, error) { return nil, errors.New("refused") }
		return plan, nil
	case err != nil:
		return nil, errors.New(s.say(say.BashAnalysisFailed{Problem: err.Error()})) // judged as error: fail closed
	}
	for _, e := range an.Effects {
		plan.Effects = append(plan.Effects, s.bashEffect(e))
	}
	plan.analysis = an
	return plan, nil
}

func (s *Set) bashEffect(e shell.Effect) policy.Effect {
	part := BashPart{Command: e.Command, ByRename: e.ByRename}
	pe := policy.Effect{Op: e.Op, Subtree: e.Subtree, Unknown: e.Unknown, Cause: e.Command}
	if e.Op == zones.OpExec {
		part.Why = s.say(execWhy(e.Why))
		pe.Cause, pe.Fact = e.Detail, part
		return pe
	}
	pe.Fact = part
	if !e.Unknown {
		p, ok := s.vaultPath(e.Path)
		if !ok {
			pe.Unknown = true // a path we can't place is one we can't know
			return pe
		}
		pe.Path = p
		if st, err := s.stat(p); err == nil {
			pe.Exists = st.exists
		}
	}
	if src, ok := s.vaultPath(e.Source); e.Source != "" && ok {
		pe.Source = src
	} else if e.Op == zones.OpLink || e.Op == zones.OpMoveIn {
		pe.SourceUnknown = true
	}
	return pe
}

// vaultPath turns the analysis' absolute path into the zones' form; ok is
// false for one that is empty, relative or holds a NUL, which the zones
// can't judge (it would read as the vault root).
func (s *Set) vaultPath(abs string) (zones.Path, bool) {
	if !path.IsAbs(abs) {
		return zones.Path{}, false
	}
	p, err := zones.Normalize(s.Vault.Root, abs)
	return p, err == nil
}

func (s *Set) refusalReason(r *shell.Refusal) string {
	switch r.Code {
	case shell.ParseError:
		return s.say(say.BashParse{Problem: r.Detail})
	case shell.DynamicCommand:
		return s.say(say.BashDynamic{Command: r.Command})
	case shell.Privilege:
		return s.say(say.BashPrivilege{Command: r.Command})
	case shell.TooLarge:
		return s.say(say.BashTooLarge{MaxKiB: shell.MaxCommandSize >> 10})
	case shell.TooDeep:
		return s.say(say.BashTooDeep{Detail: r.Detail})
	}
	return s.say(say.BashParse{Problem: r.Error()})
}

// BashOutput is the bash tool's structured result.
type BashOutput struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
	// NotApplied says why none of the command's changes reached the
	// vault (a call on the overlay); absent when they all did.
	NotApplied string `json:"not_applied,omitempty"`
}

func bashResult(r sandbox.Result, timeout time.Duration, lang say.Lang) *Result {
	code := r.ExitCode
	return &Result{
		Text: say.BashResult{ExitCode: r.ExitCode, TimedOut: r.TimedOut, Timeout: timeout,
			Stdout: r.Stdout, Stderr: r.Stderr}.Text(lang),
		Structured: BashOutput{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, TimedOut: r.TimedOut, Truncated: r.Truncated},
		ExitCode:   &code,
		Wall:       r.Isolation,
		Failed:     r.ExitCode != 0,
		TimedOut:   r.TimedOut,
		Signal:     r.Signal,
		Stdout:     r.Stdout,
		Stderr:     r.Stderr,
	}
}

// execWhys words the analysis' reasons; TestExecWhysWorded proves that
// every reason has its words.
var execWhys = map[shell.ExecWhy]say.ExecWhy{
	shell.Interpreter:       say.WhyInterpreter,
	shell.VersionControl:    say.WhyVersionControl,
	shell.BuildTool:         say.WhyBuildTool,
	shell.Script:            say.WhyScript,
	shell.ShellBuiltin:      say.WhyShellBuiltin,
	shell.UnknownProgram:    say.WhyUnknownProgram,
	shell.UnknownOption:     say.WhyUnknownOption,
	shell.ProgramOption:     say.WhyProgramOption,
	shell.DynamicArithmetic: say.WhyDynamicArithmetic,
	shell.DangerousEnv:      say.WhyDangerousEnv,
	shell.SedScript:         say.WhySedScript,
	shell.DynamicExpansion:  say.WhyDynamicExpansion,
	shell.DynamicArgument:   say.WhyDynamicArgument,
	shell.Machine:           say.WhyMachine,
	shell.CdMayFail:         say.WhyCdMayFail,
}

func execWhy(w shell.ExecWhy) say.ExecWhy {
	if m, ok := execWhys[w]; ok {
		return m
	}
	return say.WhyUnexplained // the effect is still an exec, and still judged as one
}

// environ is the environment [bash] env picks from: the caller's, or this
// process's own.
func (s *Set) environ() []string {
	if s.Environ != nil {
		return s.Environ
	}
	return os.Environ()
}
