// Package vaultgen writes a made-up notes vault for benchmarks that must
// see how a cost grows with the vault: folders one to five deep, a few of
// them holding hundreds of notes and most a handful, markdown notes of
// mostly 1–8 KB (about 4 KB on average) with front matter, headings,
// [[wikilinks]] and #tags, some Cyrillic and emoji names, a few
// attachments, a .obsidian folder at the root and a few nested .git
// folders. A seed gives the same bytes every time, so two runs, or two
// machines, time the same vault. Cached keeps a vault between runs under
// os.TempDir(), since the biggest take seconds to write.
package vaultgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Stats describe a generated vault.
type Stats struct {
	Notes         int   // markdown notes, .obsidian's files not counted
	Folders       int   // the vault's folders, the root, .obsidian and .git not counted
	Attachments   int   // images and PDFs
	GitDirs       int   // nested .git folders
	Bytes         int64 // of the notes and attachments
	MaxDepth      int   // of the deepest folder, in names below the root
	LargestFolder int   // the notes of the fullest folder
}

// Streams of the seed's generator: the layout's, and each note's and
// attachment's own, so that they can be written in any order.
const (
	layoutStream     = 1 << 62
	attachmentStream = 1 << 61
)

// maxDepth is the deepest a folder is made.
const maxDepth = 5

type folder struct {
	rel      string // slash-separated; "" is the root
	depth    int
	weight   float64 // its share of the notes
	daily    bool    // its notes are named by date
	children int
	taken    map[string]bool // names in it, lower-cased
	notes    int
}

type note struct {
	rel   string
	title string
}

type attachment struct {
	rel  string
	ext  string
	size int
}

// layout is where everything goes, drawn before any file is written.
type layout struct {
	folders     []*folder
	notes       []note
	attachments []attachment
	gitDirs     []string // the folders that hold a .git
}

// Generate writes a vault of the given number of notes into dir, which
// must be missing or empty. The same notes and seed write the same bytes.
// Notes and attachments are written by several goroutines at once.
func Generate(dir string, notes int, seed uint64) (Stats, error) {
	if notes < 1 {
		return Stats{}, fmt.Errorf("vaultgen: %d notes", notes)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return Stats{}, fmt.Errorf("vaultgen: %s is not empty", dir)
	}
	l := plan(notes, seed)
	st := l.stats()
	for _, f := range l.folders {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(f.rel)), 0o755); err != nil {
			return Stats{}, err
		}
	}
	if err := writeObsidian(dir); err != nil {
		return Stats{}, err
	}
	for i, g := range l.gitDirs {
		if err := writeGit(filepath.Join(dir, filepath.FromSlash(g), ".git"), rand.New(rand.NewPCG(seed, layoutStream+1+uint64(i)))); err != nil {
			return Stats{}, err
		}
	}
	written, err := l.write(dir, seed)
	st.Bytes = written
	return st, err
}

func (l *layout) stats() Stats {
	st := Stats{Notes: len(l.notes), Folders: len(l.folders) - 1, Attachments: len(l.attachments), GitDirs: len(l.gitDirs)}
	for _, f := range l.folders {
		st.MaxDepth = max(st.MaxDepth, f.depth)
		st.LargestFolder = max(st.LargestFolder, f.notes)
	}
	return st
}

