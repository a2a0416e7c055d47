package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultgate/vaultgate/internal/vaultgen"
)

// The two vaults of BenchmarkVaultSize: issue 29's small one, and its big
// one, whose size VAULTGATE_BIG_NOTES changes for a quicker run.
const (
	smallVaultNotes = 500
	bigVaultNotes   = 200_000
	vaultSeed       = 1
)

// sizedVault is one generated vault with a config of its own, the
// server that runs on it and the runtime folder its hook's judge uses.
type sizedVault struct {
	name, dir, cfg, runtime string
	stats                   vaultgen.Stats
	env                     []string
	serve                   *mcp.ClientSession
	serveLog                *lockedBuffer
}

// BenchmarkVaultSize times what a call costs on a vault of 500 notes and
// on one of 200,000 (internal/vaultgen; kept between runs under
// os.TempDir()), the two vaults taking turns call by call, the order
// turning each round. Each sub-benchmark reports the big vault's median
// over the small one's (issue 29's goal: at most 1.3) and both medians
// in ms:
//
//   - bash: a walled `bash` `true` over MCP (the Go SDK, stdio) on a
//     `vaultgate serve` that runs: x-bash.
//   - claude: a Claude Code Bash `true`: vaultgate-hook, its judge running,
//     whole process (x-hook), then the command of its updatedInput run
//     with bash -c from inside the vault (x-rewrite).
//   - start: a new `vaultgate serve`, from the process's start to its
//     answer to initialize: x-start.
//
// A call that fails on either vault fails the sub-benchmark with its
// error: a bigger vault must not be slower, let alone refused.
//
//	go test ./interop -run '^$' -bench VaultSize -benchtime 20x -timeout 30m
//	VAULTGATE_BIG_NOTES=20000 go test ./interop -run '^$' -bench VaultSize -benchtime 20x
func BenchmarkVaultSize(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("the wall needs root here")
	}
	big := bigVaultNotes
	if s := os.Getenv("VAULTGATE_BIG_NOTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("VAULTGATE_BIG_NOTES=%q: want a number of notes", s)
		}
		big = n
	}
	bin := filepath.Dir(binary(b))
	for _, cmd := range []string{"vaultgate-hook", "vaultgate-wall"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, cmd), "../cmd/"+cmd).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", cmd, err, out)
		}
	}
	vaults := []*sizedVault{sizeVault(b, "small", smallVaultNotes), sizeVault(b, "big", big)}
	for _, v := range vaults {
		b.Logf("%s vault: %s, %+v", v.name, v.dir, v.stats)
	}
	b.Run("bash", func(b *testing.B) {
		for _, v := range vaults {
			v.startServe(b)
		}
		measureBySize(b, vaults, []string{"bash"}, func(b *testing.B, v *sizedVault) []time.Duration {
			return []time.Duration{v.bashTrue(b)}
		})
	})
	b.Run("claude", func(b *testing.B) {
		measureBySize(b, vaults, []string{"hook", "rewrite"}, func(b *testing.B, v *sizedVault) []time.Duration {
			return v.claudeBash(b)
		})
	})
	b.Run("start", func(b *testing.B) {
		measureBySize(b, vaults, []string{"start"}, func(b *testing.B, v *sizedVault) []time.Duration {
			return []time.Duration{v.startToInitialize(b)}
		})
	})
}

// sizeVault generates (or finds kept) the vault of notes and writes a
// config for it in a folder of the benchmark's own: the whole vault
// editable, .obsidian protected, a hidden name pattern (which the wall
// must look for by name), and the wall required.
func sizeVault(b *testing.B, name string, notes int) *sizedVault {
	b.Helper()
	dir, stats, err := vaultgen.Cached(notes, vaultSeed)
	if err != nil {
		b.Fatalf("generating the %s vault of %d notes: %v", name, notes, err)
	}
	root := b.TempDir()
	v := &sizedVault{name: name, dir: dir, stats: stats, cfg: filepath.Join(root, "vault.toml"), runtime: filepath.Join(root, "run")}
	body := fmt.Sprintf(`vault = %q
lang  = "en"
[audit]
path = "state/audit.jsonl"
[zones]
edit      = ["."]
protected = [".obsidian"]
hidden    = ["**/*.pem"]
[bash]
wall = "required"
`, dir)
	if err := os.WriteFile(v.cfg, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Mkdir(v.runtime, 0o700); err != nil {
		b.Fatal(err)
	}
	v.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "LANG=C.UTF-8", "XDG_RUNTIME_DIR=" + v.runtime}
	return v
}

