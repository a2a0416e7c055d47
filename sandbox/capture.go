package sandbox

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// DefaultMaxOutput is the number of bytes kept per stream when
// Request.MaxOutput is 0.
const DefaultMaxOutput = 64 << 10

// capture keeps the first and the last bytes of a stream in fixed buffers,
// however much is written: a head that fills once, and a ring for the tail.
// Each keeps slack bytes beyond its half of the cap so that, at the end, the
// cut can be moved off a rune's middle and off a secret that straddles it;
// the cut only ever moves inwards, so the slack is always enough.
type capture struct {
	max   int // bytes kept of the stream when it is not cut
	half  int // bytes of the tail that the cap keeps; the head keeps max-half
	head  []byte
	ring  []byte // cap(ring) bytes, written circularly once head is full
	rpos  int    // next write position in ring
	rfull bool
	total int64
}

// newCapture returns a capture keeping max bytes in all, and slack extra
// bytes on each side of the cut.
func newCapture(max, slack int) *capture {
	half := max / 2
	return &capture{
		max:  max,
		half: half,
		head: make([]byte, 0, max-half+slack),
		ring: make([]byte, half+slack),
	}
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if room := cap(c.head) - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(c.ring) == 0 {
		return n, nil
	}
	if len(p) >= len(c.ring) {
		copy(c.ring, p[len(p)-len(c.ring):])
		c.rpos, c.rfull = 0, true
		return n, nil
	}
	k := copy(c.ring[c.rpos:], p)
	if k < len(p) {
		copy(c.ring, p[k:])
		c.rfull = true
	}
	c.rpos = (c.rpos + len(p)) % len(c.ring)
	if c.rpos == 0 && len(p) > 0 {
		c.rfull = true
	}
	return n, nil
}

// tail returns the ring's bytes in stream order.
func (c *capture) tail() []byte {
	if !c.rfull {
		return c.ring[:c.rpos]
	}
	out := make([]byte, 0, len(c.ring))
	out = append(out, c.ring[c.rpos:]...)
	return append(out, c.ring[:c.rpos]...)
}

// cutNotice is put where the middle of a stream was cut.
func cutNotice(n int64) string { return fmt.Sprintf("\n[… %d bytes cut …]\n", n) }

// text returns what is kept of the stream, masked, and how many bytes were
// cut from its middle.
func (c *capture) text(secrets []Secret) (string, int64) {
	tail := c.tail()
	if c.total <= int64(c.max) {
		return Mask(string(c.head)+string(tail), secrets), 0
	}
	// Two windows on the stream: the head at offset 0 and the tail ending
	// at total. When nothing was lost between them they are one.
	hv, tv := window{c.head, 0}, window{tail, c.total - int64(len(tail))}
	if c.total == int64(len(c.head)+len(tail)) {
		all := window{append(append([]byte(nil), c.head...), tail...), 0}
		hv, tv = all, all
	}
	hcut := int64(c.max - c.half)
	tcut := c.total - int64(c.half)
	hcut = hv.runeStartBack(hcut)
	tcut = tv.runeStartFwd(tcut)
	for moved := true; moved; {
		moved = false
		if p, _ := hv.straddle(hcut, secrets); p >= 0 {
			hcut, moved = p, true
		}
	}
	for moved := true; moved; {
		moved = false
		if _, e := tv.straddle(tcut, secrets); e >= 0 {
			tcut, moved = e, true
		}
	}
	h := hv.slice(0, hcut)
	t := tv.slice(tcut, c.total)
	return Mask(string(h), secrets) + cutNotice(tcut-hcut) + Mask(string(t), secrets), tcut - hcut
}

// window is a stretch of a stream: data starts at stream offset off.
type window struct {
	data []byte
	off  int64
}

func (w window) has(i int64) bool { return i >= w.off && i < w.off+int64(len(w.data)) }

func (w window) at(i int64) byte { return w.data[i-w.off] }

func (w window) slice(from, to int64) []byte {
	from = max(from, w.off)
	to = min(to, w.off+int64(len(w.data)))
	if from >= to {
		return nil
	}
	return w.data[from-w.off : to-w.off]
}

// runeStartBack moves a cut that would split a rune back to its first byte.
func (w window) runeStartBack(i int64) int64 {
	for k := 0; k < utf8.UTFMax-1 && w.has(i) && i > w.off && !utf8.RuneStart(w.at(i)); k++ {
		i--
	}
	return i
}

// runeStartFwd moves a cut that would split a rune forward past it.
func (w window) runeStartFwd(i int64) int64 {
	for k := 0; k < utf8.UTFMax-1 && w.has(i) && !utf8.RuneStart(w.at(i)); k++ {
		i++
	}
	return i
}

// straddle returns the earliest start and the latest end of the secret
// occurrences that begin before cut and end after it, or -1, -1.
func (w window) straddle(cut int64, secrets []Secret) (start, end int64) {
	start, end = -1, -1
	for _, s := range secrets {
		if len(s.Value) < 2 {
			continue
		}
		n := int64(len(s.Value))
		seg := w.slice(cut-n+1, cut+n-1)
		base := max(cut-n+1, w.off)
		for j := 0; ; {
			k := bytes.Index(seg[j:], []byte(s.Value))
			if k < 0 {
				break
			}
			if p := base + int64(j+k); p < cut && p+n > cut {
				if start < 0 || p < start {
					start = p
				}
				end = max(end, p+n)
			}
			j += k + 1
		}
	}
	return start, end
}
