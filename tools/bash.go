package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/vaultgate/vaultgate/config"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/sandbox"
	"github.com/vaultgate/vaultgate/shell"
	"github.com/vaultgate/vaultgate/zones"
)

// bashTool is the bash tool's definition; it is in a set only when the
// agent's [bash] enabled is true.
func bashTool(b *config.Bash) Tool {
	return Tool{
		Name: "bash", Title: "Run a shell command", Destructive: true, OpenWorld: b.Network,
		Description: "Run a bash command in the vault root. Before it runs, every path the command would touch is found and checked against the zones; " +
			"commands vaultgate can't analyse are refused unless the OS wall is up. Removing or renaming with bash is allowed only in write zones " +
			"(use the move, edit and delete tools elsewhere). Returns the exit code, stdout and stderr.",
		Params: []Param{
			{Name: "command", Type: "string", Required: true, Description: "The bash command."},
			{Name: "timeout", Type: "integer", Description: fmt.Sprintf("Seconds before every process of the call is ended (default %d, at most %d).",
				int(b.Timeout/time.Second), int(b.MaxTimeout/time.Second))},
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
			return nil, &ArgError{Tool: "bash", Arg: "timeout", Problem: fmt.Sprintf("must be between 1 and %d seconds", int(b.MaxTimeout/time.Second))}
		}
		timeout = time.Duration(secs) * time.Second
	}
	plan, err := s.analyseBash(command, s.Vault.Root)
	if err != nil || refusalOf(plan) != nil {
		return plan, err
	}
	an := plan.analysis
	root := s.Vault.Root
	wall, wallErr := bashWall(b, s.Vault.WallHelper)
	if wall != nil {
		wall.Zones = s.Zones
		confine(plan.Effects)
	}
	if wallErr != nil {
		plan.Facts = BashCall{Refusal: &policy.Deny{Rule: "bash", Reason: policy.Phrase(s.Lang, "bash.wallRequired", wallErr.Error())}}
	}
	secrets := make([]sandbox.Secret, 0, len(b.Secrets))
	for _, sec := range b.Secrets {
		if v := os.Getenv(sec.FromEnv); v != "" {
			secrets = append(secrets, sandbox.Secret{Name: sec.Name, Value: v, Commands: sec.Commands})
		}
	}
	plan.Run = func(ctx context.Context) (*Result, error) {
		res, err := sandbox.Run(ctx, sandbox.Request{
			Command:  command,
			Dir:      root,
			Env:      b.Env,
			Environ:  os.Environ(),
			Programs: an.Programs,
			Secrets:  secrets,
			Timeout:  timeout,
			Wall:     wall,
		})
		if err != nil && res.Duration == 0 {
			return nil, err
		}
		return bashResult(res, timeout), nil
	}
	return plan, nil
}

// confine marks what the OS wall holds to the zones once it is up: the
// programs of unknown effect it runs, and reads of paths only known when
// the command runs (the wall hides what no zone lets be read). A write to
// an unknown path stays refused: the analysis must have checked it.
func confine(effects []policy.Effect) {
	for i := range effects {
		e := &effects[i]
		if e.Op == zones.OpExec || (e.Unknown && e.Op == zones.OpRead) {
			e.Confined = true
		}
	}
}

// analyseBash turns a command into a plan's effects (or its refusal), as
// run from cwd, with the bash rule's facts attached. Run is left for the
// caller: the bash tool runs it, the hook never does.
func (s *Set) analyseBash(command, cwd string) (*Plan, error) {
	if strings.TrimSpace(command) == "" {
		return nil, &ArgError{Tool: "bash", Arg: "command", Problem: "must not be empty"}
	}
	if cwd == "" {
		cwd = s.Vault.Root
	}
	an, err := shell.Analyze(command, shell.Options{Vault: s.Vault.Root, Cwd: cwd, Resolve: s.resolveAbs})
	plan := &Plan{Facts: BashCall{}, TellAll: true}
	var ref *shell.Refusal
	switch {
	case errors.As(err, &ref):
		plan.Facts = BashCall{Refusal: &policy.Deny{Rule: "bash", Reason: s.refusalReason(ref)}}
		plan.Run = func(context.Context) (*Result, error) { return nil, errors.New("refused") }
		return plan, nil
	case err != nil:
		return nil, fmt.Errorf("bash analysis failed: %w", err) // judged as error: fail closed
	}
	for _, e := range an.Effects {
		plan.Effects = append(plan.Effects, s.bashEffect(e))
	}
	plan.analysis = an
	return plan, nil
}

// resolveAbs resolves the symlinks of an absolute path for the analysis:
// inside the vault as every tool does, outside left as it is (outside paths
// are judged by absolute zones, and have no zone otherwise).
func (s *Set) resolveAbs(abs string) string {
	rel, err := zones.Normalize(s.Vault.Root, abs)
	if err != nil || rel.Outside() {
		return abs
	}
	real, err := s.Vault.Resolve(rel, true)
	if err != nil {
		return abs // a loop: the kernel refuses it too (ELOOP)
	}
	return real.Abs(s.Vault.Root)
}

