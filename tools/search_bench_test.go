package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vaultgate/vaultgate/internal/vaultgen"
	"github.com/vaultgate/vaultgate/policy"
	"github.com/vaultgate/vaultgate/vaultfs"
	"github.com/vaultgate/vaultgate/zones"
)

// go test -run '^$' -bench SearchVsRipgrep -benchtime 8x ./tools/
//
// BenchmarkSearchVsRipgrep times the search tool (planned and run as the
// gate runs it, on the production NoFollowFs, without transport) and
// ripgrep on the same generated vault of 10,000 notes (~75 MB), one after
// the other in each round, in alternating order. x-rg is the median of
// the rounds' ratios, x-rg-min and x-rg-max their spread.
func BenchmarkSearchVsRipgrep(b *testing.B) {
	searchVsRipgrep(b, benchCorpus(b), searchBenchCases)
}

// go test -run '^$' -bench SearchBigVault -benchtime 10x ./tools/
//
// BenchmarkSearchBigVault is BenchmarkSearchVsRipgrep on issue 29's big
// vault: 200,000 notes of internal/vaultgen (~870 MB, kept between runs
// under os.TempDir(); VAULTGATE_BIG_NOTES sets another count), for
// queries that match nothing, so that both read every note.
func BenchmarkSearchBigVault(b *testing.B) {
	notes := 200_000
	if s := os.Getenv("VAULTGATE_BIG_NOTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("VAULTGATE_BIG_NOTES=%q: want a number of notes", s)
		}
		notes = n
	}
	dir, st, err := vaultgen.Cached(notes, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %+v", dir, st)
	searchVsRipgrep(b, dir, bigVaultSearchCases)
}

var bigVaultSearchCases = []searchBenchCase{
	{name: "literal/none", query: "quorble", none: true},
	{name: "fold/none", query: "(?i)quorble", regex: true, none: true},
	{name: "regex/none", query: `\w+ quorble \d+`, regex: true, none: true},
}

// searchVsRipgrep runs each case against ripgrep on dir, as
// BenchmarkSearchVsRipgrep says.
func searchVsRipgrep(b *testing.B, dir string, cases []searchBenchCase) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep (rg) is not installed: apt-get install -y ripgrep")
	}
	tab, err := zones.New(dir, []zones.Entry{{Path: ".", Mode: zones.Edit}}, zones.Options{})
	if err != nil {
		b.Fatal(err)
	}
	fsys, err := vaultfs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	s := &Set{Vault: &Vault{Root: dir, Fs: fsys}, Zones: tab, Lang: "en", State: policy.NewState()}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			args := map[string]any{"query": c.query}
			rgArgs := []string{"--no-heading", "--line-number", "--color", "never", "--no-config"}
			if c.max > 0 {
				args["max_results"] = c.max
			}
			if c.regex {
				args["regex"] = true
			} else {
				rgArgs = append(rgArgs, "--fixed-strings")
			}
			rgArgs = append(rgArgs, "-e", c.query, ".")
			var vg, rgt, ratio []float64
			round := 0
			for b.Loop() {
				runVG := func() time.Duration {
					start := time.Now()
					p, err := s.Plan("search", args)
					if err != nil {
						b.Fatal(err)
					}
					res, err := p.Run(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					d := time.Since(start)
					if n := len(res.Structured.(map[string]any)["matches"].([]Match)); (n == 0) != c.none {
						b.Fatalf("%s: %d matches", c.name, n)
					}
					return d
				}
				runRG := func() time.Duration {
					cmd := exec.Command(rg, rgArgs...)
					cmd.Dir = dir
					cmd.Stdout = io.Discard // a pipe, read to the end, as a caller would
					start := time.Now()
					err := cmd.Run()
					d := time.Since(start)
					if code := cmd.ProcessState.ExitCode(); err != nil && code != 1 || (code == 1) != c.none {
						b.Fatalf("rg %v: %v (exit %d)", rgArgs, err, code)
					}
					return d
				}
				var v, r time.Duration
				if round%2 == 0 {
					v, r = runVG(), runRG()
				} else {
					r, v = runRG(), runVG()
				}
				round++
				vg, rgt = append(vg, ms(v)), append(rgt, ms(r))
				ratio = append(ratio, float64(v)/float64(r))
			}
			b.ReportMetric(median(vg), "vg-ms")
			b.ReportMetric(median(rgt), "rg-ms")
			b.ReportMetric(median(ratio), "x-rg")
			b.ReportMetric(slices.Min(ratio), "x-rg-min")
			b.ReportMetric(slices.Max(ratio), "x-rg-max")
		})
	}
}

type searchBenchCase struct {
	name  string
	query string
	regex bool
	max   int  // max_results; 0 is the default (100)
	none  bool // matches nothing
}

var searchBenchCases = []searchBenchCase{
	{name: "literal/none", query: "quorble", none: true},
	{name: "literal/often", query: "vault"},
	{name: "literal/rare-1000", query: "lighthouse", max: 1000},
	{name: "fold/none", query: "(?i)quorble", regex: true, none: true},
	{name: "fold/often", query: "(?i)vault", regex: true},
	{name: "fold/rare-1000", query: "(?i)lighthouse", regex: true, max: 1000},
	{name: "regex/none", query: `\w+ quorble \d+`, regex: true, none: true},
	{name: "regex/often", query: `\w+ vault \w+ing`, regex: true},
	{name: "regex/rare-1000", query: `\w+ lighthouse \w+`, regex: true, max: 1000},
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// benchCorpus writes the benchmark vault: 10,000 notes in 100 folders,
// ~7.5 KB each, the same bytes every time.
func benchCorpus(b *testing.B) string {
	dir := b.TempDir()
	if err := writeCorpus(dir, 10_000); err != nil {
		b.Fatal(err)
	}
	return dir
}

// corpusWords are what the notes are made of: ordinary words, some of
// them the queries' ("vault", "zone"), none of them "quorble"; one line
// in a thousand or so has a "lighthouse" (about 900 in the vault).
var corpusWords = strings.Fields(`the a of and to in is it that for on with as was at by
	this be from or an are not have but which one all were when we there can
	your their more if about out up them some would so into has its only
	vault zone note notes folder link links draft plan meeting project review
	reading writing keeping editing moving listing searching history undo
	agent model tool call policy rule rules config audit line record session
	garden river mountain winter summer autumn spring morning evening market
	letter number paper window table kitchen station bridge harbour lantern
	2024 2025 2026 12 7 42 100 3.5 todo done later maybe soon #idea #work #home`)

func writeCorpus(dir string, n int) error {
	rng := rand.New(rand.NewPCG(18, 3))
	var body bytes.Buffer
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("notes/%02d", i%100))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		body.Reset()
		fmt.Fprintf(&body, "# Note %05d\n\ntags: #%s #%s\n\n", i, corpusWords[rng.IntN(len(corpusWords))], corpusWords[rng.IntN(len(corpusWords))])
		for body.Len() < 7500 {
			line := 0
			for line < 60+rng.IntN(40) {
				w := corpusWords[rng.IntN(len(corpusWords))]
				if line > 0 {
					body.WriteByte(' ')
					line++
				}
				body.WriteString(w)
				line += len(w)
			}
			if rng.IntN(1000) == 0 {
				body.WriteString(" the lighthouse keeper")
			}
			body.WriteByte('\n')
			if rng.IntN(8) == 0 {
				body.WriteByte('\n')
			}
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("n%05d.md", i)), body.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
