package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Pruned is what a GC removed.
type Pruned struct {
	Calls int   // calls whose entries went
	Blobs int   // bodies no entry named any more
	Bytes int64 // their size
}

// GC prunes the store to its bounds: calls older than Keep, then the
// oldest calls while the bodies kept exceed MaxSize, then every body no
// remaining entry names. It holds the store's lock alone, so no call
// being recorded loses a body it has just kept. It seals the log first,
// then rewrites only the packs that hold something pruned.
func (s *Store) GC(now time.Time) (Pruned, error) {
	var p Pruned
	err := s.exclusive(func() error {
		if err := s.seal(); err != nil {
			return err
		}
		all, err := s.calls()
		if err != nil {
			return err
		}
		packs, err := s.packs()
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(all))
		for id := range all {
			ids = append(ids, id)
		}
		sort.Strings(ids)

		// where each body lies and how big it is: a pack's span, or a blob file
		sizes := map[string]int64{}
		for _, pk := range packs {
			for sum, sp := range pk.Bodies {
				sizes[sum] = sp.Len
			}
		}
		blobNames, err := readNames(filepath.Join(s.dir, "blobs"))
		if err != nil {
			return err
		}
		for _, n := range blobNames {
			if fi, err := os.Stat(s.blobPath(n)); err == nil {
				sizes[n] = fi.Size()
			}
		}

		refs := map[string]int{}
		calls := make([][]string, len(ids)) // each call's bodies
		newest := make([]time.Time, len(ids))
		for i, id := range ids {
			for _, e := range all[id] {
				calls[i] = append(calls[i], e.Before.blobs()...)
				calls[i] = append(calls[i], e.After.blobs()...)
				if e.Intended != nil { // what RollForward may still need
					calls[i] = append(calls[i], e.Intended.blobs()...)
				}
				if e.Coming != "" { // what the change's after-state will name
					calls[i] = append(calls[i], e.Coming)
				}
				if e.Time.After(newest[i]) {
					newest[i] = e.Time
				}
			}
			for _, b := range calls[i] {
				refs[b]++
			}
		}
		var total int64
		for sum, n := range sizes {
			if refs[sum] > 0 {
				total += n
			}
		}
		pruned := map[string]bool{}
		cutoff := now.Add(-s.opt.Keep)
		for i, id := range ids {
			if !newest[i].Before(cutoff) && total <= s.opt.MaxSize {
				break // ids are oldest first: the rest are newer still
			}
			pruned[id] = true
			p.Calls++
			for _, b := range calls[i] {
				if refs[b]--; refs[b] == 0 {
					total -= sizes[b]
				}
			}
			if err := os.Remove(s.entryPath(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		for _, n := range blobNames {
			if refs[n] > 0 {
				continue
			}
			if err := os.Remove(s.blobPath(n)); err == nil {
				p.Blobs++
				p.Bytes += sizes[n]
			}
		}
		for _, pk := range packs {
			n, bytes, err := s.prunePack(pk, pruned, refs)
			if err != nil {
				return err
			}
			p.Blobs += n
			p.Bytes += bytes
		}
		return nil
	})
	return p, err
}

// prunePack rewrites a pack without the pruned calls and the bodies no
// call names, or removes it when nothing in it is left. The new pack is
// in place, synced, before the old one goes. It returns the bodies it
// dropped and their bytes.
func (s *Store) prunePack(pk *packIndex, pruned map[string]bool, refs map[string]int) (int, int64, error) {
	keep := packIndex{Calls: map[string][]Entry{}, Bodies: map[string]span{}}
	dirty := false
	for id, es := range pk.Calls {
		if pruned[id] {
			dirty = true
			continue
		}
		keep.Calls[id] = es
	}
	var dropped int
	var droppedBytes int64
	var data bytes.Buffer
	for sum, sp := range pk.Bodies {
		if refs[sum] == 0 {
			dirty = true
			dropped++
			droppedBytes += sp.Len
			continue
		}
		body, err := s.readPackBody(pk.name, sp, sum)
		if err != nil {
			return 0, 0, err
		}
		keep.Bodies[sum] = span{Off: int64(data.Len()), Len: sp.Len}
		data.Write(body)
	}
	if !dirty {
		return 0, 0, nil
	}
	if len(keep.Calls) > 0 || len(keep.Bodies) > 0 {
		// the same age as the pack it replaces, so the order of packs holds
		name := pk.name + "-" + randomHex()[:4]
		if err := s.placePack(name, &keep, data.Bytes()); err != nil {
			return 0, 0, err
		}
	}
	if err := os.Remove(s.packPath(pk.name, ".idx")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, err
	}
	os.Remove(s.packPath(pk.name, ".pack"))
	return dropped, droppedBytes, nil
}