// measureBySize runs step on each vault in turn, b.N rounds after two
// untimed ones (the page cache, the judge's start, the kept probe), and
// reports for each of the step's timings (named) the big vault's median
// over the small one's, and each median in ms.
func measureBySize(b *testing.B, vaults []*sizedVault, names []string, step func(*testing.B, *sizedVault) []time.Duration) {
	for range 2 {
		for _, v := range vaults {
			step(b, v)
		}
	}
	times := make([][][]time.Duration, len(vaults)) // vault, name, round
	for i := range times {
		times[i] = make([][]time.Duration, len(names))
	}
	for round := 0; b.Loop(); round++ {
		for i := range vaults {
			at := (round + i) % len(vaults)
			for j, d := range step(b, vaults[at]) {
				times[at][j] = append(times[at][j], d)
			}
		}
	}
	for j, name := range names {
		small, big := median(times[0][j]), median(times[1][j])
		b.ReportMetric(float64(big)/float64(small), "x-"+name)
		b.ReportMetric(float64(small.Microseconds())/1000, name+"-small-ms")
		b.ReportMetric(float64(big.Microseconds())/1000, name+"-big-ms")
	}
}

// startServe starts the vault's `vaultgate serve` for the MCP calls.
func (v *sizedVault) startServe(b *testing.B) {
	b.Helper()
	v.serveLog = &lockedBuffer{}
	cmd := exec.Command(binary(b), "serve", "--config", v.cfg)
	cmd.Env, cmd.Stderr = v.env, v.serveLog
	client := mcp.NewClient(&mcp.Implementation{Name: "vaultgate-bench", Version: "1"}, nil)
	s, err := client.Connect(b.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatalf("%s vault: serve: %v\n%s", v.name, err, v.serveLog)
	}
	b.Cleanup(func() { s.Close() })
	v.serve = s
}

// bashTrue times one walled `bash true` over MCP.
func (v *sizedVault) bashTrue(b *testing.B) time.Duration {
	start := time.Now()
	res, err := v.serve.CallTool(b.Context(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "true"}})
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s vault (%d notes): bash true over MCP: %v\nserve's stderr:\n%s", v.name, v.stats.Notes, err, v.serveLog)
	}
	if res.IsError {
		b.Fatalf("%s vault (%d notes): bash true over MCP failed: %s", v.name, v.stats.Notes, toolText(res))
	}
	return d
}

func toolText(res *mcp.CallToolResult) string {
	var s strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			s.WriteString(t.Text)
		}
	}
	return s.String()
}

// claudeBash times a Claude Code Bash `true` as Claude Code runs it: the
// hook (vaultgate-hook, whose judge the first call starts), then the
// command its answer's updatedInput names, with bash -c from inside the
// vault.
func (v *sizedVault) claudeBash(b *testing.B) []time.Duration {
	input := fmt.Appendf(nil, `{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"true"},"tool_use_id":"t"}`, v.dir)
	hook := exec.Command(filepath.Join(filepath.Dir(binary(b)), "vaultgate-hook"), "--config", v.cfg)
	var out, errOut bytes.Buffer
	hook.Stdin, hook.Stdout, hook.Stderr, hook.Env = bytes.NewReader(input), &out, &errOut, v.env
	start := time.Now()
	err := hook.Run()
	hookTime := time.Since(start)
	if err != nil {
		b.Fatalf("%s vault (%d notes): vaultgate-hook: %v\nstdout %s\nstderr %s", v.name, v.stats.Notes, err, &out, &errOut)
	}
	var answer struct {
		H struct {
			Decision     string         `json:"permissionDecision"`
			Reason       string         `json:"permissionDecisionReason"`
			UpdatedInput map[string]any `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	command := ""
	if json.Unmarshal(out.Bytes(), &answer) == nil {
		command, _ = answer.H.UpdatedInput["command"].(string)
	}
	if command == "" {
		b.Fatalf("%s vault (%d notes): the hook rewrote nothing: %s\nstderr %s", v.name, v.stats.Notes, &out, &errOut)
	}
	run := exec.Command("bash", "-c", command)
	run.Dir, run.Env = v.dir, v.env
	start = time.Now()
	runOut, err := run.CombinedOutput()
	rewriteTime := time.Since(start)
	if err != nil {
		b.Fatalf("%s vault (%d notes): the rewritten command %q: %v\n%s", v.name, v.stats.Notes, command, err, runOut)
	}
	return []time.Duration{hookTime, rewriteTime}
}

// startToInitialize times a new `vaultgate serve` from its start to its
// answer to initialize (the SDK's Connect starts the process and returns
// once initialize is answered), then ends it, untimed.
func (v *sizedVault) startToInitialize(b *testing.B) time.Duration {
	var log lockedBuffer
	cmd := exec.Command(binary(b), "serve", "--config", v.cfg)
	cmd.Env, cmd.Stderr = v.env, &log
	client := mcp.NewClient(&mcp.Implementation{Name: "vaultgate-bench", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	start := time.Now()
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	d := time.Since(start)
	if err != nil {
		b.Fatalf("%s vault (%d notes): serve's start: %v\n%s", v.name, v.stats.Notes, err, &log)
	}
	if err := s.Close(); err != nil {
		b.Fatalf("%s vault: serve's end: %v\n%s", v.name, err, &log)
	}
	return d
}

// lockedBuffer is a process's stderr, readable while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