// plan draws the folders, the notes' names and folders, and where the
// attachments and .git folders go.
func plan(notes int, seed uint64) *layout {
	rng := rand.New(rand.NewPCG(seed, layoutStream))
	l := &layout{}
	root := &folder{weight: 2, taken: map[string]bool{}}
	l.folders = append(l.folders, root)
	add := func(parent *folder, name string) *folder {
		name = uniqueName(parent, name)
		f := &folder{rel: join(parent.rel, name), depth: parent.depth + 1, taken: map[string]bool{}}
		// Folder sizes of a real vault: a few hold hundreds of notes, most
		// a handful. A Pareto weight, cut off so that no folder takes more
		// than a thousand or so.
		f.weight = min(200, math.Pow(1-rng.Float64(), -1/0.8))
		parent.children++
		l.folders = append(l.folders, f)
		return f
	}
	byDepth := make([][]*folder, maxDepth+1)
	byDepth[0] = []*folder{root}
	for _, name := range topFolders {
		f := add(root, name)
		switch name {
		case "Daily":
			f.weight, f.daily = 100, true
		case "Templates":
			f.weight = 0.2
		}
		if !f.daily {
			byDepth[1] = append(byDepth[1], f)
		}
	}
	// One branch as deep as a folder goes, whatever the vault's size.
	deep := byDepth[1][2]
	for deep.depth < maxDepth {
		deep = add(deep, title(rng))
		byDepth[deep.depth] = append(byDepth[deep.depth], deep)
	}
	folders := max(16, notes/40)
	// The depth of each further folder: most are two or three deep, and
	// the root keeps few folders of its own.
	depthShare := []float64{0, 0.003, 0.37, 0.37, 0.17, 0.087}
	for len(l.folders) <= folders {
		d := pick(rng, depthShare)
		parents := byDepth[d-1]
		f := add(parents[rng.IntN(len(parents))], title(rng))
		byDepth[d] = append(byDepth[d], f)
	}
	// Attachments, in folders of their own as Obsidian keeps them: one
	// for every 250 notes, at least two, about a hundred to a folder.
	attachments := max(2, notes/250)
	var attachDirs []*folder
	for i := range max(1, attachments/100) {
		parent := root
		if i > 0 {
			at := byDepth[1+rng.IntN(3)]
			parent = at[rng.IntN(len(at))]
		}
		f := add(parent, attachmentFolders[rng.IntN(len(attachmentFolders))])
		f.weight = 0
		attachDirs = append(attachDirs, f)
	}
	for range attachments {
		f := attachDirs[rng.IntN(len(attachDirs))]
		var a attachment
		switch r := rng.IntN(20); {
		case r < 12:
			a.ext = ".png"
		case r < 16:
			a.ext = ".jpg"
		default:
			a.ext = ".pdf"
		}
		stamp := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(7 * 365 * 24 * time.Hour))))
		name := "Pasted image " + stamp.Format("20060102150405")
		if a.ext == ".pdf" {
			name = title(rng)
		}
		a.rel = join(f.rel, uniqueName(f, name+a.ext))
		a.size = 4<<10 + rng.IntN(92<<10)
		l.attachments = append(l.attachments, a)
	}
	// The notes, each to a folder by weight.
	cumulative := make([]float64, len(l.folders))
	total := 0.0
	for i, f := range l.folders {
		total += f.weight
		cumulative[i] = total
	}
	day := time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC)
	for range notes {
		i, _ := slices.BinarySearch(cumulative, rng.Float64()*total)
		f := l.folders[min(i, len(l.folders)-1)]
		name := title(rng)
		if f.daily {
			name = day.AddDate(0, 0, f.notes).Format("2006-01-02")
		}
		name = uniqueName(f, name+".md")
		f.notes++
		l.notes = append(l.notes, note{rel: join(f.rel, name), title: strings.TrimSuffix(name, ".md")})
	}
	// A few nested git repositories (a project's code, a cloned list of
	// links), at every depth in turn.
	for i := range 3 + notes/50_000 {
		at := byDepth[1+i%maxDepth]
		f := at[rng.IntN(len(at))]
		if !slices.Contains(l.gitDirs, f.rel) {
			l.gitDirs = append(l.gitDirs, f.rel)
		}
	}
	return l
}

// pick draws an index by its share.
func pick(rng *rand.Rand, shares []float64) int {
	u := rng.Float64()
	for i, s := range shares {
		if u < s {
			return i
		}
		u -= s
	}
	return len(shares) - 1
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// uniqueName is name, or name with a number, so that no two names in a
// folder differ by case alone. An extension stays last.
func uniqueName(f *folder, name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for n := 1; ; n++ {
		candidate := name
		if n > 1 {
			candidate = fmt.Sprintf("%s %d%s", base, n, ext)
		}
		if key := strings.ToLower(candidate); !f.taken[key] {
			f.taken[key] = true
			return candidate
		}
	}
}

// title is a note's or a folder's name: a few words, some Russian, a few
// with an emoji or a number.
func title(rng *rand.Rand) string {
	words := englishWords
	if rng.IntN(8) == 0 {
		words = russianWords
	}
	var b strings.Builder
	if rng.IntN(25) == 0 {
		b.WriteString(emojis[rng.IntN(len(emojis))])
		b.WriteByte(' ')
	}
	for i := range 1 + rng.IntN(4) {
		w := words[rng.IntN(len(words))]
		if i == 0 {
			w = capitalise(w)
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	if rng.IntN(15) == 0 {
		fmt.Fprintf(&b, " %d", 1+rng.IntN(2030))
	}
	return b.String()
}

func capitalise(w string) string {
	for i, r := range w {
		if i == 0 {
			return strings.ToUpper(string(r)) + w[len(string(r)):]
		}
	}
	return w
}

// write writes the notes and attachments on several goroutines, each
// from a generator of its own, and returns the bytes written.
func (l *layout) write(dir string, seed uint64) (int64, error) {
	var next atomic.Int64
	var written atomic.Int64
	var firstErr error
	var once sync.Once
	jobs := int64(len(l.notes) + len(l.attachments))
	var wg sync.WaitGroup
	// Creating files waits on the file system as much as on the CPU.
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			w := &noteWriter{titles: l.notes}
			for {
				i := next.Add(1) - 1
				if i >= jobs {
					return
				}
				var rel string
				if i < int64(len(l.notes)) {
					rel = l.notes[i].rel
					w.rng = rand.New(rand.NewPCG(seed, uint64(i)))
					w.note(l.notes[i].title)
				} else {
					a := l.attachments[i-int64(len(l.notes))]
					rel = a.rel
					w.rng = rand.New(rand.NewPCG(seed, attachmentStream+uint64(i)))
					w.attachment(a)
				}
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), w.buf, 0o644); err != nil {
					once.Do(func() { firstErr = err })
					next.Store(jobs) // the others stop too
					return
				}
				written.Add(int64(len(w.buf)))
			}
		})
	}
	wg.Wait()
	return written.Load(), firstErr
}
