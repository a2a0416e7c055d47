package shell

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzAnalyze checks that no input makes the analysis panic or run long.
// It is seeded from the corpus.
func FuzzAnalyze(f *testing.F) {
	file, err := os.Open(corpusFile)
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, _, _ := strings.Cut(line, "\t")
		f.Add(strings.NewReplacer("⏎", "\n", "⇥", "\t").Replace(cmd))
	}
	file.Close()
	vault := sampleVault(f)
	opts := corpusOptions(vault)
	f.Fuzz(func(t *testing.T, cmd string) {
		done := make(chan struct{})
		var an *Analysis
		var err error
		go func() {
			defer close(done)
			an, err = Analyze(cmd, opts)
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatalf("analysis of %q took over 2s", cmd)
		}
		if err == nil && an == nil {
			t.Fatalf("no analysis and no error for %q", cmd)
		}
		if err != nil {
			if _, ok := err.(*Refusal); !ok && !strings.HasPrefix(err.Error(), "shell: internal error") {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if strings.HasPrefix(err.Error(), "shell: internal error") {
				t.Fatalf("internal error (a walker bug) for %q: %v", cmd, err)
			}
			return
		}
		for _, e := range an.Effects {
			if !e.Unknown && e.Op.String() != "exec" && (e.Path == "" || e.Path[0] != '/') {
				t.Fatalf("effect %+v has no absolute path for %q", e, cmd)
			}
		}
	})
}
