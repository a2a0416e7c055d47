package vaultgen

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"time"
)

// noteWriter makes one file's bytes at a time in buf, from rng.
type noteWriter struct {
	rng    *rand.Rand
	buf    []byte
	titles []note // what a [[wikilink]] may name
}

// Note sizes are drawn log-normal around medianNote, none under 300 bytes
// or over 64 KB; a note ends with the block that reaches its size, so as
// written the median is about 3.5 KB, the mean 4.1 KB, and 92% are
// between 1 and 8 KB.
const (
	medianNote = 3300
	noteSpread = 0.6
	minNote    = 300
	maxNote    = 64 << 10
)

func (w *noteWriter) note(name string) {
	w.buf = w.buf[:0]
	size := int(medianNote * math.Exp(noteSpread*w.rng.NormFloat64()))
	size = min(max(size, minNote), maxNote)
	if w.rng.IntN(5) < 2 {
		w.frontMatter()
	}
	if w.rng.IntN(5) < 4 {
		w.buf = append(w.buf, "# "...)
		w.buf = append(w.buf, name...)
		w.buf = append(w.buf, "\n\n"...)
	}
	for len(w.buf) < size {
		switch r := w.rng.IntN(100); {
		case r < 55:
			w.paragraph()
		case r < 67:
			w.buf = append(w.buf, "## "...)
			w.buf = append(w.buf, title(w.rng)...)
			w.buf = append(w.buf, "\n\n"...)
		case r < 79:
			w.list("- ")
		case r < 87:
			w.list("- [ ] ")
		case r < 93:
			w.buf = append(w.buf, "> "...)
			w.paragraph()
		case r < 96:
			w.code()
		default:
			w.links()
		}
	}
}

func (w *noteWriter) frontMatter() {
	day := time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, w.rng.IntN(4000))
	w.buf = append(w.buf, "---\ncreated: "...)
	w.buf = day.AppendFormat(w.buf, "2006-01-02")
	w.buf = append(w.buf, "\ntags:\n"...)
	for range 1 + w.rng.IntN(3) {
		w.buf = append(w.buf, "  - "...)
		w.buf = append(w.buf, tagWords[w.rng.IntN(len(tagWords))]...)
		w.buf = append(w.buf, '\n')
	}
	if w.rng.IntN(4) == 0 {
		w.buf = append(w.buf, "aliases: ["...)
		w.buf = append(w.buf, title(w.rng)...)
		w.buf = append(w.buf, "]\n"...)
	}
	w.buf = append(w.buf, "---\n\n"...)
}

// sentence is a few words, some of them links or tags.
func (w *noteWriter) sentence(words []string) {
	for i := range 5 + w.rng.IntN(14) {
		if i > 0 {
			w.buf = append(w.buf, ' ')
		}
		switch r := w.rng.IntN(100); {
		case r < 4:
			w.link()
		case r < 6:
			w.buf = append(w.buf, '#')
			w.buf = append(w.buf, tagWords[w.rng.IntN(len(tagWords))]...)
		default:
			word := words[w.rng.IntN(len(words))]
			if i == 0 {
				word = capitalise(word)
			}
			w.buf = append(w.buf, word...)
		}
	}
	w.buf = append(w.buf, '.')
}

func (w *noteWriter) paragraph() {
	words := englishWords
	if w.rng.IntN(7) == 0 {
		words = russianWords
	}
	for i := range 1 + w.rng.IntN(5) {
		if i > 0 {
			w.buf = append(w.buf, ' ')
		}
		w.sentence(words)
	}
	w.buf = append(w.buf, "\n\n"...)
}

func (w *noteWriter) link() {
	t := w.titles[w.rng.IntN(len(w.titles))].title
	w.buf = append(w.buf, "[["...)
	w.buf = append(w.buf, t...)
	if w.rng.IntN(6) == 0 {
		w.buf = append(w.buf, '|')
		w.buf = append(w.buf, englishWords[w.rng.IntN(len(englishWords))]...)
	}
	w.buf = append(w.buf, "]]"...)
}

func (w *noteWriter) list(marker string) {
	for range 2 + w.rng.IntN(6) {
		w.buf = append(w.buf, marker...)
		w.sentence(englishWords)
		w.buf = append(w.buf, '\n')
	}
	w.buf = append(w.buf, '\n')
}

func (w *noteWriter) links() {
	for range 2 + w.rng.IntN(5) {
		w.buf = append(w.buf, "- "...)
		w.link()
		w.buf = append(w.buf, '\n')
	}
	w.buf = append(w.buf, '\n')
}

func (w *noteWriter) code() {
	w.buf = append(w.buf, "```"...)
	w.buf = append(w.buf, langs[w.rng.IntN(len(langs))]...)
	w.buf = append(w.buf, '\n')
	for range 2 + w.rng.IntN(8) {
		for range 1 + w.rng.IntN(3) {
			w.buf = append(w.buf, "    "...)
		}
		for i := range 2 + w.rng.IntN(5) {
			if i > 0 {
				w.buf = append(w.buf, ' ')
			}
			w.buf = append(w.buf, englishWords[w.rng.IntN(len(englishWords))]...)
		}
		w.buf = append(w.buf, '\n')
	}
	w.buf = append(w.buf, "```\n\n"...)
}

// attachment is the format's magic bytes and noise: what a search must
// read past, or recognise as binary.
func (w *noteWriter) attachment(a attachment) {
	w.buf = w.buf[:0]
	switch a.ext {
	case ".png":
		w.buf = append(w.buf, "\x89PNG\r\n\x1a\n"...)
	case ".jpg":
		w.buf = append(w.buf, "\xff\xd8\xff\xe0\x00\x10JFIF\x00"...)
	default:
		w.buf = append(w.buf, "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"...)
	}
	for len(w.buf) < a.size {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, w.rng.Uint64())
	}
	w.buf = w.buf[:a.size]
}
