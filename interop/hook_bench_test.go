package interop

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/internal/vaulttest"
)

// hookCase is one way of starting a hook process on one PreToolUse input.
type hookCase struct {
	name  string
	argv  []string
	env   []string
	input []byte
	want  string // in the answer on stdout
	times []time.Duration
}

func (c *hookCase) run(b *testing.B) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Stdin = bytes.NewReader(c.input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = c.env
	start := time.Now()
	err := cmd.Run()
	c.times = append(c.times, time.Since(start))
	if err != nil || !strings.Contains(out.String(), c.want) {
		b.Fatalf("%s: %v: stdout %q, stderr %q", c.name, err, out.String(), errOut.String())
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkHookStart times the hook as Claude Code runs it: a new process
// for every call, the PreToolUse JSON on stdin, the answer on stdout. The
// floor is interop/hookfloor, a Go binary that parses the same JSON and
// prints an allow. Each round runs the floor and every case once, the
// order turning each round, so that a busy machine slows each alike.
// Reported for each case: its median over the floor's median of the
// same run (x-...), and the floor's median (floor-ms).
//
// "alone" is `vaultgate hook` with no judge running: the call judged in a
// process of its own, the vault, audit log, history and rules opened for
// it. "judge" is vaultgate-hook, which hands the call to the judge it
// started on its first call (vaultgate hook-judge; see docs/claude-code.md, The
// hook).
//
//	go test ./interop -run '^$' -bench HookStart -benchtime 60x
func BenchmarkHookStart(b *testing.B) {
	bin := filepath.Dir(binary(b))
	for _, cmd := range []string{"vaultgate-hook", "vaultgate-wall"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, cmd), "../cmd/"+cmd).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", cmd, err, out)
		}
	}
	floor := filepath.Join(bin, "hookfloor")
	if out, err := exec.Command("go", "build", "-o", floor, "./hookfloor").CombinedOutput(); err != nil {
		b.Fatalf("go build hookfloor: %v\n%s", err, out)
	}
	root := b.TempDir()
	vaulttest.CopyDir(b, "../testdata/vault", filepath.Join(root, "testdata/vault"))
	for _, f := range []string{"vault.toml", "rules20.toml"} {
		data, err := os.ReadFile("../testdata/" + f)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "testdata", f), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// The judges' sockets in a folder of the benchmark's own; each judge
	// ends within a second of its config's removal with root.
	runtimeDir := filepath.Join(root, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "XDG_RUNTIME_DIR=" + runtimeDir}
	vaultDir := filepath.Join(root, "testdata/vault")
	cfg := filepath.Join(root, "testdata/vault.toml")
	rules := filepath.Join(root, "testdata/rules20.toml")
	input := func(tool, args string) []byte {
		return fmt.Appendf(nil, `{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"t"}`, vaultDir, tool, args)
	}
	inputs := []struct {
		name, tool, args, want string
	}{
		{"bash-allow", "Bash", `{"command":"ls notes"}`, `"allow"`},
		{"bash-deny", "Bash", `{"command":"rm мета/план.md"}`, `"deny"`},
		{"write-allow", "Write", fmt.Sprintf(`{"file_path":%q,"content":"hi"}`, filepath.Join(vaultDir, "💬 чаты/new.md")), `"allow"`},
		{"write-deny", "Write", fmt.Sprintf(`{"file_path":%q,"content":"hi"}`, filepath.Join(vaultDir, "мета/план.md")), `"deny"`},
	}
	cases := func(name string, hook ...string) []*hookCase {
		cs := []*hookCase{{name: "floor", argv: []string{floor}, env: env, input: input("Bash", `{"command":"ls notes"}`), want: `"allow"`}}
		for _, in := range inputs {
			cs = append(cs, &hookCase{name: name + "/" + in.name, argv: append(slices.Clone(hook), "--config", cfg), env: env, input: input(in.tool, in.args), want: in.want})
		}
		return append(cs, &hookCase{name: name + "/rules20-bash-allow", argv: append(slices.Clone(hook), "--config", rules), env: env, input: input("Bash", `{"command":"ls notes"}`), want: `"allow"`})
	}
	measure := func(b *testing.B, cs []*hookCase) {
		for _, c := range cs { // the page cache, the kept parses, the judges
			c.run(b)
		}
		b.ResetTimer()
		for i := range b.N {
			for j := range cs {
				cs[(i+j)%len(cs)].run(b)
			}
		}
		b.StopTimer()
		fl := median(cs[0].times)
		b.ReportMetric(float64(fl.Microseconds())/1000, "floor-ms")
		for _, c := range cs[1:] {
			b.ReportMetric(float64(median(c.times))/float64(fl), "x-"+c.name)
		}
	}
	b.Run("alone", func(b *testing.B) { measure(b, cases("vaultgate.hook", binary(b), "hook")) })
	b.Run("judge", func(b *testing.B) { measure(b, cases("vaultgate-hook", filepath.Join(bin, "vaultgate-hook"))) })
}
