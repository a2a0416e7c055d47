package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsContent is what interop/ts/interop.test.mjs writes to notes/new.md.
const tsContent = "привет, 💬\n"

// needNode returns node's path, or stops the test: in CI (CI=true) a missing
// node or a missing install fails it, elsewhere it skips, saying what to run.
func needNode(t *testing.T) string {
	t.Helper()
	const fix = "run `npm ci --prefix interop/ts` (Node.js 20 or later)"
	stop := t.Skipf
	if os.Getenv("CI") == "true" {
		stop = t.Fatalf
	}
	node, err := exec.LookPath("node")
	if err != nil {
		stop("node is not installed: install Node.js, then %s", fix)
		return ""
	}
	if _, err := os.Stat("ts/node_modules/@modelcontextprotocol/sdk/package.json"); err != nil {
		stop("the TypeScript SDK is not installed in interop/ts/node_modules: %s", fix)
		return ""
	}
	return node
}

// TestTypeScriptSDK runs interop/ts/interop.test.mjs (node's built-in test
// runner, the official @modelcontextprotocol/sdk client) against the built
// binary, over stdio and over Streamable HTTP, each on a vault of its own,
// then checks both vaults on disk.
func TestTypeScriptSDK(t *testing.T) {
	node := needNode(t)
	bin := binary(t)
	stdioVault, stdioCfg, stdioAudit := vault(t)
	httpVault, httpCfg, httpAudit := vault(t)
	url := serveHTTP(t, httpCfg)
	out := filepath.Join(t.TempDir(), "versions.txt")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "ts/interop.test.mjs")
	cmd.Env = append(os.Environ(),
		"VAULTGATE_BIN="+bin,
		"VAULTGATE_STDIO_CONFIG="+stdioCfg,
		"VAULTGATE_STDIO_VAULT="+stdioVault,
		"VAULTGATE_HTTP_URL="+url,
		"VAULTGATE_HTTP_TOKEN="+token,
		"VAULTGATE_HTTP_VAULT="+httpVault,
		"VAULTGATE_INTEROP_OUT="+out,
		"HOME="+t.TempDir(),
		"NO_COLOR=1",
	)
	start := time.Now()
	b, err := cmd.CombinedOutput()
	t.Logf("node --test ts/interop.test.mjs (%v):\n%s", time.Since(start).Round(time.Millisecond), b)
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
	// node's runner exits 0 when every test is skipped: make sure they ran.
	if !strings.Contains(string(b), "skipped 0") && !strings.Contains(string(b), "skip 0") {
		t.Errorf("node skipped tests")
	}
	versions, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no protocol versions reported: %v", err)
	}
	t.Logf("negotiated:\n%s", versions)
	if n := strings.Count(string(versions), "negotiated"); n != 2 {
		t.Errorf("%d transports reported a version, want 2", n)
	}

	checkScenario(t, stdioVault, stdioAudit, "stdio", tsContent)
	checkScenario(t, httpVault, httpAudit, "http", tsContent)
}
