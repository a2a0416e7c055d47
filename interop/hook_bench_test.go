package interop

import (
	"bytes"
	"fmt"
	"io"
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
	input []byte
	want  string // in the answer on stdout
	times []time.Duration
}

func (c *hookCase) run(b *testing.B) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.Stdin = bytes.NewReader(c.input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
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
// same run (x-...), and the floor's median (floor-ms). "cold" is the hook
// on its own; "warm" has a `vaultgate serve` of the same config running,
// whose judge answers the hook (see the README, The hook).
//
//	go test ./interop -run '^$' -bench HookStart -benchtime 60x
func BenchmarkHookStart(b *testing.B) {
	bin := filepath.Dir(binary(b))
	for _, cmd := range []string{"vaultgate-hook", "vaultgate-hook-rules", "vaultgate-wall"} {
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
	cases := func() []*hookCase {
		cs := []*hookCase{{name: "floor", argv: []string{floor}, input: input("Bash", `{"command":"ls notes"}`), want: `"allow"`}}
		for _, hook := range [][]string{{filepath.Join(bin, "vaultgate-hook")}, {binary(b), "hook"}} {
			name := filepath.Base(hook[0])
			if len(hook) > 1 {
				name += "." + hook[1]
			}
			for _, in := range inputs {
				cs = append(cs, &hookCase{name: name + "/" + in.name, argv: append(slices.Clone(hook), "--config", cfg), input: input(in.tool, in.args), want: in.want})
			}
			cs = append(cs, &hookCase{name: name + "/rules20-bash-allow", argv: append(slices.Clone(hook), "--config", rules), input: input("Bash", `{"command":"ls notes"}`), want: `"allow"`})
		}
		return cs
	}
	measure := func(b *testing.B) {
		cs := cases()
		for _, c := range cs { // warm the page cache and the kept parses
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
	b.Run("cold", measure)
	b.Run("warm", func(b *testing.B) {
		for _, conf := range []string{cfg, rules} {
			stopServe := serveFor(b, conf, filepath.Join(root, ".state/hook-judge"))
			defer stopServe()
		}
		measure(b)
	})
}

// serveFor starts `vaultgate serve` on conf over stdio, its stdin held
// open, and waits for a new socket of its warm judge in dir.
func serveFor(b *testing.B, conf, dir string) (stop func()) {
	before, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	cmd := exec.Command(binary(b), "serve", "--config", conf)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop = func() { stdin.Close(); cmd.Wait() }
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if now, _ := filepath.Glob(filepath.Join(dir, "*.sock")); len(now) > len(before) {
			return stop
		}
	}
	stop()
	b.Fatalf("serve --config %s: no warm judge's socket in %s", conf, dir)
	return nil
}
