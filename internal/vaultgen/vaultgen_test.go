package vaultgen

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// digest hashes every name and byte under dir, in walk order.
func digest(t *testing.T, dir string) [32]byte {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Write([]byte(rel + "\x00"))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func TestSameSeedSameBytes(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	stA, err := Generate(a, 600, 7)
	if err != nil {
		t.Fatal(err)
	}
	stB, err := Generate(b, 600, 7)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(c, 600, 8); err != nil {
		t.Fatal(err)
	}
	if stA != stB || digest(t, a) != digest(t, b) {
		t.Errorf("seed 7 twice: %+v and %+v, or different bytes", stA, stB)
	}
	if digest(t, a) == digest(t, c) {
		t.Error("seeds 7 and 8 wrote the same vault")
	}
	if _, err := Generate(a, 600, 7); err == nil {
		t.Error("Generate wrote into a folder that was not empty")
	}
}

// TestVaultLooksReal checks what the benchmarks count on: the stats are
// what is on disk, folders one to five deep, notes of a few KB with
// links, non-ASCII names, .obsidian at the root and nested .git folders.
func TestVaultLooksReal(t *testing.T) {
	dir := t.TempDir()
	st, err := Generate(dir, 2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got Stats
	var noteBytes int64
	var linked, nonASCII int
	perFolder := map[string]int{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case d.Name() == ".git":
			got.GitDirs++
			if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
				t.Errorf("%s has no HEAD", rel)
			}
			return fs.SkipDir
		case rel == ".obsidian":
			return fs.SkipDir
		case d.IsDir():
			got.Folders++
			got.MaxDepth = max(got.MaxDepth, strings.Count(rel, "/")+1)
		case strings.HasSuffix(rel, ".md"):
			got.Notes++
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			noteBytes += int64(len(b))
			got.Bytes += int64(len(b))
			if strings.Contains(string(b), "[[") {
				linked++
			}
			perFolder[filepath.Dir(rel)]++
		default:
			got.Attachments++
			info, err := d.Info()
			if err != nil {
				return err
			}
			got.Bytes += info.Size()
		}
		if !isASCII(d.Name()) {
			nonASCII++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range perFolder {
		got.LargestFolder = max(got.LargestFolder, n)
	}
	if got != st {
		t.Errorf("on disk %+v, Generate said %+v", got, st)
	}
	if st.MaxDepth != maxDepth || st.GitDirs < 3 || st.Attachments < 2 {
		t.Errorf("%+v: want folders %d deep, 3 .git folders, attachments", st, maxDepth)
	}
	if avg := noteBytes / int64(st.Notes); avg < 3000 || avg > 5000 {
		t.Errorf("notes of %d bytes on average, want about 4 KB", avg)
	}
	if linked < st.Notes/2 || nonASCII < 20 {
		t.Errorf("%d notes with a link, %d non-ASCII names", linked, nonASCII)
	}
	if _, err := os.Stat(filepath.Join(dir, ".obsidian/app.json")); err != nil {
		t.Error(err)
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func TestCachedOnce(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	vault, st, err := Cached(300, 3)
	if err != nil {
		t.Fatal(err)
	}
	// A file of its own in the kept vault: gone if it were generated again.
	mark := filepath.Join(vault, "kept.md")
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	again, st2, err := Cached(300, 3)
	if err != nil || again != vault || st2 != st {
		t.Fatalf("second Cached: %s %+v %v; first %s %+v", again, st2, err, vault, st)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Error("the kept vault was generated again")
	}
	// Without its marker, it is.
	if err := os.Remove(filepath.Join(CacheDir(300, 3), "stats.json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Cached(300, 3); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("a vault without its marker was kept")
	}
}

// BenchmarkGenerate times the writing of a vault of VAULTGEN_NOTES notes
// (20,000 unless set) into a fresh folder, reporting notes/s and MB/s.
//
//	VAULTGEN_NOTES=200000 go test -run '^$' -bench Generate -benchtime 1x ./internal/vaultgen
func BenchmarkGenerate(b *testing.B) {
	notes := 20_000
	if s := os.Getenv("VAULTGEN_NOTES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("VAULTGEN_NOTES=%q", s)
		}
		notes = n
	}
	var st Stats
	var elapsed time.Duration
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "vault")
		start := time.Now()
		var err error
		if st, err = Generate(dir, notes, 1); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		b.StopTimer()
		os.RemoveAll(dir) // not timed: only one vault on disk at a time
		b.StartTimer()
	}
	b.ReportMetric(float64(notes*b.N)/elapsed.Seconds(), "notes/s")
	b.ReportMetric(float64(st.Bytes*int64(b.N))/1e6/elapsed.Seconds(), "MB/s")
	b.Logf("%+v", st)
}
