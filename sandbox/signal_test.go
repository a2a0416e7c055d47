package sandbox

import (
	"context"
	"os"
	"testing"
)

// Result.Signal tells a bash killed by a signal from one that exited with
// the same status: the transaction applies nothing of the first.
func TestResultSignal(t *testing.T) {
	dir := t.TempDir()
	// Outside a pid namespace bash is not pid 1, so it can be killed.
	r := Request{Command: "kill -KILL $$", Dir: dir, Env: []string{"PATH"}, Environ: os.Environ(), contain: containSweep}
	res, err := Run(context.Background(), r)
	if err != nil || res.Signal != 9 || res.ExitCode != 137 {
		t.Fatalf("killed: signal %d, exit %d, err %v", res.Signal, res.ExitCode, err)
	}
	r.Command = "exit 137"
	res, err = Run(context.Background(), r)
	if err != nil || res.Signal != 0 || res.ExitCode != 137 {
		t.Fatalf("exited: signal %d, exit %d, err %v", res.Signal, res.ExitCode, err)
	}
}