func (s *Set) bashEffect(e shell.Effect) policy.Effect {
	part := BashPart{Command: e.Command, ByRename: e.ByRename}
	pe := policy.Effect{Op: e.Op, Subtree: e.Subtree, Unknown: e.Unknown, Cause: e.Command}
	if e.Op == zones.OpExec {
		part.Why = policy.Phrase(s.Lang, "bash.why."+e.Why.String())
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
		return policy.Phrase(s.Lang, "bash.parse", r.Detail)
	case shell.DynamicCommand:
		return policy.Phrase(s.Lang, "bash.dynamic", r.Command)
	case shell.Privilege:
		return policy.Phrase(s.Lang, "bash.privilege", r.Command)
	case shell.TooLarge:
		return policy.Phrase(s.Lang, "bash.tooLarge", shell.MaxCommandSize>>10)
	case shell.TooDeep:
		return policy.Phrase(s.Lang, "bash.tooDeep", r.Detail)
	}
	return policy.Phrase(s.Lang, "bash.parse", r.Error())
}

// BashOutput is the bash tool's structured result.
type BashOutput struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr"`
	TimedOut  bool   `json:"timed_out"`
	Truncated bool   `json:"truncated"`
}

func bashResult(r sandbox.Result, timeout time.Duration) *Result {
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d", r.ExitCode)
	if r.TimedOut {
		fmt.Fprintf(&b, " (timed out after %s; every process of the call was ended)", timeout)
	}
	b.WriteString("\n")
	if r.Stdout != "" {
		b.WriteString("stdout:\n")
		b.WriteString(r.Stdout)
		if !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteString("\n")
		}
	}
	if r.Stderr != "" {
		b.WriteString("stderr:\n")
		b.WriteString(r.Stderr)
		if !strings.HasSuffix(r.Stderr, "\n") {
			b.WriteString("\n")
		}
	}
	code := r.ExitCode
	return &Result{
		Text:       b.String(),
		Structured: BashOutput{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr, TimedOut: r.TimedOut, Truncated: r.Truncated},
		ExitCode:   &code,
		Wall:       r.Isolation,
		Failed:     r.ExitCode != 0,
	}
}

func init() {
	for key, m := range map[string][2]string{
		"bash.parse":                  {`bash: the command can't be parsed (%s); nothing ran.`, `bash: команду нельзя разобрать (%s); ничего не выполнено.`},
		"bash.dynamic":                {`bash: a command whose name is only known when it runs (%q) can't be checked, so it is refused. Write the command's name out.`, `bash: команду, имя которой известно только при выполнении (%q), нельзя проверить, поэтому она запрещена. Напишите имя команды явно.`},
		"bash.privilege":              {`bash: %q is refused: vaultgate never runs commands with other privileges (sudo, su, doas).`, `bash: %q запрещена: vaultgate никогда не выполняет команды с чужими правами (sudo, su, doas).`},
		"bash.tooLarge":               {`bash: the command is over %d KiB; split it into smaller commands.`, `bash: команда длиннее %d КиБ; разбейте её на команды поменьше.`},
		"bash.tooDeep":                {`bash: the command nests shells and wrappers too deeply (%s); write it plainly.`, `bash: в команде слишком глубоко вложены оболочки и обёртки (%s); напишите её проще.`},
		"bash.wallRequired":           {`bash is off: the config requires the OS wall around bash (wall = "required"), and it can't be raised here: %s. A person can set [bash] wall = "best-effort" or "off" to run commands with less; until then use the file tools.`, `bash выключен: конфигурация требует защитную стенку ОС вокруг bash (wall = "required"), а здесь её не поднять: %s. Человек может задать [bash] wall = "best-effort" или "off", чтобы выполнять команды с меньшей защитой; пока используйте файловые инструменты.`},
		"bash.why.interpreter":        {"an interpreter runs code of its own", "интерпретатор выполняет свой код"},
		"bash.why.version-control":    {"git runs a repository's hooks and config", "git выполняет хуки и настройки репозитория"},
		"bash.why.build-tool":         {"a build tool runs project scripts", "сборщик выполняет скрипты проекта"},
		"bash.why.script":             {"a script runs code vaultgate can't see", "скрипт выполняет код, который vaultgate не видит"},
		"bash.why.shell-builtin":      {"this shell builtin changes what later commands do", "эта встроенная команда меняет поведение следующих команд"},
		"bash.why.unknown-program":    {"a program vaultgate does not know", "программа, которую vaultgate не знает"},
		"bash.why.unknown-option":     {"an option vaultgate does not know", "параметр, который vaultgate не знает"},
		"bash.why.program-option":     {"an option that runs another program", "параметр, который запускает другую программу"},
		"bash.why.dynamic-arithmetic": {"arithmetic on a value only known when it runs can execute code hidden in data", "арифметика над значением, известным только при выполнении, может выполнить код, спрятанный в данных"},
		"bash.why.dangerous-env":      {"a variable that changes how programs start", "переменная, меняющая запуск программ"},
		"bash.why.sed-script":         {"a sed script that writes files or runs commands", "скрипт sed, который пишет файлы или выполняет команды"},
		"bash.why.dynamic-expansion":  {"an expansion that evaluates data as code", "подстановка, выполняющая данные как код"},
		"bash.why.dynamic-argument":   {"an argument only known when it runs, where it could run a program or write a file", "аргумент, известный только при выполнении, там, где он мог бы запустить программу или записать файл"},
	} {
		policy.Register(key, m[0], m[1])
	}
}
